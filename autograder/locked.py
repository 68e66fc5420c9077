"""Locked known-answer cases: students learn pass or fail, never the answer.

A course lists, per exercise, a few fixed calls into the exercise's module (the file named by
``delivery.locked`` in ``course.yaml``)::

    ex3_wordpiece:
      - name: hug, pug and bun
        calls:
          - train_wordpiece("hug hugs pug pun bun", 6)
          - wordpiece_score(3, 5, 7)
    ex2_special_tokens:
      - name: a trained tokenizer
        object: SpecialTokenizer()          # one object; setup calls, then the calls
        setup: [train("the cat sat on the mat", 12)]
        calls: [encode("the hat"), vocab_size]

Arguments are Python literals (tuples, bytes, sets and dicts included) or attributes of the
course's support modules (``encoders.utf8_bytes``). A call may be wrapped in one builtin
(``dict(get_pair_counts([1, 2, 1]))``), applied where the result lives.

A case's *output* is the list of its calls' results. When the instructor builds a release,
:func:`seal` runs the reference on every case and keeps only a random salt and
``sha256(salt + canonical(output))``; a case whose output is too small to hide (one bool, a
small number, a short string) is refused, so that nobody can read an answer back by hashing
every small value. :func:`check_locked` runs the student's code on the same cases in the
sandbox and compares hashes. :func:`canonical` is the codec's encoding made insensitive to
what ``autograder.suite.expect_equal`` ignores: named tuples equal tuples, dict and set order
do not matter, floats count to 10 significant digits, and an object that is not plain data
stands for "some object".
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import json
import math
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from . import codec
from .config import Course, CourseConfigError
from .errors import GraderError, SandboxFailure, StudentError
from .plugin import PropertyResult, on_path, open_session
from .proxy import MissingName

MIN_BITS = 64  # the least a sealed output must hold, by :func:`guess_bits`
WRAPPERS = frozenset({"dict", "list", "tuple", "set", "sorted", "len", "str"})
FLOAT_DIGITS = 10


class _Entry(BaseModel):
    """One case as written in the course's file (``salt`` and ``sha256`` only once sealed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    object: str | None = None
    setup: list[str] = []
    calls: list[str]
    salt: str | None = None
    sha256: str | None = None


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
    entry: _Entry
    target: Step | None
    setup: tuple[Step, ...]
    calls: tuple[Step, ...]

    @property
    def name(self) -> str:
        return self.entry.name

    def describe(self) -> str:
        """The calls as a student can replay them."""
        if self.target is None:
            return "\n".join(step.text for step in self.calls)
        lines = [f"obj = {self.target.text}", *(f"obj.{s.text}" for s in self.setup)]
        return "\n".join(lines + [f"obj.{s.text}  # checked" for s in self.calls])


# --- reading the cases --------------------------------------------------------------------------


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
                cases.append(_case(module, _Entry.model_validate(item), support))
            except ValidationError as error:
                problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
                raise CourseConfigError(f"{where}: {problems}") from None
            except (SyntaxError, ValueError) as error:
                raise CourseConfigError(f"{where}: {error}") from None
    return cases


def _case(module: str, entry: _Entry, support: set[str]) -> Case:
    if entry.setup and entry.object is None:
        raise ValueError("setup calls need an object")
    if not entry.calls:
        raise ValueError("a case needs at least one call")
    if (entry.salt is None) != (entry.sha256 is None):
        raise ValueError("a sealed case has both salt and sha256")
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
    keywords = tuple((k.arg, k.value) for k in node.keywords)
    step = Step(text.strip(), node.func.id, True, tuple(node.args), keywords, wrapper)
    for argument in [*step.args, *(value for _, value in step.kwargs)]:
        _value(argument, lambda name: _known(name, support, text))
    return step


def _known(name: str, support: set[str], text: str) -> Any:
    if name not in support:
        raise ValueError(f"{text!r}: {name} is not a support module of the course ({', '.join(sorted(support))})")
    return _Any()


class _Any:
    """Stands for any attribute of a support module while the cases are checked."""

    def __getattr__(self, name: str) -> "_Any":
        return self


def _value(node: ast.expr, support: Callable[[str], Any]) -> Any:
    """A literal, or ``module.attribute`` of a support module, from an argument's syntax."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _value(node.operand, support)
        if type(operand) not in (int, float):
            raise ValueError(f"a sign applies to numbers only: {ast.unparse(node)}")
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_value(item, support) for item in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_value(k, support): _value(v, support) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return getattr(support(node.value.id), node.attr)
    raise ValueError(f"not a literal or a support module's attribute: {ast.unparse(node)}")


# --- running a case -----------------------------------------------------------------------------


def run_case(case: Case, module: Any, support: Callable[[str], Any]) -> list:
    """The case's output: the results of its calls on ``module`` (the student's, through the
    sandbox, or the reference's); ``support(name)`` gives a support module or ``builtins``."""
    target = module if case.target is None else _run(case.target, module, support)
    for step in case.setup:
        _run(step, target, support)
    return [_run(step, target, support) for step in case.calls]


def _run(step: Step, target: Any, support: Callable[[str], Any]) -> Any:
    value = getattr(target, step.name)
    if step.call:
        value = value(*(_value(a, support) for a in step.args), **{k: _value(v, support) for k, v in step.kwargs})
    if step.wrapper is not None:
        value = getattr(support("builtins"), step.wrapper)(value)
    return value


# --- hashing ------------------------------------------------------------------------------------


def canonical(value: Any) -> bytes:
    """The codec's encoding of ``value``, normalised so that equal answers give equal bytes."""
    tree = _normal(codec.encode(value, lambda _obj: {"$object": None}))
    return json.dumps(tree, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _normal(node: Any) -> Any:
    if type(node) is float:
        return float(f"{node:.{FLOAT_DIGITS}g}") + 0.0 if math.isfinite(node) else node
    if type(node) is list:
        return [_normal(item) for item in node]
    if type(node) is not dict:
        return node
    (tag, body), = node.items()
    if tag == "$named":
        return {"$tuple": _normal(body[2])}
    if tag == "$dict":
        return {tag: sorted(([_normal(k), _normal(v)] for k, v in body), key=lambda pair: _key(pair[0]))}
    if tag in ("$set", "$frozenset"):
        return {tag: sorted((_normal(item) for item in body), key=_key)}
    return {tag: _normal(body)}


def _key(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"))


def digest(salt: str, value: Any) -> str:
    """``sha256(salt + canonical(value))`` in hex; ``salt`` is hex."""
    return hashlib.sha256(bytes.fromhex(salt) + canonical(value)).hexdigest()


def guess_bits(value: Any) -> float:
    """A rough count of the bits someone must guess to find ``value`` (for refusing small outputs)."""
    return _bits(_normal(codec.encode(value, lambda _obj: {"$object": None})))


def _bits(node: Any) -> float:
    if node is None or type(node) is bool:
        return 0.0 if node is None else 1.0
    if type(node) is int:
        return math.log2(abs(node) + 1) + 1
    if type(node) is float:
        return 20.0
    if type(node) is str:
        return 6.0 * len(node)
    if type(node) is list:
        return 1.0 + sum(_bits(item) for item in node)
    (tag, body), = node.items()
    if tag == "$bytes":
        return 6.0 * len(body) * 3 / 4
    if tag == "$dict":
        return 1.0 + sum(_bits(k) + _bits(v) for k, v in body)
    return 0.0 if tag == "$object" else _bits(body)


# --- sealing (instructor) and checking (student) --------------------------------------------------


def seal(course: Course) -> dict[str, list[dict]]:
    """Run the reference on every case; return the cases with a salt and their output's hash.

    Raises :class:`GraderError` naming every case whose output is too small to hide.
    """
    sealed: dict[str, list[dict]] = {}
    small = []
    support = _reference_support(course)
    with on_path(course.root):
        for case in load_cases(course):
            module = importlib.import_module(f"{course.solutions}.{case.exercise}")
            output = run_case(case, module, support)
            bits = guess_bits(output)
            if bits < MIN_BITS:
                small.append(f"{case.exercise}: {case.name!r} (about {bits:.0f} bits)")
            salt = secrets.token_hex(16)
            entry = case.entry.model_dump(exclude_defaults=True) | {"salt": salt, "sha256": digest(salt, output)}
            sealed.setdefault(case.exercise, []).append(entry)
    if small:
        raise GraderError(f"locked cases whose answers are too small to hide (under {MIN_BITS} bits); "
                          "add more calls to them: " + "; ".join(small))
    return sealed


def _reference_support(course: Course) -> Callable[[str], Any]:
    """The course's support modules (and ``builtins``) loaded here, for the reference."""
    modules = {"builtins": importlib.import_module("builtins")}
    for relative in course.sandbox.support_modules:
        path = course.path(relative)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[path.stem] = module
    return modules.__getitem__


def check_locked(course: Course, submission: Path) -> list[PropertyResult]:
    """Run every sealed case on a prepared submission in the sandbox; one result per case."""
    results = []
    for case in load_cases(course):
        if case.entry.sha256 is None:
            raise GraderError(f"locked case {case.exercise}: {case.name!r} holds no hash: build a release to seal it")
        passed, output = _check_case(course, submission, case)
        results.append(PropertyResult(exercise=case.exercise, name=f"locked case: {case.name}", points=0, score=0,
                                      passed=passed, hidden=False, output=output))
    return results


def _check_case(course: Course, submission: Path, case: Case) -> tuple[bool, str]:
    exercise = course.exercise(case.exercise)
    session = open_session(course, submission, exercise, course.limits.property_seconds)
    calls = "\n".join("    " + line for line in case.describe().splitlines())
    try:
        output = run_case(case, session.module(f"{course.package}.{case.exercise}"), session.module)
    except (StudentError, SandboxFailure, MissingName) as error:
        return False, f"Locked case {case.name!r} failed:\n\n{error}\n\nIts calls:\n{calls}"
    finally:
        session.close()
    if digest(case.entry.salt, output) == case.entry.sha256:
        return True, ""
    return False, (f"Locked case {case.name!r}: your results differ from the reference's.\n\nIts calls:\n{calls}\n\n"
                   "The expected results are locked (only a salted hash of them ships with the course), "
                   "so they are not shown; the docstrings' rules and examples decide them.")
