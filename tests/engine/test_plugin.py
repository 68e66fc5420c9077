"""The grading plugin's set-up: only hypothesis's pytest plugin beside it, public properties first,
and a worker that cannot start failing the grading (the seed-alone hook is tests/repo/test_internals.py's)."""


import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.sandbox

class _Plugins:
    """A pytest plugin beside the grading plugin: which plugins the grading's pytest loaded."""

    names: list[str] = []

    def pytest_configure(self, config: pytest.Config) -> None:
        self.names = [name for name, _plugin in config.pluginmanager.list_name_plugin()]


def test_grading_loads_no_installed_plugin_but_hypothesis_s(tmp_path):
    """Installed pytest plugins (anyio's, platformdirs') stay out of a grading: loading them and
    rewriting their asserts took a second of every grader process's first grading."""
    from autograder.config import load_course
    from autograder.engine.run import run_suites
    from autograder.intake.staging import stage

    course = load_course(ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml")
    staged = stage(course, course.solutions_path())
    seen = _Plugins()
    try:
        results, _ = run_suites(course, staged.root, observers=(seen,))
    finally:
        staged.remove()
    assert results and all(r.passed for r in results)
    assert "_hypothesis_pytestplugin" in seen.names
    assert not [name for name in seen.names if "anyio" in name or "platformdirs" in name], seen.names


class _Order:
    """A pytest plugin beside the grading plugin: the order the properties ran in."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        self.ran.append(nodeid.rsplit("::", 1)[-1])


def test_public_properties_run_first_and_report_in_the_suites_order(tmp_path):
    """Every public property runs before any hidden one (docs/security.md), and the results come
    back in the suite's order. Graded apart (``public_only``, then the hidden ones given the public
    results, as a split batch does), the results are the same."""
    from autograder.config import load_course
    from autograder.engine.run import Scope, run_suites
    from autograder.intake.staging import stage
    from tests.isolation.carriers import HIDDEN, PUBLIC, toy_course

    course = load_course(toy_course(tmp_path / "course", secret=10 ** 6 + 1))
    staged = stage(course, course.solutions_path())
    order = _Order()
    try:
        results, _ = run_suites(course, staged.root, observers=(order,))
        public, _ = run_suites(course, staged.root, Scope(public_only=True))
        merged, _ = run_suites(course, staged.root, Scope(public_results=public))
    finally:
        staged.remove()
    assert order.ran == [*PUBLIC, HIDDEN]
    assert [r.name for r in results] == [HIDDEN, *PUBLIC] and all(r.passed for r in results)
    assert [r.name for r in public] == list(PUBLIC) and merged == results


def test_a_worker_that_cannot_start_fails_the_grading_not_the_student(monkeypatch):
    """A worker that does not start never ran student code: the machine failed, so the grading
    fails (the batch reports a grader failure) instead of the submission getting a zero."""
    import errno

    from autograder.config import load_course
    from autograder.engine.run import run_suites
    from autograder.errors import GraderError
    from autograder.intake.staging import stage
    from autograder.isolation import isolation, process

    course = load_course(ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml")
    staged = stage(course, course.solutions_path())
    isolation()  # found before workers stop starting

    def no_process(*args, **kwargs):
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(process.subprocess, "Popen", no_process)
    try:
        with pytest.raises(GraderError, match="the worker did not start"):
            run_suites(course, staged.root)
    finally:
        staged.remove()
