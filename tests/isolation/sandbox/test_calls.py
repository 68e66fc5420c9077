"""The sandbox contains hostile code: every attack ends as a clean failure of that call only.

These tests drive :class:`autograder.engine.session.Session` directly on a tiny submission
(``conftest.py``), in every isolation mode, so they need no course. What a worker can reach is
``test_reach.py``, how workers are started and handed out ``test_workers.py``; the grading-level
version (points lost only on attacked properties) is ``tests/isolation/test_hostile.py``.
"""

import errno
import os
import subprocess
import time
from pathlib import Path

import pytest

from autograder.engine.session import MissingName
from autograder.errors import SandboxFailure, StudentError
from autograder.isolation import Child
from tests.isolation.sandbox.conftest import MODES, open_session

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def test_plain_data_and_handles(session):
    toy = session.module("exercises.toy")
    assert toy.add(2, 3) == 5
    assert toy.add((1, b"a"), (2.5,)) == (1, b"a", 2.5)
    tok = toy.Tok()
    assert tok.size == 256
    assert tok.train(3).size == 259
    assert toy.apply(tok.train, 2).size == 261  # a handle passed back in
    with pytest.raises(MissingName, match="does_not_exist does not exist"):
        _ = toy.does_not_exist


def test_exit_and_exceptions_are_student_errors(session):
    toy = session.module("exercises.toy")
    with pytest.raises(StudentError, match=r"exit_now\(\) raised SystemExit: 3"):
        toy.exit_now()
    with pytest.raises(StudentError, match="raised Escape: not an Exception") as caught:
        toy.base_exception()
    assert caught.value.is_a("BaseException") and not caught.value.is_a("Exception")
    assert toy.add(1, 1) == 2, "the worker keeps serving after the student's exception"


def test_what_site_gives_is_there_though_python_starts_without_it(session):
    """The worker's Python starts with -S (no .pth files run, see worker.with_site_packages):
    the builtin exit() still raises SystemExit, and installed packages still import."""
    toy = session.module("exercises.toy")
    with pytest.raises(StudentError, match=r"builtin_exit\(\) raised SystemExit: 4"):
        toy.builtin_exit()
    assert toy.installed() == ("yaml", True, True)


@pytest.mark.parametrize("attack, kind, message", [
    ("hard_exit", "crash", "stopped answering"),
    ("hang", "timeout", r"hang\(\) did not return within the time limit of 3 s per call"),
    ("not_yet", "not_implemented", "not implemented yet"),
    ("huge_answer", "protocol", "larger than 2 MB"),
])
def test_failures_end_the_call_and_a_fresh_worker_follows(session, attack, kind, message):
    toy = session.module("exercises.toy")
    first = session.worker
    with pytest.raises(SandboxFailure, match=message) as caught:
        getattr(toy, attack)()
    assert caught.value.kind == kind
    assert session.module("exercises.toy").add(1, 2) == 3
    assert session.worker is not first or kind == "not_implemented"


def test_memory_bomb_is_stopped(session):
    with pytest.raises((StudentError, SandboxFailure), match="MemoryError|killed"):
        session.module("exercises.toy").memory_bomb()


def test_fork_bomb_is_bounded_and_leaves_no_process(session):
    toy = session.module("exercises.toy")
    children = toy.fork_bomb()
    assert children < 16
    uid = session.worker.uid
    kept = session.standby.zygote.spare if session.standby is not None else []  # a zygote's own process
    session.close()
    if uid is not None:
        table = subprocess.run(["ps", "-eo", "pid=,uid=,stat="], capture_output=True, text=True).stdout
        alive = {int(pid) for pid, owner, stat in map(str.split, table.splitlines())
                 if owner == str(uid) and not stat.startswith("Z")}
        assert alive <= set(kept), "zombies are dead; anything else outlived the worker"


def test_a_process_a_call_left_running_is_killed_when_it_returns(session):
    """Where a cgroup lists the worker's processes, nothing a call started runs on into the next
    call: not a process alone, nor one started as a thread of an earlier call ended."""
    if "cgroup" not in MODES[session.mode]:
        pytest.skip("without a cgroup, what a call started is killed when its worker closes")
    toy = session.module("exercises.toy")
    assert toy.gone(toy.sleeper())
    toy.start_thread()
    assert toy.gone(toy.sleeper())


def state(pid: int) -> str | None:
    """A process's state letter (``Z``: a zombie, dead and not collected), or None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def settled(pids, seconds: float = 10.0) -> bool:
    """Wait until each of ``pids`` is gone or a zombie: then whether one is a zombie can no longer
    change by itself. A wait for the kernel, not a measure of time: ``seconds`` only bounds a hang."""
    deadline = time.monotonic() + seconds
    while any(state(pid) not in (None, "Z") for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_worker_that_ends_by_itself_leaves_no_zombie(session):
    """A worker that exits outlives bubblewrap's first process, which comes to the grader (a
    subreaper): closing the worker collects it too."""
    toy = session.module("exercises.toy")
    assert toy.add(1, 2) == 3
    if isinstance(session.worker, Child):
        pytest.skip("a forked worker's processes are its zygote's to collect, never the grader's")
    pids = {session.worker.process.pid, *session.worker.killed}  # bubblewrap's, and what it started
    with pytest.raises(SandboxFailure, match="stopped answering"):
        toy.hard_exit()
    session.close()
    assert settled(pids)
    assert [pid for pid in pids if state(pid) == "Z"] == []


def test_a_process_still_dying_when_its_worker_closes_is_collected_by_a_later_close(session):
    """A killed process that is not gone within a close's patience (a slow moment) becomes a
    zombie of the grader; the next worker's close collects it, so a long-lived grader gathers
    none."""
    hold, release = os.pipe()
    late = os.fork()
    if late == 0:  # stands for a worker's process that takes its time to die: it ends when told
        os.close(release)
        os.read(hold, 1)
        os._exit(0)
    os.close(hold)
    assert session.module("exercises.toy").add(1, 2) == 3
    session.worker.killed.add(late)
    session.close()
    assert state(late) not in (None, "Z"), "still dying when its worker closed"
    os.close(release)
    assert settled({late}) and state(late) == "Z", "dead and not collected: a zombie"
    again = open_session(session.layout.submission)
    again.module("exercises.toy").add(1, 2)
    again.close()
    assert not Path(f"/proc/{late}").exists(), "collected by the later close"


def test_output_goes_nowhere(session):
    """What the student prints is discarded in the worker: it cannot fill a disk or reach the grader."""
    assert session.module("exercises.toy").flood() == "done"


def test_monkeypatching_stays_in_the_worker(session):
    """Patching builtins breaks only the student's own worker (its answers stop making sense)."""
    with pytest.raises(SandboxFailure) as caught:
        session.module("exercises.toy").patch_everything()
    assert caught.value.kind in ("protocol", "crash")
    assert len("abc") == 3
    assert session.module("exercises.toy").add(1, 2) == 3


def test_objects_with_custom_equality_do_not_cross(session):
    value = session.module("exercises.toy").always_equal()
    assert value != 1 and value != [] and repr(value).startswith("<student Always")


@pytest.mark.parametrize("module, message, kind", [
    ("broken", r"(?s)SyntaxError.*File \"exercises/broken\.py\", line 1", "import"),
    ("crashes", r"RuntimeError: import-time crash", "import"),
    ("leaves", r"SystemExit", "import"),
    ("missing", r"exercises\.missing is missing from the submission", "missing"),
])
def test_import_problems_are_reported(session, module, message, kind):
    """A module that is not there is ``missing`` (its feedback says so on hidden properties
    too); one that fails to import is ``import``, with the error."""
    with pytest.raises(SandboxFailure, match=message) as caught:
        session.module(f"exercises.{module}")
    assert caught.value.kind == kind


def test_no_ipc_objects(session):
    """System V shared memory, semaphores and message queues and POSIX message queues outlive
    the worker that made them, and workers forked from one zygote share an IPC namespace."""
    assert session.module("exercises.toy").ipc() == [(-1, errno.EPERM)] * 4


def test_file_times_cannot_be_set(session):
    """Setting a file's times needs only write permission, which ``/dev/null`` gives everyone and
    Landlock does not cover: it succeeds and changes nothing, or a worker could leave a byte in
    the mtime of a device node that every worker, of every submission, sees."""
    toy = session.module("exercises.toy")
    assert toy.times_kept("/dev/null") is True and toy.times_kept("a file of its own") is True


def test_no_kernel_keyrings(session):
    """A keyring outlives the worker that filled it and can be joined by name from any uid: a
    channel to later properties and to other students' submissions. In every mode it is shut."""
    assert session.module("exercises.toy").keyrings() == [(-1, errno.EPERM), (-1, errno.EPERM)]


def test_an_exception_is_reported_when_the_student_used_up_the_open_files(session):
    """The worker reads the student's frames only when an exception needs them (importing
    traceback then): with no file left to open, the exception still comes back, without frames."""
    with pytest.raises(StudentError, match="raised ValueError: bad input"):
        session.module("exercises.toy").raise_without_files()
