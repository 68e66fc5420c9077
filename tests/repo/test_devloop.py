"""The development loop: what the edit-loop targets need, what a test without its data does,
and the ``autograder`` command the venv holds."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

pytest_plugins = ["pytester"]


def test_the_console_script_runs_the_command_line_and_exits_with_its_status():
    script = Path(sys.executable).with_name("autograder")
    assert script.is_file(), f"{script} is missing: `pip install -e .` (make setup does) installs it"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: autograder ") and "check" in done.stdout and "grade" in done.stdout
    done = subprocess.run([str(script), "--course", "/nonexistent/course.yaml", "check"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "no such file" in done.stderr, done.stderr


def test_a_test_whose_data_is_missing_is_skipped_with_its_reason_unless_data_is_required(pytester):
    """Under a copy of the test set-up in a folder with no fetched data, a test that takes
    ``fetched`` is skipped, saying how to fetch; with ``--require-data`` (``make test``) it
    fails; it carries the mark ``data``, so ``-m "not data"`` leaves it out."""
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_needs_data="def test_needs_data(fetched):\n    pass\n")
    pytester.makeini("[pytest]\nmarkers =\n    data: reads the fetched course data\n")

    done = pytester.runpytest_inprocess("-rs")
    done.assert_outcomes(skipped=1)
    done.stdout.fnmatch_lines(["*course assets are missing or corrupt; run `python -m tokcourse.assets fetch`*"])
    done = pytester.runpytest_inprocess("--require-data")
    done.assert_outcomes(errors=1)
    done.stdout.fnmatch_lines(["*course assets are missing or corrupt*"])
    done = pytester.runpytest_inprocess("-m", "not data")
    done.assert_outcomes(deselected=1)


def test_the_edit_loop_targets_run_no_set_up_step():
    """``make -n`` prints what the targets would run: the venv at most, never apt-get, the
    download of the data or the browser."""
    done = subprocess.run(["make", "-n", "test-unit", "test-fast", "lint", "docs"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for step in ("apt-get", "tokcourse.assets fetch", "chromium"):
        assert step not in done.stdout, f"an edit-loop target runs {step}:\n{done.stdout}"
    assert "pytest -n 2 -m" in done.stdout and "mkdocs build --strict" in done.stdout


def test_the_whole_suite_keeps_a_module_s_group_on_one_process(pytester, monkeypatch):
    """``make test`` spreads the tests over three processes with ``--dist loadgroup``, under which
    the tests of a module marked ``xdist_group(__name__)`` share one process, and so make its
    module-scoped fixture once."""
    done = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "pytest --require-data -n 3 --dist loadgroup" in done.stdout, done.stdout
    pytester.makepyfile(test_grouped="""
        import os, pytest
        pytestmark = pytest.mark.xdist_group(__name__)

        @pytest.fixture(scope="module")
        def made():
            open(os.path.join(os.environ["MADE_IN"], str(os.getpid())), "w").close()

        @pytest.mark.parametrize("n", range(6))
        def test_one(made, n):
            pass
    """)
    made_in = pytester.mkdir("made_in")
    monkeypatch.setenv("MADE_IN", str(made_in))
    grouped = pytester.runpytest_subprocess("-n", "3", "--dist", "loadgroup")
    grouped.assert_outcomes(passed=6)
    assert len(list(made_in.iterdir())) == 1


def test_the_code_tests_and_docs_cite_no_issue_numbers():
    """An issue number means nothing to the next reader; what the issue asked is said in words."""
    citing = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
    places = [path for folder in ("autograder", "tests", "suites", "exercises", "solutions", "tokcourse", "docs")
              for path in sorted((ROOT / folder).rglob("*")) if path.suffix in (".py", ".md")]
    cited = [f"{path.relative_to(ROOT)}:{number}" for path in places
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if citing.search(line)]
    assert cited == []
