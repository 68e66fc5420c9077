"""The sandbox contains hostile code: every attack ends as a clean failure of that call only.

These tests drive :class:`autograder.proxy.Session` directly on a tiny submission, so they
need no course. The grading-level version (points lost only on attacked properties) is in
``test_hostile.py``.
"""

import os
import subprocess
from pathlib import Path

import pytest

from autograder.errors import SandboxFailure, StudentError
from autograder.proxy import MissingName, Session
from autograder import sandbox
from autograder.sandbox import Layout, Limits, isolation

ROOT = Path(__file__).resolve().parent.parent
STRONG = isolation() == "bwrap"

MODULE = '''
import os, sys, builtins, socket

def add(a, b):
    return a + b

class Tok:
    def __init__(self):
        self.merges = 0
    @property
    def size(self):
        return 256 + self.merges
    def train(self, k):
        self.merges += k
        return self

def apply(function, value):
    return function(value)

def exit_now():
    sys.exit(3)

def hard_exit():
    os._exit(0)

def hang():
    while True:
        pass

def memory_bomb():
    blocks = []
    while True:
        blocks.append(bytearray(50 << 20))

def fork_bomb():
    children = 0
    try:
        for _ in range(200):
            if os.fork() == 0:
                import time
                time.sleep(60)
                os._exit(0)
            children += 1
    except OSError:
        pass
    return children

def read(path):
    with open(path, "rb") as handle:
        return handle.read()

def listing(path):
    return sorted(os.listdir(path))

def write(path, text):
    with open(path, "w") as handle:
        handle.write(text)
    return True

def connect():
    socket.create_connection(("127.0.0.1", 22), timeout=2)

def flood():
    chunk = "x" * (1 << 20)
    for _ in range(100):
        print(chunk)
    return "done"

class Always:
    def __eq__(self, other):
        return True

def always_equal():
    return Always()

class Escape(BaseException):
    pass

def base_exception():
    raise Escape("not an Exception")

def patch_everything():
    builtins.len = lambda obj: 0
    sys.modules["json"] = None
    return add(1, 2)

def not_yet():
    raise NotImplementedError("add is not implemented yet")

def fill_disk(folder):
    written = 0
    for index in range(10_000):
        with open(f"{folder}/fill{index}", "wb") as handle:
            handle.write(b"x" * (4 << 20))
        written += 4 << 20
    return written

def huge_answer():
    return "x" * (3 << 20)
'''


@pytest.fixture
def submission(tmp_path):
    package = tmp_path / "sub" / "exercises"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "toy.py").write_text(MODULE)
    (package / "broken.py").write_text("def f(:\n    pass\n")
    (package / "crashes.py").write_text("import sys\nraise RuntimeError('import-time crash')\n")
    (package / "leaves.py").write_text("import sys\nsys.exit(0)\n")
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return tmp_path / "sub"


def open_session(submission: Path) -> Session:
    return Session(Layout(submission), Limits(call_seconds=3, cpu_seconds=30, memory_mb=512, processes=16,
                                              file_mb=8, message_mb=2), budget_seconds=30)


# The weaker modes are what a machine without bubblewrap gets: every attack must still be contained.
MODES = sorted({isolation(), "process", *(["unshare"] if os.geteuid() == 0 else [])})


@pytest.fixture(params=MODES)
def session(request, submission, monkeypatch):
    monkeypatch.setattr(sandbox, "isolation", lambda: request.param)
    session = open_session(submission)
    yield session
    session.close()


@pytest.fixture
def strong_session(submission):
    if not STRONG:
        pytest.skip("needs bubblewrap (make setup installs it)")
    session = open_session(submission)
    yield session
    session.close()


def test_plain_data_and_handles(session):
    toy = session.module("exercises.toy")
    assert toy.add(2, 3) == 5
    assert toy.add((1, b"a"), (2.5,)) == (1, b"a", 2.5)
    tok = toy.Tok()
    assert tok.size == 256
    assert tok.train(3).size == 259
    assert toy.apply(tok.train, 2).size == 261  # a handle passed back in
    with pytest.raises(MissingName, match="does_not_exist does not exist"):
        toy.does_not_exist


def test_exit_and_exceptions_are_student_errors(session):
    toy = session.module("exercises.toy")
    with pytest.raises(StudentError, match=r"exit_now\(\) raised SystemExit: 3"):
        toy.exit_now()
    with pytest.raises(StudentError, match="raised Escape: not an Exception") as caught:
        toy.base_exception()
    assert caught.value.is_a("BaseException") and not caught.value.is_a("Exception")
    assert toy.add(1, 1) == 2, "the worker keeps serving after the student's exception"


@pytest.mark.parametrize("attack, kind, message", [
    ("hard_exit", "crash", "stopped answering"),
    ("hang", "timeout", "took longer than 3 s"),
    ("not_yet", "not_implemented", "not implemented yet"),
    ("huge_answer", "protocol", "larger than 2 MB"),
])
def test_failures_end_the_call_and_a_fresh_worker_follows(session, attack, kind, message):
    toy = session.module("exercises.toy")
    first = session.worker.process.pid
    with pytest.raises(SandboxFailure, match=message) as caught:
        getattr(toy, attack)()
    assert caught.value.kind == kind
    assert session.module("exercises.toy").add(1, 2) == 3
    assert session.worker.process.pid != first or kind == "not_implemented"


def test_memory_bomb_is_stopped(session):
    with pytest.raises((StudentError, SandboxFailure), match="MemoryError|killed"):
        session.module("exercises.toy").memory_bomb()


def test_fork_bomb_is_bounded_and_leaves_no_process(session):
    toy = session.module("exercises.toy")
    children = toy.fork_bomb()
    assert children < 16
    uid = session.worker.uid
    session.close()
    if uid is not None:
        table = subprocess.run(["ps", "-eo", "uid=,stat="], capture_output=True, text=True).stdout
        alive = [line for line in table.splitlines() if line.split()[0] == str(uid) and not line.split()[1].startswith("Z")]
        assert alive == [], "zombies are dead; anything else outlived the worker"


def test_output_is_capped(session):
    with pytest.raises(StudentError, match="File too large"):
        session.module("exercises.toy").flood()


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


@pytest.mark.parametrize("module, message", [
    ("broken", r"(?s)SyntaxError.*File \"exercises/broken\.py\", line 1"),
    ("crashes", r"RuntimeError: import-time crash"),
    ("leaves", r"SystemExit"),
    ("missing", r"exercises\.missing is missing from the submission"),
])
def test_import_problems_are_reported(session, module, message):
    with pytest.raises(SandboxFailure, match=message) as caught:
        session.module(f"exercises.{module}")
    assert caught.value.kind == "import"


class TestIsolation:
    """What only bubblewrap gives: no network, nothing of the grader's files, a read-only view."""

    def test_no_network(self, strong_session):
        with pytest.raises(StudentError, match="OSError|unreachable|refused"):
            strong_session.module("exercises.toy").connect()

    def test_solutions_and_repository_are_invisible(self, strong_session):
        toy = strong_session.module("exercises.toy")
        with pytest.raises(StudentError, match="FileNotFoundError"):
            toy.read(str(ROOT / "solutions" / "ex1_merge_tracing.py"))
        with pytest.raises(StudentError, match="FileNotFoundError"):
            toy.listing(str(ROOT / "suites"))
        with pytest.raises(SandboxFailure, match="No module named .solutions."):
            strong_session.module("solutions.ex1_merge_tracing")

    def test_cannot_write_outside_its_folder(self, strong_session, tmp_path):
        target = tmp_path / "results.json"
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError|Read-only"):
            strong_session.module("exercises.toy").write(str(target), '{"score": 100}')
        assert not target.exists()
        with pytest.raises(StudentError, match="PermissionError|Read-only"):
            strong_session.module("exercises.toy").write("/sandbox/submission/exercises/toy.py", "")

    def test_read_only_paths_under_tmp_stay_visible(self, submission, tmp_path):
        """A course's read-only data (or the venv of a clone) may live below /tmp, where the worker
        also gets a scratch tmpfs: the data must not be hidden by it."""
        data = tmp_path / "data"
        data.mkdir()
        (data / "table.txt").write_text("kept")
        session = Session(Layout(submission, readonly_paths=(data,)), Limits(call_seconds=3), budget_seconds=30)
        try:
            assert session.module("exercises.toy").read(str(data / "table.txt")) == b"kept"
        finally:
            session.close()

    @pytest.mark.parametrize("folder", [".", "/tmp"])
    def test_disk_is_capped(self, strong_session, folder):
        """Many files each under the file-size limit still cannot fill the grader's disk."""
        with pytest.raises(StudentError, match="No space left on device"):
            strong_session.module("exercises.toy").fill_disk(folder)

    def test_runs_as_an_unprivileged_user(self, strong_session):
        if os.geteuid() != 0:
            pytest.skip("the uid drop applies when the grader runs as root")
        text = strong_session.module("exercises.toy").read("/proc/self/status").decode()
        uid_line = next(line for line in text.splitlines() if line.startswith("Uid:"))
        assert uid_line.split()[1] != "0"
        assert "CapEff:\t0000000000000000" in text
