"""A batch stopped from outside ends at once and leaves nothing of its own behind: SIGTERM to the
command (how a scheduler or ``timeout`` stops it) exits 143, Ctrl-C (SIGINT to its process group)
130; no process of its session is left, nor any of its temporary folders (the students' staged
copies among them); and the next run grades what the stopped one had not. A command stopped while
it is still starting says no more than that."""

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

TOY = ROOT / "tests" / "fixtures" / "toy_course"
SLOW = '''import time


def add_all(numbers):
    if not isinstance(numbers, list):
        raise TypeError("numbers must be a list")
    time.sleep(0.1)
    return sum(numbers)
'''  # right, and slow enough that the batch is stopped while it grades


def in_session(session: int) -> list[int]:
    """The processes of ``session``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getsid(int(pid)) == session:
                found.append(int(pid))
        except OSError:
            pass
    return found


def collect_adopted(pids: list[int]) -> None:
    """Reap those of ``pids`` that ended and were handed to this process. A grading run earlier in
    this pytest process made it a subreaper (``reaping.once_per_grader``), so the orphans of a
    grader that died on the stop come here, as on a student's machine they come to init, and stay
    zombies of the session until this process collects them."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not this process's child
            pass


def still_in_session(session: int, patience: float = 10) -> list[str]:
    """The command lines of the processes of ``session`` that are still there after ``patience``
    seconds: one that the stop's signal reached may still be on its way out when the command
    has exited, and only one that stays is left behind."""
    deadline = time.monotonic() + patience
    while (left := in_session(session)) and time.monotonic() < deadline:
        collect_adopted(left)
        time.sleep(0.1)
    named = []
    for pid in left:
        try:
            named.append(f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            pass
    return named


def as_a_terminal_starts_it(command: list[str]) -> list[str]:
    """``command`` started as a shell starts a foreground job: SIGINT and SIGTERM at their default
    dispositions and unblocked, whatever this test process inherited or a library set (an ignored
    signal stays ignored across exec, and Python then leaves Ctrl-C ignored too)."""
    reset = ("import os, signal, sys\n"
             "for number in (signal.SIGINT, signal.SIGTERM):\n"
             "    signal.signal(number, signal.SIG_DFL)\n"
             "signal.pthread_sigmask(signal.SIG_SETMASK, [])\n"
             "os.execv(sys.argv[1], sys.argv[1:])\n")
    return [sys.executable, "-c", reset, *command]


def catches(pid: int, number: int, patience: float = 5.0) -> bool:
    """Whether process ``pid`` has a handler for signal ``number`` that is neither ignored nor
    blocked. A process blocks every signal for a moment while it starts a child (CPython's
    ``subprocess`` does, around ``vfork``), so the process is looked at again until ``patience``
    seconds have passed; a signal that comes while it is blocked waits, and is not lost."""
    bit, deadline = 1 << (number - 1), time.monotonic() + patience
    while True:
        fields = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        caught, blocked = int(fields["SigCgt"], 16) & bit, int(fields["SigBlk"], 16) & bit
        if (caught and not blocked) or time.monotonic() > deadline:
            return bool(caught) and not blocked
        time.sleep(0.01)


def grading_under_way(temporary: Path) -> bool:
    """Whether the batch has staged its three submissions and started a worker for one (the workers
    the batch starts before, to check its sandbox, come and go before it stages)."""
    names = [path.name for path in temporary.iterdir()]
    return (sum(name.startswith("autograder-submission-") for name in names) == 3
            and any(name.startswith("autograder-worker-") for name in names))


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize(("stop", "status"), [("SIGTERM", 143), ("Ctrl-C", 130)])
def test_a_stopped_batch_leaves_nothing_behind_and_the_next_run_finishes_it(tmp_path, stop, status):
    temporary, out = tmp_path / "temporary", tmp_path / "out"
    temporary.mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / name / "toy").mkdir(parents=True)
        (tmp_path / name / "toy" / "__init__.py").write_text("")
        (tmp_path / name / "toy" / "ex_sum.py").write_text(SLOW)
    command = [sys.executable, "-m", "autograder", "--course", str(TOY / "course.yaml"), "grade",
               *(str(tmp_path / name) for name in ("a", "b", "c")), "--out", str(out), "--jobs", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(temporary),
           "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hypothesis")}
    grading = subprocess.Popen(as_a_terminal_starts_it(command), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not grading_under_way(temporary):
        assert grading.poll() is None and time.monotonic() < deadline, grading.communicate()
        time.sleep(0.05)
    assert catches(grading.pid, signal.SIGINT) and catches(grading.pid, signal.SIGTERM)
    if stop == "SIGTERM":
        os.kill(grading.pid, signal.SIGTERM)
    else:
        os.killpg(grading.pid, signal.SIGINT)
    said = "".join(grading.communicate(timeout=120))
    assert grading.returncode == status, said
    assert "Traceback" not in said
    assert not list(temporary.iterdir())
    assert not still_in_session(grading.pid)
    assert not (out / "grades.csv").exists() or len((out / "grades.csv").read_text().splitlines()) < 4

    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    with (out / "grades.csv").open(newline="") as table:
        assert {row["submission"]: row["score"] for row in csv.DictReader(table)} == {"a": "10", "b": "10", "c": "10"}
    assert not list(temporary.iterdir())


def importing_libraries(pid: int) -> bool:
    """Whether process ``pid``, past :func:`as_a_terminal_starts_it`'s exec, has loaded a compiled
    module of the venv's packages: the command line's own imports have begun (Python's start and
    ``site`` load none)."""
    if b"os.execv" in Path(f"/proc/{pid}/cmdline").read_bytes():
        return False
    maps = Path(f"/proc/{pid}/maps").read_text()
    return any("site-packages/" in line and line.endswith(".so") for line in maps.splitlines())


@pytest.mark.parametrize("command", [[sys.executable, "-m", "autograder"],
                                     [str(Path(sys.executable).with_name("autograder"))]],
                         ids=["python -m autograder", "autograder"])
def test_ctrl_c_while_the_command_line_is_imported_prints_no_traceback(command):
    """Ctrl-C while the command line's libraries load (rich, pydantic, hypothesis) exits 130
    without a traceback, as it does once the command runs. (Before that, while Python itself
    starts, only Python can speak.)"""
    for _ in range(5):
        started = subprocess.Popen(as_a_terminal_starts_it([*command, "--help"]), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        while started.poll() is None and not importing_libraries(started.pid):
            time.sleep(0.001)
        started.send_signal(signal.SIGINT)
        said = "".join(started.communicate(timeout=60))
        assert started.returncode == 130 and not said, said
