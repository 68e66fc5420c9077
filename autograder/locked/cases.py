"""The locked cases' language: fixed calls into an exercise's module, read from the course's file.

A course lists, per exercise, a few cases in the file ``delivery.locked`` names: each a name, an
optional object with set-up calls, and calls whose arguments are Python literals or support
modules' attributes, a call wrapped in at most one builtin. A case's *output* is the list of its
calls' results. The language, with an example: docs/authors.md, "Locked known-answer cases".
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ..config import Course, CourseConfigError
from ..i18n import _

WRAPPERS = frozenset({"dict", "list", "tuple", "set", "sorted", "len", "str"})


class SealedPart(BaseModel):
    """Some of a sealed case's calls (their indices) and the salted hash of their results."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    calls: list[int]
    sha256: str


class CaseEntry(BaseModel):
    """One case as written in the course's file (``salt``, ``sha256`` and ``parts`` only once sealed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    object: str | None = None
    setup: list[str] = []
    calls: list[str]
    salt: str | None = None
    sha256: str | None = None
    parts: list[SealedPart] = []


@dataclass(frozen=True)
class Step:
    """``name`` read from the target, called with literal arguments when ``call``, then
    passed to the builtin ``wrapper`` when there is one."""

    text: str
    name: str
    call: bool
    args: tuple[ast.expr, ...]
    kwargs: tuple[tuple[str, ast.expr], ...]
    wrapper: str | None


@dataclass(frozen=True)
class Case:
    """One locked case of one exercise."""

    exercise: str
    entry: CaseEntry
    target: Step | None
    setup: tuple[Step, ...]
    calls: tuple[Step, ...]

    @property
    def name(self) -> str:
        return self.entry.name

    def describe(self, calls: Sequence[int] | None = None) -> str:
        """The calls (those at the indices ``calls``, or all) as a student can replay them."""
        chosen = [step for index, step in enumerate(self.calls) if calls is None or index in calls]
        if self.target is None:
            return "\n".join(step.text for step in chosen)
        lines = [f"obj = {self.target.text}", *(f"obj.{s.text}" for s in self.setup)]
        return "\n".join(lines + [f"obj.{s.text}  # " + _("checked") for s in chosen])  # a Python comment

    def support(self) -> list[tuple[str, str]]:
        """The attributes of support modules its arguments name: ``(module, attribute)``, in order."""
        found = []
        for step in [*([self.target] if self.target else []), *self.setup, *self.calls]:
            for argument in [*step.args, *(value for _name, value in step.kwargs)]:
                found += [(node.value.id, node.attr) for node in ast.walk(argument)
                          if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)]
        return list(dict.fromkeys(found))


def load_cases(course: Course) -> list[Case]:
    """The course's locked cases, checked; none when the course names no file."""
    if course.delivery.locked is None:
        return []
    path = course.path(course.delivery.locked)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise CourseConfigError(f"{path}: cannot be read ({error})") from None
    if not isinstance(raw, dict):
        raise CourseConfigError(f"{path}: the top level must map exercise modules to lists of cases")
    modules = {e.module for e in course.exercises}
    support = {Path(m).stem for m in course.sandbox.support_modules}
    cases = []
    for module, entries in raw.items():
        if module not in modules:
            raise CourseConfigError(f"{path}: {module}: not an exercise of the course")
        for index, item in enumerate(entries or []):
            where = f"{path}: {module}[{index}]"
            try:
                cases.append(_case(module, CaseEntry.model_validate(item), support))
            except ValidationError as error:
                problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
                raise CourseConfigError(f"{where}: {problems}") from None
            except (SyntaxError, ValueError) as error:
                raise CourseConfigError(f"{where}: {error}") from None
    return cases


def _case(module: str, entry: CaseEntry, support: set[str]) -> Case:
    if entry.setup and entry.object is None:
        raise ValueError("setup calls need an object")
    if not entry.calls:
        raise ValueError("a case needs at least one call")
    if (entry.salt is None) != (entry.sha256 is None):
        raise ValueError("a sealed case has both salt and sha256")
    if entry.parts and sorted(i for part in entry.parts for i in part.calls) != list(range(len(entry.calls))):
        raise ValueError("parts must hold every call once")
    target = None if entry.object is None else _step(entry.object, support)
    if target is not None and (not target.call or target.wrapper):
        raise ValueError(f"object: {entry.object!r} should be a call such as Name()")
    return Case(module, entry, target, tuple(_step(s, support) for s in entry.setup),
                tuple(_step(s, support) for s in entry.calls))


def _step(text: str, support: set[str]) -> Step:
    """Parse ``name``, ``name(literals)`` or ``builtin(name(literals))``."""
    node = ast.parse(text.strip(), mode="eval").body
    wrapper = None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WRAPPERS
            and len(node.args) == 1 and not node.keywords):
        wrapper, node = node.func.id, node.args[0]
    if isinstance(node, ast.Name):
        return Step(text.strip(), node.id, False, (), (), wrapper)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise ValueError(f"{text!r}: expected name, name(arguments) or builtin(name(arguments))")
    if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        raise ValueError(f"{text!r}: no * or ** arguments")
    keywords = tuple((k.arg, k.value) for k in node.keywords if k.arg is not None)  # none is None: checked above
    step = Step(text.strip(), node.func.id, True, tuple(node.args), keywords, wrapper)
    for argument in [*step.args, *(value for _name, value in step.kwargs)]:
        literal(argument, lambda name: _known(name, support, text))
    return step


def _known(name: str, support: set[str], text: str) -> Any:
    if name not in support:
        raise ValueError(f"{text!r}: {name} is not a support module of the course ({', '.join(sorted(support))})")
    return AnySupport()


class AnySupport:
    """Stands for any attribute of a support module while the cases are checked."""

    def __getattr__(self, name: str) -> AnySupport:
        return self


def literal(node: ast.expr, support: Callable[[str], Any]) -> Any:
    """A literal, or ``module.attribute`` of a support module, from an argument's syntax."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = literal(node.operand, support)
        if type(operand) not in (int, float):
            raise ValueError(f"a sign applies to numbers only: {ast.unparse(node)}")
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [literal(item, support) for item in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        pairs = zip(node.keys, node.values, strict=True)
        return {literal(k, support): literal(v, support) for k, v in pairs if k is not None}  # none is, checked above
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return getattr(support(node.value.id), node.attr)
    raise ValueError(f"not a literal or a support module's attribute: {ast.unparse(node)}")
