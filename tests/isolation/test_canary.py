"""The canary: it passes where the sandbox holds, judges by what reaches the host, and sees every
attempt that gets through."""

import os
import shutil
import types
from pathlib import Path

import pytest

from autograder.batch import canary
from autograder.config import load_course
from autograder.isolation import isolation, with_layers
from tests.conftest import ROOT

pytestmark = pytest.mark.sandbox

TOY = ROOT / "tests" / "fixtures" / "toy_course"


@pytest.fixture
def toy(tmp_path) -> Path:
    """A copy of the toy course under /tmp with a read-only path of its own below its root."""
    course = tmp_path / "toy"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__"))
    (course / "notes").mkdir()
    (course / "notes" / "read-me.txt").write_text("notes\n")
    with (course / "course.yaml").open("a") as file:
        file.write("\nsandbox:\n  readonly_paths: [notes]\n")
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return course / "course.yaml"


@pytest.mark.skipif(not isolation().holds, reason="needs Landlock or bubblewrap")
def test_the_canary_passes_where_the_sandbox_holds(tmp_path):
    canary.run_canary(load_course(ROOT / "course.yaml"), tmp_path)


@pytest.mark.skipif(os.geteuid() != 0 or "bwrap" not in isolation().layers, reason="needs root and bubblewrap")
def test_a_write_into_bubblewraps_own_tmp_is_no_breach(toy):
    """A course under /tmp, graded as root without a private uid: the probe, root without
    capabilities, can write in the folders bubblewrap made for the course's paths in its private
    /tmp; nothing reaches the host's course folder, so grading goes on."""
    with with_layers("bwrap,landlock,cgroup"):
        canary.run_canary(load_course(toy))
    assert not (toy.parent / ".autograder-canary").exists()


def test_the_probe_sees_what_gets_through(toy, tmp_path, monkeypatch):
    """The probe's module run here, unconfined: every attempt gets through, and each is named."""
    probe = types.ModuleType("autograder_canary")
    exec(canary.PROBE, probe.__dict__)
    probe.processes = lambda count: count  # forking this test process is not needed to see the count
    shared = tmp_path / "shared.txt"
    shared.write_text("shared\n")
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "secret.py").write_text("answer = 42\n")
    course = load_course(toy)
    try:
        breaches = canary._probe(probe, course, None, decoy, shared)
    finally:
        for file in probe.HELD:
            file.close()
    said = "; ".join(breaches)
    for breach in [f"read {decoy / 'secret.py'}", f"wrote into {course.root}", "connected to a TCP socket",
                   "signalled the grader", f"changed the mode, owner, times or extended attributes of {shared}",
                   "prlimit on the grader", "setpriority on the grader", "sched_setaffinity on the grader",
                   f"held a lock on {shared}", f"watched {tmp_path} with inotify", "started"]:
        assert breach in said, breach
    assert not (course.root / ".autograder-canary").exists()
