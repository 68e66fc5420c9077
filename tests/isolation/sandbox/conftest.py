"""What the sandbox's tests share: a tiny submission of attacks, sessions on it, and every
isolation mode this machine can make, fresh and forked."""

from pathlib import Path

import pytest

from autograder import isolation as sandbox
from autograder.engine.session import Session
from autograder.isolation import Layout, Standby, detect
from autograder.isolation import WorkerLimits as Limits
from autograder.isolation.zygote import forks

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

def hard_exit(code=0):
    os._exit(code)

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

def load_libraries():
    import lzma, sqlite3  # extension modules that load system libraries once imported
    return sqlite3.connect(":memory:").execute("select 1").fetchone()[0] == 1 and lzma.compress(b"x") != b""

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
    try:
        child = subprocess.Popen(["unshare", "-Urm", "sh", "-c", script])
    except OSError:  # not even started: a worker may run no program of the machine's
        return -1
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
