"""Grading one prepared submission in this process: its suites under pytest, with the grading plugin.

:func:`run_suites` runs the suites of the course's exercises on a submission's folder, with
:class:`~autograder.engine.plugin.GradingPlugin` registered, and returns a result per property;
:func:`grade_staged` makes of those a :class:`~autograder.results.Grade` with its notes. This is
what a grader process does for each submission it is handed (:mod:`autograder.batch.serve`), and what ``check``
does for the student's own work.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from .. import internals
from ..config import Course
from ..errors import GraderError
from ..i18n import in_course_language
from ..isolation import isolation_note
from ..results import Grade, PropertyResult
from .cells import cell_maps
from .plugin import EVERYTHING, GradingPlugin, Scope

__all__ = ["EVERYTHING", "Scope", "grade_staged", "name_cells", "on_path", "run_suites"]


@in_course_language
def grade_staged(course: Course, root: Path, notes: Sequence[str], scope: Scope = EVERYTHING,
                 observers: tuple[object, ...] = ()) -> Grade:
    """Run the suites on the staged submission in ``root`` here and return its grade, with
    ``notes`` (what staging noticed) after the isolation's; ``observers`` as :func:`run_suites`'s."""
    results, seconds = run_suites(course, root, scope, observers=observers)
    return Grade(tuple(name_cells(course, root, results)), (isolation_note(), *notes), seconds)


def name_cells(course: Course, root: Path, results: Iterable[PropertyResult]) -> list[PropertyResult]:
    """``results`` whose feedback names a notebook's cells where the module came from one."""
    maps = cell_maps(root)
    return [replace(r, output=maps[r.exercise].relabel(r.output, f"{course.package}/{r.exercise}.py",
                                                       f"{r.exercise}.ipynb"))
            if r.exercise in maps else r for r in results]


@in_course_language
def run_suites(course: Course, submission: Path, scope: Scope = EVERYTHING,
               observers: tuple[object, ...] = ()) -> tuple[list[PropertyResult], float]:
    """Grade one prepared submission in this process; returns the results, in the suites' order,
    and the seconds taken.

    ``scope`` says which properties run, and whether to stop at the first failure (:class:`Scope`).
    ``observers`` are more pytest plugins, registered beside the grading plugin: ``check``
    registers one to show which property runs.

    A worker that cannot start fails the grading (:class:`GraderError`): the machine failed, so
    no property may count it against the submission."""
    plugin = GradingPlugin(course, submission, scope)
    args = [str(course.path(e.suite)) for e in plugin.chosen] + [
        "-c", str(Path(__file__).with_name("pytest.ini")), "--rootdir", str(course.root),
        "-p", "no:cacheprovider", "-p", "no:terminal", "-p", "no:warnings",
        # they only warn, of what student code (in the workers) cannot cause, and cost time
        "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:faulthandler",
        # of the installed plugins only hypothesis's: loading the others slowed every first grading
        "--disable-plugin-autoload", "-p", internals.PYTEST_PLUGIN,
        f"--hypothesis-seed={course.hypothesis.seed}", "--import-mode=importlib", "-o", "python_files=*.py",
        "--noconftest",  # the suites alone decide a grade, not a conftest.py beside them or in a folder above
    ] + (["-x"] if scope.first_failure else [])
    started = time.monotonic()
    with on_path(course.root), without_callers_pytest():
        try:
            code = pytest.main(args, plugins=[plugin, *observers])
        finally:
            plugin.close_standbys()
    if plugin.problems:
        raise GraderError("the course's suites are broken:\n" + "\n".join(plugin.problems))
    if plugin.broken is not None:
        raise GraderError(f"the sandbox failed, so this submission was not graded: {plugin.broken}")
    filtered = scope.public_only or scope.public_results is not None  # an exercise may have none of that kind
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) \
            and not (filtered and code == pytest.ExitCode.NO_TESTS_COLLECTED):
        raise GraderError(f"pytest stopped with {pytest.ExitCode(code).name} while grading")
    return plugin.in_suite_order(), time.monotonic() - started


@contextlib.contextmanager
def without_callers_pytest() -> Iterator[None]:
    """Keep the caller's pytest settings (``PYTEST_ADDOPTS``, ``PYTEST_PLUGINS``, ...) from the
    grading's pytest for a while: its arguments are the engine's alone, and a student who runs
    their own tests with such a setting gets the same check. ``PYTEST_CURRENT_TEST`` stays: an
    outer pytest (the project's tests) removes it after each of its tests."""
    kept = {name: os.environ.pop(name) for name in list(os.environ)
            if name.startswith("PYTEST_") and name != "PYTEST_CURRENT_TEST"}
    try:
        yield
    finally:
        os.environ.update(kept)


@contextlib.contextmanager
def on_path(root: Path) -> Iterator[None]:
    """Put the course root first on ``sys.path`` (for the solutions and suites) for a while,
    having forgotten the modules another course left imported under its names."""
    forget_other_courses(root)
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))


def forget_other_courses(root: Path) -> None:
    """Drop from ``sys.modules`` every module named as a folder or module at the top of ``root``
    (``suites``, the solutions, a support package) but loaded from elsewhere: a process that
    graded one course, or one version of it, then grades another by the other's own files.
    This engine and the standard library are never dropped."""
    root = root.resolve()
    names = {p.stem if p.suffix == ".py" else p.name for p in root.iterdir() if p.is_dir() or p.suffix == ".py"}
    names -= {__name__.split(".")[0], *sys.stdlib_module_names}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in names:
            continue
        file = getattr(module, "__file__", None)
        places = [file] if file else list(getattr(module, "__path__", []))
        if not places or not all(Path(place).resolve().is_relative_to(root) for place in places):
            del sys.modules[name]
