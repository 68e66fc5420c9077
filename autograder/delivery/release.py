"""The student release: the folder students receive, with no solution code and no hidden property.

``python -m autograder release --out DIR`` writes the package, the engine and
``delivery.include``; each suite with only its public, reference-free properties; the locked
cases, sealed (:func:`autograder.locked.seal.seal`); ``course.yaml`` without ``solutions`` and
``samples``; ``stubs/``, the stubs as shipped, which ``check`` reads; and a README from the
course text ``release_readme``. All of it in the course's ``language``
(:mod:`autograder.translation`). What it holds and why: docs/release.md, "1. Make the release".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypeGuard

import yaml

from .. import STUDENT_COMMAND, VENV_PYTHON, suite_texts
from ..config import Course, load_course
from ..errors import GraderError
from ..locked.seal import seal
from ..syntax import binds, imported_as
from ..translation import localize, markdown, points_text, title
from .shipping import (
    ENGINE_DIR,
    built_in_place,
    course_text,
    course_yaml,
    fill,
    lock_files,
    ship,
    ship_engine,
    template,
)

HIDDEN_MARK = "pytest.mark.hidden"
REFERENCE_FIXTURE = "reference"


def build_release(course: Course, out: Path) -> list[str]:
    """Write the student release into the empty or new folder ``out`` (built beside it and moved
    into place); return the names of the properties left out of it."""
    if course.is_release:
        raise GraderError("this course is already a student release (it has no solutions)")
    with built_in_place(out) as partial:
        return _write_release(course, partial)


def _write_release(course: Course, out: Path) -> list[str]:
    ship(course, _common_paths(course), out)
    ship_engine(out)
    localize(course, out)
    _keep_stubs(course, out)
    removed, kept, said = [], {}, {}
    for exercise in course.exercises:
        text, names = public_suite(course.path(exercise.suite).read_text(encoding="utf-8"))
        _write(out / exercise.suite, text)
        removed += names
        kept[exercise.module] = [node.name for node in _tests(ast.parse(text).body)]
        said[exercise.module] = suite_texts.templates(text)  # the messages its public properties may write
    prune_suite_support(course, out)
    sealed = seal(course) if course.delivery.locked is not None else {}
    if course.delivery.locked is not None:
        sealed_text = yaml.safe_dump(sealed, sort_keys=False, allow_unicode=True)
        _write(out / course.delivery.locked, LOCKED_HEADER + sealed_text)
    if course.language in course.suite_texts:
        texts = suite_texts.kept(course, kept, {module: [case["name"] for case in cases]
                                                for module, cases in sealed.items()}, said)
        _write(out / course.suite_texts[course.language], SUITE_TEXTS_HEADER
               + yaml.safe_dump(texts, sort_keys=False, allow_unicode=True, width=100))
    _write(out / "course.yaml", _release_course_yaml(course))
    _write(out / "README.md", student_readme(course))
    load_course(out / "course.yaml")
    return removed


def _keep_stubs(course: Course, out: Path) -> None:
    """A copy of each exercise's stub, as shipped, in ``stubs/``: students edit the package, and
    the check reads the graded functions' signatures and docstring examples from the stubs
    (:mod:`autograder.signatures`), which their edits must not change."""
    for exercise in course.exercises:
        _write(out / STUBS / f"{exercise.module}.py",
               (out / course.package / f"{exercise.module}.py").read_text(encoding="utf-8"))
    _write(out / STUBS / "README.md", STUBS_README)


def _common_paths(course: Course) -> list[str]:
    """What every channel ships: the package, the provided files, the support modules and
    ``delivery.include``."""
    return [course.package, *course.provided, *course.sandbox.support_modules, *course.delivery.include]


def public_suite(source: str) -> tuple[str, list[str]]:
    """The suite's source without its hidden properties and those that need the reference, and
    without the module's definitions only they reach (constants such as a hidden run's sizes
    tell its parameters); and the names of the properties left out."""
    tree = ast.parse(source)
    marks = _hidden_marks(tree)
    whole_module = any(_assigns_mark(node, "pytestmark", marks) for node in tree.body)
    dropped = [node for node in _tests(tree.body)
               if whole_module or _is_hidden(node, marks) or _needs_reference(node)]
    kept = [node for node in tree.body if node not in dropped]
    roots = set().union(*(binds(node) | _references(node) for node in kept if not binds(node) or _is_root(node)))
    return prune(source, reachable(kept, roots), dropped), [node.name for node in dropped]


def _is_root(node: ast.stmt) -> bool:
    """What pytest finds by name, not through a reference: tests, ``pytestmark``, hooks and
    autouse fixtures."""
    names = binds(node)
    return (node in _tests([node]) or bool(names & {"pytestmark"}) or any(n.startswith("pytest_") for n in names)
            or any("autouse" in ast.unparse(d) for d in getattr(node, "decorator_list", [])))


def _references(node: ast.AST) -> set[str]:
    """The names ``node`` reads, and the parameters of its functions (pytest's fixtures by name)."""
    return {n.id if isinstance(n, ast.Name) else n.arg for n in ast.walk(node) if isinstance(n, (ast.Name, ast.arg))}


def reachable(body: list[ast.stmt], roots: set[str]) -> set[str]:
    """The module-level names ``roots`` reach through the definitions of ``body``, ``roots`` included."""
    reached, frontier = set(roots), set(roots)
    while frontier:
        found = set().union(*(_references(n) for n in body if binds(n) & frontier)) - reached
        reached |= found
        frontier = found
    return reached


def prune(source: str, reached: set[str], dropped: Sequence[ast.stmt] = ()) -> str:
    """``source`` without ``dropped`` and the module-level definitions that bind no name in
    ``reached`` (with the comment lines right above them); imports keep the names reached."""
    lines = source.splitlines(keepends=True)
    for node in reversed(ast.parse(source).body):
        replacement = [] if node in dropped else _pruned(node, reached)
        if replacement is None:
            continue
        start = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        while not replacement and start > 1 and lines[start - 2].lstrip().startswith("#"):
            start -= 1
        lines[start - 1:node.end_lineno] = replacement
    text = re.sub(r"\n{4,}", "\n\n\n", "".join(_headings_kept(lines))).rstrip("\n") + "\n"
    ast.parse(text)
    return text


def _headings_kept(lines: list[str]) -> list[str]:
    """``lines`` without the headings of sections whose definitions were all removed. A heading
    is a block of comment lines at the margin with a blank line (or the end) below it; it heads
    the lines down to the next heading, and stays when code is among them."""
    kept, has_code, index = [], False, len(lines)
    while index:
        index -= 1
        if not lines[index].startswith("#"):
            kept.append(lines[index])
            has_code = has_code or bool(lines[index].strip())
            continue
        top = index
        while top and lines[top - 1].startswith("#"):
            top -= 1
        heading = index + 1 == len(lines) or not lines[index + 1].strip()
        if has_code or not heading:
            kept.extend(reversed(lines[top:index + 1]))
        has_code = has_code and not heading
        index = top
    return kept[::-1]


def _pruned(node: ast.stmt, reached: set[str]) -> list[str] | None:
    """What replaces a module-level statement: ``None`` keeps it, ``[]`` removes it, and an
    import that binds names not reached is rewritten with the others."""
    names = binds(node)
    if not names:
        return None
    if not isinstance(node, (ast.Import, ast.ImportFrom)):
        return None if names & reached else []
    aliases = [alias for alias in node.names if imported_as(alias) in reached]
    if len(aliases) == len(node.names):
        return None
    return [ast.unparse(type(node)(**{**vars(node), "names": aliases})) + "\n"] if aliases else []


def prune_suite_support(course: Course, out: Path) -> None:
    """Cut the shipped modules of ``delivery.include`` that the suites import (shared strategies)
    down to what the release's Python files use of them: a strategy only hidden properties
    drew from would say what they test. A module used other than by attribute or by name
    (passed around, ``import *``) is left whole."""
    suites = [(out / e.suite).read_text(encoding="utf-8") for e in course.exercises]
    for relative in course.delivery.include:
        module = relative.removesuffix(".py").replace("/", ".")
        if not relative.endswith(".py") or not any(_uses(suite, module) for suite in suites):
            continue
        target = out / relative
        users = [p for p in out.rglob("*.py") if p != target and out / ENGINE_DIR.name not in p.parents]
        uses = [_uses(p.read_text(encoding="utf-8"), module) for p in users]
        known = [names for names in uses if names is not None]
        if len(known) == len(uses):
            source = target.read_text(encoding="utf-8")
            target.write_text(prune(source, reachable(ast.parse(source).body, set().union(*known))), encoding="utf-8")


def _uses(source: str, module: str) -> set[str] | None:
    """The names ``source`` takes from ``module`` (``S.name`` after ``from package import module
    as S``, or ``from module import name``); ``None`` when it uses the module otherwise."""
    package, _, leaf = module.rpartition(".")
    tree = ast.parse(source)
    names: set[str] = set()
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == module:
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == package:
            aliases |= {alias.asname or alias.name for alias in node.names if alias.name == leaf}
        elif isinstance(node, ast.Import) and any(alias.name == module for alias in node.names):
            return None
    read = [n for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases]
    bare = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in aliases]
    return None if "*" in names or len(read) != len(bare) else names | {n.attr for n in read}


_Test = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _tests(body: list[ast.stmt]) -> list[_Test]:
    """The test functions and test classes at the top of a module, as pytest collects them."""
    return [node for node in body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
            or isinstance(node, ast.ClassDef) and node.name.startswith("Test")]


def _hidden_marks(tree: ast.Module) -> set[str]:
    """``pytest.mark.hidden`` and the module-level names bound to it (``hidden = pytest.mark.hidden``)."""
    marks = {HIDDEN_MARK}
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.value) == HIDDEN_MARK:
            marks |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return marks


def _assigns_to(node: ast.stmt, name: str) -> TypeGuard[ast.Assign]:
    """Whether ``node`` is ``name = ...``."""
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)


def _assigns_mark(node: ast.stmt, name: str, marks: set[str]) -> bool:
    """Whether ``node`` is ``name = <a hidden mark>`` or ``name = [..., <a hidden mark>, ...]``."""
    if not _assigns_to(node, name):
        return False
    values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
    return any(ast.unparse(v) in marks for v in values)


def _is_hidden(node: _Test, marks: set[str]) -> bool:
    decorated = any(ast.unparse(d.func if isinstance(d, ast.Call) else d) in marks for d in node.decorator_list)
    if isinstance(node, ast.ClassDef):
        return decorated or any(_assigns_mark(item, "pytestmark", marks) for item in node.body)
    return decorated


def _needs_reference(node: _Test) -> bool:
    """A test function with the ``reference`` fixture, or a test class with such a method."""
    if isinstance(node, ast.ClassDef):
        return any(_needs_reference(item) for item in _tests(node.body))
    arguments = node.args
    return REFERENCE_FIXTURE in [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]


def _release_course_yaml(course: Course) -> str:
    """``course.yaml`` for students: no solutions, no samples, only the sealed cases' file."""
    header = (f"{course.title}: the student release, written by `python -m autograder release`.\n"
              "It has no solutions, so it is a release: `check` runs the public properties that need\n"
              "no reference and the locked known-answer cases. Paths are relative to this file.")
    locked = {"delivery": {"locked": course.delivery.locked}} if course.delivery.locked else {}
    language = course.language  # the release's texts are in its language only
    texts = {"suite_texts": {language: course.suite_texts[language]}} if language in course.suite_texts else {}
    return course_yaml(course, header, ("solutions", "samples", "delivery", "suite_texts"), stubs=STUBS, **locked,
                       **texts)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


STUBS = "stubs"  # the release's untouched copy of the exercises' stubs
STUBS_README = """\
The exercises as you received them. `python -m autograder check` reads the graded functions'
signatures and docstring examples here; work in the package folder, not in these copies.
"""

LOCKED_HEADER = """\
# Locked known-answer cases. Each case's calls run on your code in the sandbox during
# `python -m autograder check`; only a salted sha256 of the reference's results is here,
# so you learn whether yours match, not what they are.
"""


SUITE_TEXTS_HEADER = """\
# What the self-check says of each property and locked case, in the course's language.
"""


def data_section(course: Course) -> str:
    """The README's set-up step for the data the exercises read (``course.data``) and the
    environment the self-check gives student code; the release ships neither file."""
    command = course.delivery.fetch
    if command is None:
        return ""
    env = "".join(f"export {key}={value.format(root='$PWD')}\n" for key, value in course.sandbox.env.items())
    shipped = _common_paths(course)
    files = ", ".join(f"`{name}`: `{path}`" for name, path in course.data.items() if path not in shipped)
    where = fill(template(course, "data_env.md"), env=env) if env else ""
    return fill(template(course, "data_section.md"), files=f" ({files})" if files else "", command=command, where=where)


def check_reach(course: Course) -> dict[str, int]:
    """Per exercise, the points of the properties the release's self-check runs (its public
    properties that need no reference: :func:`public_suite`), as their ``points`` marks say."""
    return {e.module: suite_points(public_suite(course.path(e.suite).read_text(encoding="utf-8"))[0])
            for e in course.exercises}


def suite_points(source: str) -> int:
    """The points the tests of a suite's ``source`` carry, as their ``points`` marks say."""
    return sum(_points(node) for node in _tests(ast.parse(source).body))


def _points(node: _Test) -> int:
    """What a test's ``points(n)`` mark (or ``pytest.mark.points(n)``) gives; a class's, its tests'."""
    if isinstance(node, ast.ClassDef):
        return sum(_points(test) for test in _tests(node.body))
    return sum(mark.args[0].value for mark in node.decorator_list
               if isinstance(mark, ast.Call) and ast.unparse(mark.func).split(".")[-1] == "points"
               and mark.args and isinstance(mark.args[0], ast.Constant) and isinstance(mark.args[0].value, int))


def student_readme(course: Course) -> str:
    """The README of the release: what is where, self-check (and how much of each exercise it
    sees: :func:`check_reach`), the data to fetch, submission."""
    rows = "\n".join(f"| `{e.module}` | {title(course, e)} | {points_text(course, e)} |" for e in course.exercises)
    reach = check_reach(course)
    reach_rows = "\n".join(f"| `{e.module}` | {reach[e.module]} | {points_text(course, e)} |" for e in course.exercises)
    locks = lock_files(course)
    install = "".join(f" -r {p}" for p in locks)
    setup = (f"python3 -m venv .venv\n{VENV_PYTHON} -m pip install{install}\n" if locks else
             "python3 -m venv .venv   # then install what your instructor names\n")
    return markdown(course, course_text(course, "release_readme", title=title(course), package=course.package,
                                        exercise_rows=rows, setup=setup, data_section=data_section(course),
                                        first_module=course.exercises[0].module, check=f"{STUDENT_COMMAND} check",
                                        doctest=f"{VENV_PYTHON} -m doctest -v",
                                        reach_rows=reach_rows))
