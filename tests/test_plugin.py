"""The grading plugin's hypothesis set-up: examples depend on the seed alone, not on which
modules the grader process happens to have imported."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.sandbox

PROBE = """
import json, sys
from hypothesis import given, seed, settings, strategies as st

seen = []

@seed(20261130)
@settings(max_examples=300, database=None)
@given(st.text(max_size=4))
def probe(text):
    seen.append(text)

def draw():
    seen.clear()
    probe()
    return list(seen)

import autograder.engine.plugin
if sys.argv[1] == "seed-alone":
    autograder.engine.plugin.draw_from_the_seed_alone()
before = draw()
sys.path.insert(0, sys.argv[2])
import lure  # a local module with a hundred short string literals
after = draw()
print(json.dumps({"same": before == after, "lured": sorted({t for t in after if t.startswith("Qz")})}))
"""


def _probe(mode: str, folder) -> dict:
    (folder / "lure.py").write_text(f"LURES = {tuple(f'Qz{i}' for i in range(100))!r}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PROBE, mode, str(folder)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("mode", ["hypothesis-default", "seed-alone"])
def test_examples_ignore_literals_of_imported_modules(tmp_path, mode):
    outcome = _probe(mode, tmp_path)
    if mode == "hypothesis-default":
        # the probe is sensitive: unpatched hypothesis does pick up the new module's literals
        assert outcome["lured"] and not outcome["same"], outcome
    else:
        assert outcome == {"same": True, "lured": []}


class _Plugins:
    """A pytest plugin beside the grading plugin: which plugins the grading's pytest loaded."""

    names: list[str] = []

    def pytest_configure(self, config: pytest.Config) -> None:
        self.names = [name for name, _plugin in config.pluginmanager.list_name_plugin()]


def test_grading_loads_no_installed_plugin_but_hypothesis_s(tmp_path):
    """Installed pytest plugins (anyio's, platformdirs') stay out of a grading: loading them and
    rewriting their asserts took a second of every grader process's first grading."""
    from autograder.batch.staging import stage
    from autograder.config import load_course
    from autograder.engine.plugin import run_suites

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
    from autograder.batch.staging import stage
    from autograder.config import load_course
    from autograder.engine.plugin import run_suites
    from tests.carriers import HIDDEN, PUBLIC, toy_course

    course = load_course(toy_course(tmp_path / "course", secret=10 ** 6 + 1))
    staged = stage(course, course.solutions_path())
    order = _Order()
    try:
        results, _ = run_suites(course, staged.root, observers=(order,))
        public, _ = run_suites(course, staged.root, public_only=True)
        merged, _ = run_suites(course, staged.root, public_results=public)
    finally:
        staged.remove()
    assert order.ran == [*PUBLIC, HIDDEN]
    assert [r.name for r in results] == [HIDDEN, *PUBLIC] and all(r.passed for r in results)
    assert [r.name for r in public] == list(PUBLIC) and merged == results


def test_a_worker_that_cannot_start_fails_the_grading_not_the_student(monkeypatch):
    """A worker that does not start never ran student code: the machine failed, so the grading
    fails (the batch reports a grader failure) instead of the submission getting a zero."""
    import errno

    from autograder.batch.staging import stage
    from autograder.config import load_course
    from autograder.engine.plugin import run_suites
    from autograder.errors import GraderError
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
