"""A stub's docstring examples, run on the student's code: the ones a property claims.

A suite marks a property with the ``>>>`` examples of its exercise's stub that it checks
(``@pytest.mark.examples("viterbi_segment('ab', logprobs)", using=..., given=..., check=...)``),
and the engine runs each on the student's code, through the sandbox, before the property's own
checks; the answer must be the docstring's, as :func:`autograder.equality.same` compares, dicts
in the docstring's order, floats within a relative 1e-9. What ``using``, ``given`` and ``check``
do: docs/authors.md, "Suites"; ``tests/engine/test_docstring_examples.py`` checks that every example is
claimed and holds on the reference.
"""

from __future__ import annotations

import ast
import builtins
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import Course
from ..equality import same
from ..errors import GraderError, StudentError
from ..i18n import _
from ..signatures import Example, docstring_examples, normalized, stub_path
from ..suite import show, together
from ..syntax import binds
from .session import MissingName

REL_TOLERANCE = 1e-9


def claimed(course: Course, exercise: str, sources: tuple[str, ...]) -> list[Example]:
    """The examples of ``exercise``'s stub that ``sources`` name; a :class:`GraderError` names a
    source that is no example of it (a suite gone stale)."""
    examples = docstring_examples(course, exercise)
    found = []
    for source in sources:
        matching = [example for example in examples if example.source == normalized(source)]
        if not matching:
            raise GraderError(f"{exercise}: the suite claims the docstring example {source!r}, which its stub "
                              "does not have")
        found += matching
    return found


@dataclass(frozen=True)
class Claim:
    """What a property's ``examples`` marker says: the examples, and how to run and judge them."""

    sources: tuple[str, ...]
    check: Callable[[Any, dict], None] | None = None
    using: Mapping[str, str] = field(default_factory=dict)
    given: Mapping[str, Any] = field(default_factory=dict)


def run_examples(course: Course, exercise: str, claim: Claim, student: Any, support: Callable[[str], Any]) -> None:
    """Run the claimed examples on ``student`` (the module in the sandbox; ``support(name)``, a
    support module there); an AssertionError says the first whose answer is not the docstring's."""
    stub_names = _defined(stub_path(course, exercise).read_text(encoding="utf-8"))
    bound = {**_supported(support, claim.using), **claim.given}
    together([functools.partial(_run_example, example, claim, _names(example, stub_names, student) | bound, bound)
              for example in claimed(course, exercise, claim.sources)])


def _run_example(example: Example, claim: Claim, names: dict[str, Any], bound: Mapping[str, Any]) -> None:
    """Run one example in ``names``: the statements before it, then it, and judge its answer.

    The docstring's own code, run on the student's answers, may fail where the reference's answers
    would not (``steps[0]`` of an empty list): that fails the example, as a wrong answer does. The
    student's code raising, the sandbox stopping it and a failed check pass through unchanged."""
    printed, expression = _printed(example.source)
    try:
        for statement in example.before:
            if not statement.checked and not (_assigned(statement.source) & set(bound)):
                exec(compile(statement.source, "<docstring>", "exec"), names)  # noqa: S102 - the course's own text
        answer = eval(compile(expression, "<docstring>", "eval"), names)  # noqa: S307 - the course's own text
        if claim.check is not None:
            claim.check(answer, {k: v for k, v in names.items() if k != "__builtins__"})
            return
    except (AssertionError, StudentError, MissingName):
        raise
    except Exception as error:  # noqa: BLE001 - any error of the docstring's code on these answers
        raise AssertionError(_("the docstring's example could not run on your answers:\n{session}\n{error}: {message}")
                             .format(session=_session(example), error=type(error).__name__, message=error)) from error
    if not _holds(answer, example.want, printed):
        raise AssertionError(_("the docstring's example does not hold:\n{session}\nexpected {want}, got {got}")
                             .format(session=_session(example), want=example.want.strip(),
                                     got=str(answer) if printed else show(answer)))


def _session(example: Example) -> str:
    return "\n".join(f"    >>> {step.source}" for step in (*[s for s in example.before if not s.checked], example))


def _defined(source: str) -> set[str]:
    """The names a stub defines at its top level: its functions, classes and constants (not what
    it imports)."""
    return {name for node in ast.parse(source).body if not isinstance(node, (ast.Import, ast.ImportFrom))
            for name in binds(node)}


def _assigned(source: str) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Store)}


def _names(example: Example, stub_names: set[str], student: Any) -> dict[str, Any]:
    """An example's globals: the stub's names its docstring's session uses, as the student's objects
    (a name it does not use is not looked up: a submission may lack it)."""
    used = {node.id for step in (*example.before, example) for node in ast.walk(ast.parse(step.source))
            if isinstance(node, ast.Name)}
    names: dict[str, Any] = {"__builtins__": builtins}
    return names | {name: getattr(student, name) for name in sorted(used & stub_names)}


def _supported(support: Callable[[str], Any], using: Mapping[str, str]) -> dict[str, Any]:
    """``using``'s names: each a support module's attribute (``encoders.utf8_bytes``) in the sandbox."""
    found = {}
    for name, where in using.items():
        module, _dot, attribute = where.partition(".")
        found[name] = getattr(support(module), attribute)
    return found


def _printed(source: str) -> tuple[bool, str]:
    """Whether the example prints its answer (``print(x)``), and the expression of the answer."""
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print" \
            and len(node.args) == 1 and not node.keywords:
        return True, ast.unparse(node.args[0])
    return False, source


def _holds(answer: Any, want: str, printed: bool) -> bool:
    if printed:
        return isinstance(answer, str) and answer.rstrip("\n") == want.rstrip("\n")
    try:
        expected = shown_value(ast.parse(want.strip(), mode="eval").body)
    except (SyntaxError, ValueError):
        return repr(answer) == want.strip()
    return agrees(answer, expected)


def shown_value(node: ast.expr) -> Any:
    """The value a docstring shows: a literal, or ``Name(field=value, ...)``, a named tuple's
    repr, as the tuple of its values."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return tuple([*(shown_value(a) for a in node.args), *(shown_value(k.value) for k in node.keywords)])
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [shown_value(item) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {shown_value(k): shown_value(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    return ast.literal_eval(node)


def agrees(answer: Any, expected: Any) -> bool:
    """:func:`same`, dicts in the same order too, floats within :data:`REL_TOLERANCE`."""
    if type(answer) is float and type(expected) is float:
        return math.isclose(answer, expected, rel_tol=REL_TOLERANCE) or same(answer, expected)
    if isinstance(answer, tuple) and isinstance(expected, tuple) or type(answer) is type(expected) is list:
        return len(answer) == len(expected) and all(agrees(a, e) for a, e in zip(answer, expected, strict=True))
    if type(answer) is type(expected) is dict:
        return list(answer) == list(expected) and same(list(answer), list(expected)) \
            and all(agrees(answer[key], expected[key]) for key in expected)
    return same(answer, expected)
