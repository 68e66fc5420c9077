"""The sandbox contains hostile code: every attack ends as a clean failure of that call only.

These tests drive :class:`autograder.engine.session.Session` directly on a tiny submission, so they
need no course. The grading-level version (points lost only on attacked properties) is in
``test_hostile.py``.
"""

import errno
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import isolation as sandbox
from autograder.engine.session import MissingName, Session
from autograder.errors import SandboxFailure, StudentError
from autograder.isolation import Child, Layout, Standby, detect, inside, reaping
from autograder.isolation import WorkerLimits as Limits
from autograder.isolation.inside import codec
from autograder.isolation.zygote import forks, preloads
from tests.conftest import ROOT

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

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

def builtin_exit():
    exit(4)

def installed():
    import yaml
    return yaml.__name__, callable(help), callable(quit)

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

THREADS = []

def start_thread():
    import threading
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    THREADS.append((thread, done))

def sleeper():
    for thread, done in THREADS:  # a thread ends as a process starts: as many tasks as before the call
        done.set()
        thread.join()
    pid = os.fork()
    if pid == 0:
        import time
        time.sleep(60)
        os._exit(0)
    return pid

def read_compiled_code():
    return os.path.exists(sys.modules[__name__].__cached__)  # a fresh worker compiles, and writes nothing

def gone(pid):
    return os.waitpid(pid, os.WNOHANG)[0] == pid  # dead: a zombie until its parent, this worker, waits

def read(path):
    with open(path, "rb") as handle:
        return handle.read()

def listing(path):
    return sorted(os.listdir(path))

def write(path, text):
    with open(path, "w") as handle:
        handle.write(text)
    return True

def connect(port):
    socket.create_connection(("127.0.0.1", port), timeout=2)

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

HELD = []

def raise_without_files():
    try:
        while True:
            HELD.append(open(os.devnull))
    except OSError:
        pass
    raise ValueError("bad input")

def fill_disk(folder):
    written = 0
    for index in range(10_000):
        with open(f"{folder}/fill{index}", "wb") as handle:
            handle.write(b"x" * (4 << 20))
        written += 4 << 20
    return written

def huge_answer():
    return "x" * (3 << 20)

def identity():
    """Its uid, effective capabilities (None where capget is refused) and bounding set."""
    import ctypes, platform, struct
    libc = ctypes.CDLL(None)
    data = ctypes.create_string_buffer(24)
    capget = {"x86_64": 125, "aarch64": 90}[platform.machine()]
    read = libc.syscall(capget, struct.pack("=Ii", 0x20080522, 0), data) == 0
    low, _, _, high, _, _ = struct.unpack("=6I", data.raw)
    bounding = sum(1 << cap for cap in range(64) if libc.prctl(23, cap, 0, 0, 0) == 1)  # PR_CAPBSET_READ
    return os.getuid(), low | high << 32 if read else None, bounding

def signal(pid):
    os.kill(pid, 0)

def nested_tmpfs():
    import subprocess
    script = "mount -t tmpfs -o size=200m none /tmp && head -c 100000000 /dev/zero > /tmp/hog && sleep 30"
    child = subprocess.Popen(["unshare", "-Urm", "sh", "-c", script])
    try:
        return child.wait(timeout=2)
    except subprocess.TimeoutExpired:
        return 0

def children_hold_memory(count, mb):
    import time
    ready, told = os.pipe()
    pids = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            hog = bytearray(mb << 20)
            hog[::4096] = b"x" * len(hog[::4096])
            os.write(told, b"!")  # holding it all
            time.sleep(30)
            os._exit(0)
        pids.append(pid)
    os.close(told)
    os.set_blocking(ready, False)
    held, dead, deadline = 0, set(), time.monotonic() + 20
    while held + len(dead) < count and time.monotonic() < deadline:  # each child holds or is killed
        try:
            held += len(os.read(ready, count))
        except BlockingIOError:
            time.sleep(0.05)
        dead |= {pid for pid in pids if pid not in dead and os.waitpid(pid, os.WNOHANG) != (0, 0)}
    time.sleep(0.5)
    alive = sum(pid not in dead and os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in pids)
    return alive * mb

COUNTER = None

def start_burners(count, seconds):
    import ctypes, mmap, time
    global COUNTER
    COUNTER = ctypes.c_long.from_buffer(mmap.mmap(-1, 8))
    for _ in range(count):
        if os.fork() == 0:
            try:
                os.setsid()  # refused: no scheduler autogroup of its own
            except OSError:
                pass
            while True:
                COUNTER.value += 1
    time.sleep(seconds)
    return COUNTER.value

def burned(seconds=0.0):
    import time
    time.sleep(seconds)
    return COUNTER.value

def colliding_set(count):
    return {index * (2**61 - 1) for index in range(count)}

def shapes(first, count):
    from collections import namedtuple
    return [namedtuple(f"Shape{index}", ["a"])(index) for index in range(first, first + count)]

def stop_reading():
    import fcntl, time
    for fd in range(3, 64):
        try:
            fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ: the smallest pipe
        except OSError:
            pass
    sys.modules["worker"].read_frame = lambda inbox: time.sleep(3600)

def harm_the_next():
    import signal
    killed = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # Landlock hides /proc: try the pids near this one (the next worker's is)
        pids = range(max(1, os.getpid() - 2000), os.getpid() + 2000)
    for pid in pids:
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
    for folder in {os.environ["HOME"], os.getcwd(), "/tmp"}:
        try:
            write(f"{folder}/left_behind", "for the next property")
        except OSError:
            pass
    builtins.LEFT_BEHIND = True
    return killed

def keyrings():
    import ctypes, platform
    libc = ctypes.CDLL(None, use_errno=True)
    add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
    outcomes = []
    for number, args in [(add_key, (b"user", b"left-for-later", b"answers", 7, -4)),  # -4: the user keyring
                         (keyctl, (1, b"shared-by-name"))]:  # KEYCTL_JOIN_SESSION_KEYRING
        outcomes.append((libc.syscall(number, *args), ctypes.get_errno()))
    return outcomes

def ipc():
    import ctypes, platform
    libc = ctypes.CDLL(None, use_errno=True)
    shmget, semget, msgget, mq_open = {"x86_64": (29, 64, 68, 240), "aarch64": (194, 190, 186, 180)}[platform.machine()]
    outcomes = []
    for number, args in [(shmget, (4242, 4096, 0o1666)), (semget, (4242, 1, 0o1666)), (msgget, (4242, 0o1666)),
                         (mq_open, (b"left-for-later", 0o102, 0o666, None))]:  # IPC_CREAT; O_RDWR | O_CREAT
        outcomes.append((libc.syscall(number, *args), ctypes.get_errno()))
    return outcomes

def leave_locked():
    os.makedirs("keep")
    write("keep/secret", "for the next property")
    os.chmod("keep", 0o555)
    return os.path.realpath("keep/secret")


def listdir(path):
    return os.listdir(path)


def read_any(path):
    with open(path) as file:
        return file.read()


def times_kept(path):
    if path == "a file of its own":
        path = os.path.join(os.environ["HOME"], "mine")
        write(path, "")
    before = os.stat(path).st_mtime_ns
    os.utime(path, ns=(12345, 12345))
    os.utime(path)
    return os.stat(path).st_mtime_ns == before


IMPORTED_BY = os.getpid()


def imported_here():
    return IMPORTED_BY == os.getpid()


STATE = []


def remember(value):
    STATE.append(value)
    return STATE


def found_left_behind():
    return hasattr(builtins, "LEFT_BEHIND") or any(
        os.path.exists(f"{folder}/left_behind") for folder in {os.environ["HOME"], os.getcwd(), "/tmp"})
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


def open_session(submission: Path, forked: bool = False) -> Session:
    """A session on the toy submission; ``forked``: its workers come from a zygote that imported the toy."""
    layout = Layout(submission)
    limits = Limits(call_seconds=3, cpu_seconds=30, memory_mb=512, processes=16, file_mb=8, message_mb=2)
    return Session(layout, limits, budget_seconds=30,
                   standby=Standby(layout, limits, module="exercises.toy") if forked else None)


def close_session(session: Session) -> None:
    session.close()
    if session.standby is not None:
        session.standby.close()


# Every combination of layers a machine may offer: every attack must be contained in each.
# A mode is what isolation() finds when only some layers are allowed (AUTOGRADER_LAYERS).
WANTED = {"all layers": "bwrap,landlock,uid,cgroup", "no bwrap": "landlock,uid,cgroup",
          "landlock only": "landlock", "bwrap only": "bwrap,uid", "limits only": ""}


MODES = {}
for _name, _wanted in WANTED.items():
    with sandbox.with_layers(_wanted) as _found:
        if _found.layers not in MODES.values():
            MODES[_name] = _found.layers
HOLDING = [name for name, layers in MODES.items() if layers & {"bwrap", "landlock"}]
FOUND = sandbox.Isolation(MODES["all layers"])
# each mode with fresh workers, and again with workers forked from a zygote where its layers allow that
FORKING = [name for name, layers in MODES.items() if forks(sandbox.Isolation(layers))]
SETUPS = [*MODES, *(f"{name}, forked" for name in FORKING)]
STRONG = [setup for setup in SETUPS if setup.split(",")[0] in HOLDING]


def in_mode(monkeypatch, name: str) -> None:
    monkeypatch.setattr(detect, "isolation", lambda: sandbox.Isolation(frozenset(MODES[name])))


def setup_session(monkeypatch, submission: Path, setup: str) -> Session:
    """A session in one of :data:`SETUPS`: a mode, forked or not."""
    mode, _, forked = setup.partition(", ")
    in_mode(monkeypatch, mode)
    session = open_session(submission, forked=bool(forked))
    session.mode = mode
    return session


@pytest.fixture(params=SETUPS)
def session(request, submission, monkeypatch):
    session = setup_session(monkeypatch, submission, request.param)
    yield session
    close_session(session)


@pytest.fixture(params=STRONG)
def strong_session(request, submission, monkeypatch):
    session = setup_session(monkeypatch, submission, request.param)
    yield session
    close_session(session)


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


class TestIsolation:
    """What only bubblewrap gives: no network, nothing of the grader's files, a read-only view."""

    def test_no_network(self, strong_session):
        import socket
        with socket.create_server(("127.0.0.1", 0)) as server:  # the grader's side listens
            with pytest.raises(StudentError, match="PermissionError|OSError|unreachable|refused"):
                strong_session.module("exercises.toy").connect(server.getsockname()[1])

    def test_solutions_and_repository_are_invisible(self, strong_session):
        toy = strong_session.module("exercises.toy")
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError"):
            toy.read(str(ROOT / "solutions" / "ex1_merge_tracing.py"))
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError"):
            toy.listing(str(ROOT / "suites"))
        with pytest.raises(SandboxFailure, match="No module named .solutions."):
            strong_session.module("solutions.ex1_merge_tracing")

    def test_cannot_write_outside_its_folder(self, strong_session, tmp_path):
        target = tmp_path / "results.json"
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError|Read-only"):
            strong_session.module("exercises.toy").write(str(target), '{"score": 100}')
        assert not target.exists()
        with pytest.raises(StudentError, match="PermissionError|Read-only"):
            strong_session.module("exercises.toy").write(str(ROOT / "course.yaml"), "")

    @pytest.mark.parametrize("where", ["hypothesis", "records"])
    def test_cannot_plant_files_for_the_graders_hypothesis(self, strong_session, tmp_path, monkeypatch, where):
        """Grader processes share hypothesis's files (:func:`autograder.batch.grader.hypothesis_storage`)
        and the examples of passing properties (:func:`autograder.engine.replay.cache_folder`), which
        decide what later gradings are shown."""
        from autograder.batch.grader import hypothesis_storage
        from autograder.engine.replay import cache_folder

        folder = Path(hypothesis_storage(str(tmp_path)))
        monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(folder))
        monkeypatch.delenv("AUTOGRADER_RECORDS", raising=False)
        planted = (folder if where == "hypothesis" else cache_folder()) / "planted.json"  # the folder exists
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError|Read-only"):
            strong_session.module("exercises.toy").write(str(planted), "[]")
        assert not planted.exists()

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
        if "bwrap" not in MODES[strong_session.mode]:
            pytest.skip("a total cap on writes needs bubblewrap's tmpfs; elsewhere writes are capped per file")
        with pytest.raises(StudentError, match="No space left on device"):
            strong_session.module("exercises.toy").fill_disk(folder)

    def test_runs_without_privileges(self, strong_session):
        if os.geteuid() != 0:
            pytest.skip("the uid drop applies when the grader runs as root")
        uid, capabilities, bounding = strong_session.module("exercises.toy").identity()
        assert capabilities in (0, None) and bounding == 0  # None: the filter refuses capget
        assert (uid != 0) == ("uid" in MODES[strong_session.mode])

    def test_cannot_read_another_submission(self, strong_session, tmp_path):
        other = tmp_path / "other-student.py"
        other.write_text("secret = 1\n")
        other.chmod(0o644)
        with pytest.raises(StudentError, match="PermissionError|FileNotFoundError"):
            strong_session.module("exercises.toy").read(str(other))

    def test_cannot_signal_the_grader(self, strong_session):
        with pytest.raises(StudentError, match="PermissionError|ProcessLookupError"):
            strong_session.module("exercises.toy").signal(os.getpid())


class TestWholeWorkerLimits:
    """Attacks on the machine's resources: each is bounded for the worker as a whole."""

    @pytest.fixture(params=["fresh", "forked"])
    def full(self, submission, request):
        if not {"cgroup", "landlock"} <= FOUND.layers:
            pytest.skip("needs a cgroup and Landlock")
        session = open_session(submission, forked=request.param == "forked")
        yield session
        close_session(session)

    def test_no_nested_tmpfs(self, full):
        """A nested user namespace with a tmpfs of its own would hold memory past every cap."""
        assert full.module("exercises.toy").nested_tmpfs() != 0

    def test_memory_counts_all_children(self, full):
        held = full.module("exercises.toy").children_hold_memory(4, 200)
        assert held < 512, f"children held {held} MB against a 512 MB worker"

    def test_nothing_runs_between_calls(self, full):
        toy = full.module("exercises.toy")
        during = toy.start_burners(4, 0.5)  # background processes run while their call runs...
        before = toy.burned()
        time.sleep(1.0)
        between = toy.burned() - before  # ...and are gone once it returns
        assert during > 1000 and between < during / 20, (during, between)

    def test_colliding_hashes_are_charged_to_the_call(self, full):
        began = time.monotonic()
        with pytest.raises(SandboxFailure, match="did not return within the time limit of 3 s"):
            full.module("exercises.toy").colliding_set(40_000)
        assert time.monotonic() - began < 8

    def test_many_named_tuple_shapes_are_not_kept(self, full):
        from autograder.isolation.inside import codec
        toy = full.module("exercises.toy")
        for first in range(0, 3000, 100):
            assert len(toy.shapes(first, 100)) == 100
        assert codec.named_classes().cache_info().currsize <= 256

    def test_a_worker_that_stops_reading_cannot_block_the_grader(self, full):
        toy = full.module("exercises.toy")
        toy.stop_reading()
        began = time.monotonic()
        with pytest.raises(SandboxFailure, match="did not return within the time limit"):
            toy.add("x" * (4 << 20), "")
        assert time.monotonic() - began < 8


GRADER = '''
import json, sys, time
from pathlib import Path
from autograder import isolation as sandbox
from autograder.isolation import detect, inside, reaping
from autograder.engine.session import Session
from autograder.isolation import Child, Layout, Standby
from autograder.isolation import WorkerLimits as Limits
from autograder.isolation.zygote import forks, preloads
detect.isolation = lambda: sandbox.Isolation(frozenset(json.loads(sys.argv[2])))
session = Session(Layout(Path(sys.argv[1])), Limits(call_seconds=5), budget_seconds=60)
session.module("exercises.toy").add(1, 2)
print(json.dumps([session.worker.home.as_posix(), reaping.tree(session.worker.process.pid)]), flush=True)
time.sleep(60)
'''


@pytest.mark.parametrize("mode", list(MODES))
def test_workers_die_with_their_grader(submission, mode):
    """A grader killed outright (SIGKILL, no clean-up) takes its worker with it, in every mode."""
    import json
    import signal
    grader = subprocess.Popen([sys.executable, "-c", GRADER, str(submission), json.dumps(sorted(MODES[mode]))],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    home, pids = json.loads(grader.stdout.readline())
    os.kill(grader.pid, signal.SIGKILL)
    grader.wait()
    deadline = time.monotonic() + 5
    while (alive := [pid for pid in pids[1:] if reaping.owner(pid) is not None]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive == [], f"processes of the worker outlived its grader: {alive}"
    reaping.sweep_folders()  # what the next grader does first
    assert not Path(home).exists()


@pytest.mark.parametrize("mode", HOLDING)
def test_a_standby_worker_is_fresh_and_out_of_reach_of_the_one_serving(submission, monkeypatch, mode):
    """The worker a Standby boots for the next property lives while this one serves: nothing
    this one does (kill what it can see, leave files and globals behind) reaches it."""
    in_mode(monkeypatch, mode)
    probe = open_session(submission)
    standby = Standby(probe.layout, probe.limits)
    sessions = [Session(probe.layout, probe.limits, budget_seconds=30, standby=standby) for _ in range(2)]
    try:
        first = sessions[0].module("exercises.toy")
        uid = first.identity()[0]
        first.harm_the_next()
        booting = standby.booting
        assert booting is not None and booting.process.poll() is None, "the next worker boots while this one serves"
        sessions[0].close()
        second = sessions[1].module("exercises.toy")
        assert standby.serving is booting
        assert second.add(2, 3) == 5 and second.found_left_behind() is False
        if "uid" in MODES[mode]:
            assert second.identity()[0] != uid, "the two live workers have uids of their own"
    finally:
        for session in sessions:
            session.close()
        standby.close()


@pytest.mark.parametrize("mode", FORKING)
def test_a_forked_worker_is_fresh_and_out_of_reach_of_the_one_before(submission, monkeypatch, mode):
    """Each property's worker forked from the exercise's zygote starts from the state just after
    the import: what the one before did (kill every process it can see, leave files, globals and
    module state behind, start a process) reaches neither the zygote nor the next child."""
    in_mode(monkeypatch, mode)
    first, second = (open_session(submission, forked=True) for _ in range(2))
    second.standby = first.standby
    try:
        toy = first.module("exercises.toy")
        toy.harm_the_next()
        assert toy.remember("first") == ["first"]
        zygote = first.standby.zygote
        first.close()
        toy = second.module("exercises.toy")
        assert first.standby.zygote is zygote and zygote.alive, "the zygote outlived the child's attacks"
        assert toy.add(2, 3) == 5 and toy.found_left_behind() is False
        assert toy.remember("second") == ["second"]
    finally:
        for session in (first, second):
            session.close()
        first.standby.close()


@pytest.mark.parametrize("mode", FORKING)
def test_a_forked_worker_cannot_leave_a_file_for_the_next(submission, monkeypatch, mode):
    """A child's folder goes with it, even one it made hard to remove (a read-only folder
    inside), and no child can read another's folder or the zygote's."""
    in_mode(monkeypatch, mode)
    first = open_session(submission, forked=True)
    try:
        secret = first.module("exercises.toy").leave_locked()
        first.close()
        second = Session(first.layout, first.limits, budget_seconds=30, standby=first.standby)
        toy = second.module("exercises.toy")
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError"):
            toy.read_any(secret)
        with pytest.raises(StudentError, match="PermissionError"):
            toy.listdir(str(Path(secret).parents[2]))
        assert first.standby.zygote.alive and type(second.worker) is Child
        second.close()
    finally:
        close_session(first)


def test_student_code_never_runs_in_the_zygote(submission, monkeypatch):
    """The zygote imports only the standard library's modules the submission imports: each
    child imports the submission itself, so none inherits what another's import left (a pipe, a
    shared mapping, a thread, an at-fork hook), and no student code touches the zygote's loop."""
    if not FORKING:
        pytest.skip("no mode here can fork workers")
    in_mode(monkeypatch, FORKING[0])
    layout, limits = Layout(submission), Limits(call_seconds=3)
    standby = Standby(layout, limits, module="exercises.toy")
    assert {"os", "builtins", "subprocess"} <= set(standby.preloads) and "exercises" not in standby.preloads
    try:
        for _ in range(2):
            session = Session(layout, limits, budget_seconds=30, standby=standby)
            assert session.module("exercises.toy").imported_here() is True
            assert type(session.worker) is Child
            session.close()
    finally:
        standby.close()


def test_a_zygote_s_children_import_the_code_it_compiled_and_the_grader_writes_only_what_it_asked(
        submission, monkeypatch):
    """The zygote compiles the package's files once (in a helper, student code never run) and
    its children import that code; an answer naming a file the grader did not ask for, or
    anything but bytes, stops the zygote."""
    if not FORKING:
        pytest.skip("no mode here can fork workers")
    in_mode(monkeypatch, FORKING[0])
    layout, limits = Layout(submission), Limits(call_seconds=3)
    standby = Standby(layout, limits, module="exercises.toy")
    assert "exercises/toy.py" in standby.sources
    try:
        session = Session(layout, limits, budget_seconds=30, standby=standby)
        assert session.module("exercises.toy").read_compiled_code() is True
        zygote = standby.zygote
        for forged in ({"../../outside.py": b"x"}, {"exercises/toy.py": "text"}):
            with pytest.raises(SandboxFailure, match="answered code"):
                zygote._write_compiled(codec.encode(forged), standby.sources)
        assert not (zygote.worker.home / "outside.py").exists()
        session.close()
    finally:
        standby.close()
    fresh = open_session(submission)
    assert fresh.module("exercises.toy").read_compiled_code() is False
    close_session(fresh)


def test_a_file_named_like_the_compiled_code_s_folder_leaves_the_children_forked(submission, monkeypatch):
    if not FORKING:
        pytest.skip("no mode here can fork workers")
    in_mode(monkeypatch, FORKING[0])
    (submission / "exercises" / "__pycache__").write_text("not a folder")
    session = open_session(submission, forked=True)
    try:
        assert session.module("exercises.toy").read_compiled_code() is False  # compiled by the child itself
        assert type(session.worker) is Child
    finally:
        close_session(session)


def test_a_submission_that_names_a_file_like_the_standard_library_gets_fresh_workers(submission):
    """A submission's ``re.py`` stands in for the standard library's in a fresh worker; a zygote
    would have imported the real one for every child, so no zygote serves that submission."""
    assert preloads(submission, "exercises.toy") is not None
    (submission / "re.py").write_text("")
    assert preloads(submission, "exercises.toy") is None


def test_a_module_that_cannot_be_imported_fails_alike_in_a_forked_worker(submission, monkeypatch):
    """A forked worker imports the submission as a fresh one does: a failing import (a syntax
    error, an exception, ``sys.exit``, a missing module) is reported word for word alike."""
    if not FORKING:
        pytest.skip("no mode here can fork workers")
    in_mode(monkeypatch, FORKING[0])
    for module in ("exercises.crashes", "exercises.leaves", "exercises.broken", "exercises.missing"):
        layout, limits = Layout(submission), Limits(call_seconds=3)
        messages = []
        for standby in (None, Standby(layout, limits, module=module)):
            session = Session(layout, limits, budget_seconds=30, standby=standby)
            with pytest.raises(SandboxFailure) as caught:
                session.module(module).f()
            messages.append(str(caught.value))
            if standby is not None:
                assert type(session.worker) is Child
            close_session(session)
        assert messages[0] == messages[1], module


def test_the_worker_starts_on_compiled_code_without_the_heavy_imports(tmp_path, monkeypatch):
    """What a worker imports at each start (about 75 starts a grading): its own modules from the
    compiled code the grader made once (wherever the grader's Python keeps its own, and naming
    no folder of the grader's), and none of json, re, enum, typing or traceback, which were two
    thirds of a start's imports, nor functools and collections (a named tuple's decoding
    imports them), which were half of what was left."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))  # PYTHONPYCACHEPREFIX
    inside.compiled_files.cache_clear()
    try:
        code = inside.compiled_files()
    finally:
        inside.compiled_files.cache_clear()
    assert not (tmp_path / "prefix").exists()
    for name, data in code.items():
        if name.endswith(".pyc"):
            assert marshal.loads(data[16:]).co_filename == Path(name).name.split(".")[0] + ".py"
    inside.write_files(tmp_path)
    assert sorted(p.name for p in (tmp_path / "__pycache__").iterdir()) == sorted(
        f"{Path(name).stem}.{sys.implementation.cache_tag}.pyc" for name in inside.FILES)
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import worker, zygote_loop; print(' '.join(sys.modules))"
    run = subprocess.run([sys.executable, "-S", "-s", "-P", "-B", "-v", "-c", probe, str(tmp_path)],
                         capture_output=True, text=True, check=True)
    loaded = set(run.stdout.split())
    assert {"worker", "zygote_loop", "codec", "cpython", "frames", "landlock"} <= loaded
    assert not loaded & {"json", "re", "enum", "typing", "traceback", "signal", "base64", "functools", "collections",
                              "importlib"}
    for name in inside.FILES:  # python -v names the file each module's code came from
        assert f"code object from '{tmp_path}/__pycache__/{Path(name).stem}." in run.stderr, name


def test_an_exception_is_reported_when_the_student_used_up_the_open_files(session):
    """The worker reads the student's frames only when an exception needs them (importing
    traceback then): with no file left to open, the exception still comes back, without frames."""
    with pytest.raises(StudentError, match="raised ValueError: bad input"):
        session.module("exercises.toy").raise_without_files()


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists(),
                    reason="needs root and a cgroup v1 cpu hierarchy")
def test_a_grader_process_and_its_workers_share_one_core_s_cpu_cgroup(tmp_path):
    """A grader process (a lane of a batch) moves into a CPU cgroup of its own, capped at one core,
    before it starts any worker: what it starts inherits it, however many processes a submission
    starts beside it."""
    from autograder.batch.grader import GraderProcess
    from autograder.config import load_course

    course = load_course(ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml")
    with GraderProcess(course, core=0) as grader:
        process = grader._start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lanes = [line.split(":", 2)[2] for line in Path(f"/proc/{process.pid}/cgroup").read_text().splitlines()
                     if "cpu" in line.split(":", 2)[1].split(",")]
            if lanes and lanes[0].endswith("-lane"):
                break
            time.sleep(0.05)
        lane = Path("/sys/fs/cgroup/cpu") / lanes[0].lstrip("/")
        assert lane.name == f"autograder-{process.pid}-lane", lane
        period, quota = (int((lane / name).read_text()) for name in ("cpu.cfs_period_us", "cpu.cfs_quota_us"))
        assert quota == period and (lane / "cpu.shares").read_text().strip() == "1024"
        assert str(process.pid) in (lane / "cgroup.procs").read_text().split()
