"""What a grader process is asked: a :class:`Request` goes to it as JSON and comes back the same."""

import json
import os
from pathlib import Path

import pytest

from autograder.batch.grader import WHOLE, Part, Request
from autograder.batch.serve import scope
from autograder.results import PropertyResult

PUBLIC = PropertyResult("ex1", "prop_public", 3, 0, False, False, "description\n\nwhy", blocked=True, timed_out=True)


@pytest.mark.parametrize("part", [WHOLE, Part(["ex1"], 12.5, public_only=True), Part(public_results=(PUBLIC,)),
                                  Part(["ex2"], first_failure=True)])
def test_a_request_is_the_same_after_its_json_line(part):
    request = Request(Path("/tmp/staged"), Path("/tmp/out"), "alice", ("a note",), part)
    assert Request.from_plain(json.loads(json.dumps(request.to_plain()))) == request


def test_a_part_that_stops_at_the_first_failure_is_graded_so():
    assert scope(Part(["ex2"], first_failure=True)).first_failure
    assert not scope(WHOLE).first_failure


def test_a_grader_process_keeps_the_code_it_compiles_whatever_its_caller_says(monkeypatch, tmp_path):
    """A caller's ``PYTHONDONTWRITEBYTECODE`` would have every grader process compile the engine,
    the suites and the solutions anew; its compiled code goes to its own folder of the cache."""
    import subprocess
    import sys

    from autograder.batch.grader import grader_environment
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    env = grader_environment(str(tmp_path / "scratch"))
    said = subprocess.run([sys.executable, "-c", "import sys; print(sys.dont_write_bytecode, sys.pycache_prefix)"],
                          env=env, capture_output=True, text=True, check=True).stdout.split()
    assert said[0] == "False" and Path(said[1]).is_relative_to(tmp_path / "autograder"), said


def test_the_caller_s_pytest_settings_stay_out_of_a_grader_process(monkeypatch, tmp_path):
    from autograder.batch.grader import grader_environment
    monkeypatch.setenv("PYTEST_ADDOPTS", "-q --maxfail=1")
    monkeypatch.setenv("PYTEST_PLUGINS", "no_such_plugin")
    env = grader_environment(str(tmp_path / "scratch"))
    assert not [name for name in env if name.startswith("PYTEST_")] and env["PATH"] == os.environ["PATH"]


def test_a_grader_process_loads_no_installed_hypothesis_plugin(monkeypatch, tmp_path):
    """Whoever starts it (a batch, nbgrader, a Dask worker): tests/engine/test_engine_generic.py
    shows a plugin left out end to end."""
    from autograder.batch.grader import grader_environment
    monkeypatch.delenv("HYPOTHESIS_NO_PLUGINS", raising=False)
    assert grader_environment(str(tmp_path / "scratch"))["HYPOTHESIS_NO_PLUGINS"] == "1"
