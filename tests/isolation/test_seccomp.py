"""autograder.isolation.inside.seccomp: a worker makes only the system calls it needs.

Every check that installs the filter runs in a fresh Python subprocess, because it is for good:
the test process itself is never restricted. Each refused call is first shown to work
unconfined (as root where it needs root), so a test cannot pass merely because its setting is
broken; where it cannot work on this machine the test is skipped, saying why. The filter's
code is also run in Python (``tests/isolation/measure_syscalls.py``'s BPF interpreter) on every call
number of both machines it knows.
"""

import errno
import os
import subprocess
import sys
import textwrap

import pytest

from autograder.isolation.inside import FOLDER as INSIDE
from autograder.isolation.inside import seccomp
from tests.conftest import ROOT
from tests.isolation.measure_syscalls import answer, confined_calls, header_numbers, run_filter

pytestmark = [pytest.mark.sandbox]

MACHINE = seccomp.machine()
# Calls the filter refuses by leaving them out, which these tests make: (x86_64, aarch64)
OTHERS = {
    "unshare": (272, 97), "setns": (308, 268), "userfaultfd": (323, 282), "fsopen": (430, 430),
    "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433), "open_tree": (428, 428),
    "move_mount": (429, 429), "mount": (165, 40), "chroot": (161, 51), "pivot_root": (155, 41),
    "sysinfo": (99, 179), "mincore": (27, 232), "cachestat": (451, 451), "fadvise64": (221, 223),
    "readahead": (187, 213), "sched_setaffinity": (203, 122), "sched_setattr": (314, 274),
    "sched_setscheduler": (144, 119), "sched_setparam": (142, 118), "setpriority": (141, 140),
    "ioprio_set": (251, 30), "setsid": (112, 157), "process_vm_readv": (310, 270), "pidfd_open": (434, 434),
    "inotify_init1": (294, 26), "getrusage": (98, 165),
}
NUMBERS = {name: pair[seccomp.MACHINES[MACHINE][1]] for name, pair in {**seccomp.NUMBERS, **OTHERS}.items()}

# The worker's copy of seccomp.py, imported as a worker imports it (its folder first on sys.path): the
# autograder package, which these processes never need, would cost most of each one's start.
PRELUDE = """
import ctypes, errno, mmap, os, signal, socket, struct, sys, threading
sys.path.insert(0, {inside!r})
import seccomp
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NUMBERS = {numbers!r}
TARGET = {target!r}.encode()

def call(name, *args):
    values = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    result = libc.syscall(ctypes.c_long(NUMBERS[name]), *values)
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result

def outcome(action, *args):
    try:
        action(*args)
    except OSError as error:
        return errno.errorcode[error.errno]
    return "ok"

def clone_in(namespaces):
    pid = call("clone", namespaces | signal.SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
"""


def run(code: str, target: str = "/nonexistent", **names) -> str:
    """Run PRELUDE + ``code`` (formatted with ``names``) in a new interpreter; return its stdout."""
    source = PRELUDE.format(numbers=NUMBERS, target=target, inside=str(INSIDE)) + textwrap.dedent(code).format(**names)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


# Each call the filter must refuse: (what it is, what it needs made first, the call, the errno)
PRIVATE_MOUNTS = "call('unshare', 0x20000); call('mount', b'none', b'/', None, 0x44000, None)"  # MS_REC|MS_PRIVATE
TMPFS_MOUNT = "context = call('fsopen', b'tmpfs', 0); call('fsconfig', context, 6, None, None, 0)"  # CMD_CREATE
A_FILE = "file = os.open(sys.executable, os.O_RDONLY); os.read(file, 4096)"
DIRECT = ("file = os.open(TARGET + b'/direct', os.O_RDWR | os.O_CREAT | os.O_DIRECT); page = mmap.mmap(-1, 4096);"
          "os.pwritev(file, [page], 0); os.fsync(file)")  # allocated and written: an overwrite need not wait
NOT_SUPPORTED = errno.errorcode[errno.EOPNOTSUPP]
MEMORY = "memory = mmap.mmap(-1, 1 << 16, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS); memory.write(b'x' * (1 << 16))"
REFUSALS = [
    # namespaces, mounts, roots
    ("unshare a user namespace", "", "call('unshare', 0x10000000)", "EPERM"),
    ("unshare a mount namespace", "", "call('unshare', 0x20000)", "EPERM"),
    ("unshare a network namespace", "", "call('unshare', 0x40000000)", "EPERM"),
    ("clone a process in a new user namespace", "", "clone_in(0x10000000)", "EPERM"),
    ("clone a process in a new network namespace", "", "clone_in(0x40000000)", "EPERM"),
    ("setns", "own = os.open('/proc/self/ns/uts', os.O_RDONLY)", "call('setns', own, 0x04000000)", "EPERM"),
    ("userfaultfd", "", "os.close(call('userfaultfd', os.O_CLOEXEC | 1))", "EPERM"),  # UFFD_USER_MODE_ONLY
    ("fsopen", "", "os.close(call('fsopen', b'tmpfs', 0))", "EPERM"),
    ("fsconfig", "context = call('fsopen', b'tmpfs', 0)", "call('fsconfig', context, 6, None, None, 0)", "EPERM"),
    ("fsmount", TMPFS_MOUNT, "os.close(call('fsmount', context, 0, 0))", "EPERM"),
    ("fspick", "", "os.close(call('fspick', -100, b'/', 0))", "EPERM"),
    ("open_tree", PRIVATE_MOUNTS, "os.close(call('open_tree', -100, b'/', 1))", "EPERM"),  # OPEN_TREE_CLONE
    ("move_mount", f"{PRIVATE_MOUNTS}; {TMPFS_MOUNT}; mounted = call('fsmount', context, 0, 0)",
     "call('move_mount', mounted, b'', -100, TARGET, 4)", "EPERM"),  # MOVE_MOUNT_F_EMPTY_PATH
    ("mount", PRIVATE_MOUNTS, "call('mount', b'none', TARGET, b'tmpfs', 0, None)", "EPERM"),
    ("chroot", "", "call('chroot', b'/')", "EPERM"),
    ("pivot_root", f"{PRIVATE_MOUNTS}; call('mount', b'none', TARGET, b'tmpfs', 0, None); os.mkdir(TARGET + b'/old')",
     "call('pivot_root', TARGET, TARGET + b'/old')", "EPERM"),
    ("sysinfo", "", "call('sysinfo', ctypes.create_string_buffer(256))", "EPERM"),
    # what reads or changes which pages are cached (item 4)
    ("preadv2 with RWF_NOWAIT", A_FILE, "os.preadv(file, [bytearray(16)], 0, os.RWF_NOWAIT)", NOT_SUPPORTED),
    ("pwritev2 with RWF_NOWAIT", DIRECT, "os.pwritev(file, [page], 0, os.RWF_NOWAIT)", NOT_SUPPORTED),
    ("mincore", MEMORY, "call('mincore', ctypes.addressof(ctypes.c_char.from_buffer(memory)), 4096,"
     " ctypes.create_string_buffer(1))", "EPERM"),
    ("cachestat", A_FILE, "call('cachestat', file, ctypes.create_string_buffer(16), ctypes.create_string_buffer(64),"
     " 0)", "EPERM"),
    ("fadvise64", A_FILE, "os.posix_fadvise(file, 0, 0, os.POSIX_FADV_DONTNEED)", "EPERM"),
    ("readahead", A_FILE, "call('readahead', file, 0, 4096)", "EPERM"),
    ("getrusage (its major faults)", "", "call('getrusage', 0, ctypes.create_string_buffer(144))", "EPERM"),
    ("wait4 with a child's resource usage", "child = os.fork()\nif child == 0: os._exit(0)", "os.wait4(child, 0)",
     "EPERM"),
    *[(f"madvise {advice}", MEMORY, f"memory.madvise({value})", "EPERM")
      for advice, value in (("MADV_DONTNEED", 4), ("MADV_FREE", 8), ("MADV_COLD", 20), ("MADV_PAGEOUT", 21))],
    # scheduling: a worker keeps what it was started with (item 3)
    ("sched_setaffinity", "", "os.sched_setaffinity(0, os.sched_getaffinity(0))", "EPERM"),
    ("sched_setattr", "attr = struct.pack('=IIQiIQQQ', 48, 0, 0, os.getpriority(os.PRIO_PROCESS, 0), 0, 0, 0, 0)",
     "call('sched_setattr', 0, attr, 0)", "EPERM"),
    ("sched_setscheduler", "", "os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))", "EPERM"),
    ("sched_setparam", "", "os.sched_setparam(0, os.sched_param(0))", "EPERM"),
    ("setpriority", "", "os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0))", "EPERM"),
    ("ioprio_set", "now = call('ioprio_get', 1, 0)", "call('ioprio_set', 1, 0, now)", "EPERM"),  # IOPRIO_WHO_PROCESS
    ("setsid", "", "os.setsid()", "EPERM"),
]


@pytest.mark.parametrize("what, setup, action, error", REFUSALS, ids=[case[0] for case in REFUSALS])
def test_a_call_no_worker_needs_is_refused(what, setup, action, error, tmp_path):
    """The call works in a process of its own unconfined, and fails with ``error`` once the
    process has a worker's filter (one without a pid namespace of its own, which may start processes)."""
    code = """
        {setup}
        if {confine}:
            seccomp.restrict(processes=False, pid_namespace=False)
        print(outcome(lambda: {action}))
    """
    unconfined = run(code, str(tmp_path), setup=setup, action=action, confine=False).strip()
    if unconfined != "ok":
        pytest.skip(f"{what} does not work here even unconfined ({unconfined})")
    assert run(code, str(tmp_path), setup=setup, action=action, confine=True).strip() == error


def test_signals_reach_only_the_worker_itself_where_other_pids_are_visible():
    """Without a pid namespace of its own a worker signals itself, its threads and its process
    group; a foreign pid fails with EPERM whether it runs or not, so ``kill(pid, 0)`` tells
    nothing (unconfined: 0 for a process that runs, ESRCH for one that does not)."""
    code = """
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)  # a pid that runs no more
        caught = []
        signal.signal(signal.SIGUSR1, lambda *_: caught.append(1))
        if {confine}:
            seccomp.restrict(processes=False, pid_namespace=False)
        thread = threading.Thread(target=lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1))
        thread.start()
        thread.join()
        print(outcome(os.kill, os.getppid(), 0), outcome(os.kill, child, 0), outcome(os.kill, os.getpid(), 0),
              outcome(os.kill, 0, 0), outcome(os.kill, os.getpid(), signal.SIGUSR1), len(caught))
    """
    assert run(code, confine=False).split() == ["ok", "ESRCH", "ok", "ok", "ok", "2"]
    assert run(code, confine=True).split() == ["EPERM", "EPERM", "ok", "ok", "ok", "2"]


def test_the_tables_name_each_call_by_its_number_on_both_machines():
    """Each number of the filter's tables (and of this test's) is the one the kernel's headers on
    this machine give that name, on x86_64 and on aarch64 (the generic table), where present;
    a call a machine does not have is not in its header."""
    checked = 0
    for machine, column in (("x86_64", 0), ("aarch64", 1)):
        header = header_numbers(machine)
        if not header:
            continue
        for name, pair in {**seccomp.NUMBERS, **OTHERS}.items():
            if pair[column] is None:
                assert name not in header, (machine, name)
            elif name in header:  # newer than the header: the same number on every machine
                assert header[name] == pair[column], (machine, name, header[name], pair[column])
                checked += 1
            else:
                assert pair[column] >= 424 and pair[0] == pair[1], (machine, name)
    if checked == 0:
        pytest.skip("no kernel header here to check the tables against")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_answers_each_call_as_its_rules_say(machine):
    """The filter's code, run on every call number of ``machine``: each call allowed whatever its
    arguments is allowed, each refused with its errno gets it, a number the rules do not name
    gets EPERM, another machine's calling convention is killed and x32's refused."""
    arch, column, x32 = seccomp.MACHINES[machine]
    table = seccomp.rules(processes=True, metadata=True, pid_namespace=False, own_pid=4321)
    code = seccomp.program(machine, processes=True, metadata=True, pid_namespace=False, own_pid=4321)
    named = {pair[column]: name for name, pair in seccomp.NUMBERS.items() if pair[column] is not None}
    for nr in range(max(named) + 64):
        said = run_filter(code, arch, nr, [7, 7, 7, 7, 7, 7])
        action = table.get(named.get(nr), seccomp.refuse(errno.EPERM))
        if not isinstance(action, tuple):
            assert said == action, (machine, named.get(nr, nr), answer(said))
    assert run_filter(code, arch ^ 1, 0, []) == seccomp.KILL_PROCESS
    if x32:
        assert answer(run_filter(code, arch, 0x40000000, [])) == "Operation not permitted (1)"


def checked(machine: str, name: str, args: list[int], **settings) -> str:
    arch, column, _ = seccomp.MACHINES[machine]
    options = {"processes": False, "metadata": True, "pid_namespace": False, "own_pid": 4321, **settings}
    return answer(run_filter(seccomp.program(machine, **options), arch, seccomp.NUMBERS[name][column], args))


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_argument_checks_allow_what_they_name_and_refuse_the_rest(machine):
    eperm = "Operation not permitted (1)"
    assert checked(machine, "prlimit64", [0, 7]) == "allow" and checked(machine, "prlimit64", [1, 7]) == eperm
    assert checked(machine, "getpriority", [0, 0]) == "allow"
    assert checked(machine, "getpriority", [0, 1]) == checked(machine, "getpriority", [2, 0]) == eperm
    assert checked(machine, "kill", [4321, 9]) == checked(machine, "kill", [0, 9]) == "allow"
    assert checked(machine, "kill", [1, 0]) == checked(machine, "tgkill", [1, 1, 0]) == eperm
    assert checked(machine, "kill", [1, 0], pid_namespace=True) == "allow"
    assert checked(machine, "clone", [0x10000 | 0x100]) == "allow"  # a thread
    assert checked(machine, "clone", [0x1200011]) == "allow"  # fork's
    assert checked(machine, "clone", [0x1200011], processes=True) == "Resource temporarily unavailable (11)"
    assert checked(machine, "clone", [0x10000 | 0x100], processes=True) == "allow"
    for namespace in (0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000):
        assert checked(machine, "clone", [namespace | 17]) == eperm
    assert checked(machine, "clone3", [0, 88]) == "Function not implemented (38)"
    assert checked(machine, "fcntl", [3, 1]) == "allow"
    assert checked(machine, "fcntl", [3, 6]) == "No locks available (37)"  # F_SETLK
    assert checked(machine, "fcntl", [3, 1024]) == eperm  # F_SETLEASE
    assert checked(machine, "ioctl", [3, 0x5401]) == "allow" and checked(machine, "ioctl", [3, 0x40086602]) == eperm
    assert checked(machine, "ioctl", [3, 0x5412]) == "Inappropriate ioctl for device (25)"  # TIOCSTI
    assert checked(machine, "prctl", [38]) == "allow" and checked(machine, "prctl", [62]) == eperm  # PR_SCHED_CORE
    assert checked(machine, "madvise", [0, 0, 14]) == "allow" and checked(machine, "madvise", [0, 0, 3]) == eperm
    assert checked(machine, "preadv2", [3, 0, 1, 0, 0, 0]) == "allow"
    assert checked(machine, "utimensat", []) == "succeeds, changes nothing"
    assert checked(machine, "fchmodat", []) == "succeeds, changes nothing"
    assert checked(machine, "fchmodat", [], metadata=False) == "allow"
    assert checked(machine, "socket", [2, 1]) == "Permission denied (13)"


def test_it_keeps_socketpair():
    run("""
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        seccomp.restrict()
        for family, kind in [(socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_DGRAM),
                             (socket.AF_INET6, socket.SOCK_STREAM), (socket.AF_UNIX, socket.SOCK_STREAM)]:
            assert outcome(socket.socket, family, kind) == "EACCES", (family, kind)
        left, right = socket.socketpair()
        left.sendall(b"ok")
        assert right.recv(2) == b"ok"
        assert os.system("true") == 0
    """)


def test_it_keeps_each_process_to_itself():
    """Limits, priority, affinity and scheduling of another process of the same uid (here: the
    parent) cannot be read; the caller's own (pid 0) can, as the C library asks."""
    code = """
        import resource
        parent = os.getppid()
        calls = {{
            "prlimit": lambda pid: resource.prlimit(pid, resource.RLIMIT_NOFILE),
            "getpriority": lambda pid: os.getpriority(os.PRIO_PROCESS, pid),
            "affinity": lambda pid: os.sched_getaffinity(pid),
            "scheduler": lambda pid: os.sched_getscheduler(pid),
            "getsid": lambda pid: os.getsid(pid),
        }}
        if {confine}:
            seccomp.restrict()
        for name, action in calls.items():
            action(0)
            print(name, outcome(action, parent))
        print("user", outcome(os.setpriority, os.PRIO_USER, 0, 0))
        print("pidfd_open", outcome(os.pidfd_open, parent))
        print("process_vm_readv", outcome(call, "process_vm_readv", parent, None, 0, None, 0, 0))
    """
    unconfined = run(code, confine=False).split()
    assert unconfined[1::2] == ["ok"] * (len(unconfined) // 2), unconfined
    confined = run(code, confine=True).split()
    assert confined[1::2] == ["EPERM"] * (len(confined) // 2), confined


@pytest.fixture
def tree(tmp_path):
    """tmp/read/file, tmp/write/: a file to change the metadata of, a folder to copy it into."""
    for name in ("read", "write"):
        (tmp_path / name).mkdir()
    (tmp_path / "read" / "file").write_text("read")
    return tmp_path


def test_it_changes_no_file_metadata(tree):
    """A file's mode (chmod succeeds and changes nothing, so shutil.copy still works), owner,
    extended attributes and inode flags stay as they were; a zygote (``metadata=False``) keeps
    chmod for its cleaning, and :func:`deny_metadata` takes it from its children."""
    code = """
        import fcntl, shutil
        path = {tmp!r} + "/read/file"
        if {how!r} == "all":
            seccomp.restrict()
        elif {how!r} != "none":
            seccomp.restrict(metadata=False)
            os.chmod(path, 0o600)
            if {how!r} == "child":
                seccomp.deny_metadata()
        os.chmod(path, 0o640)
        shutil.copy(path, {tmp!r} + "/write/copy")
        print(oct(os.stat(path).st_mode & 0o777))
        print(outcome(os.chown, path, os.getuid(), os.getgid()) == "EPERM")
        print(outcome(os.setxattr, path, "user.autograder", b"x") == "EPERM", os.listxattr(path))
        with open(path, "rb") as file:
            flags = bytearray(8)
            fcntl.ioctl(file, 0x80086601, flags)  # FS_IOC_GETFLAGS
            print(outcome(fcntl.ioctl, file, 0x40086602, flags) == "EPERM")  # FS_IOC_SETFLAGS, the same flags
    """
    assert run(code, how="none", tmp=str(tree)).split() == ["0o640", "False", "False", "['user.autograder']",
                                                              "False"]
    os.removexattr(tree / "read" / "file", "user.autograder")
    (tree / "read" / "file").chmod(0o644)
    for how in ("all", "child"):
        assert run(code, how=how, tmp=str(tree)).split() == ["0o644" if how == "all" else "0o600", "True", "True",
                                                             "[]", "True"], how
    assert run(code, how="zygote", tmp=str(tree)).split()[0] == "0o640"


def test_it_leaves_no_lock_and_no_watch(tree):
    """flock, fcntl's record locks, leases and F_NOTIFY, inotify and fanotify are refused: two
    workers that open one file could signal each other through its locks."""
    code = """
        import fcntl
        def inotify():
            if libc.inotify_init1(0) < 0:
                raise OSError(ctypes.get_errno(), "inotify_init1")

        if {confine}:
            seccomp.restrict()
        file = open({tmp!r} + "/read/file", "rb")
        lock = struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0)
        tries = {{
            "flock": lambda: fcntl.flock(file, fcntl.LOCK_SH | fcntl.LOCK_NB),
            "lockf": lambda: fcntl.lockf(file, fcntl.LOCK_SH | fcntl.LOCK_NB),
            "getlk": lambda: fcntl.fcntl(file, fcntl.F_GETLK, lock),
            "ofd": lambda: fcntl.fcntl(file, fcntl.F_OFD_SETLK, lock),
            "notify": lambda: fcntl.fcntl(os.open({tmp!r}, os.O_RDONLY), fcntl.F_NOTIFY, fcntl.DN_CREATE),
            "inotify": inotify,
        }}
        for name, action in tries.items():
            print(name, outcome(action) != "ok")
        print("getfl", outcome(fcntl.fcntl, file, fcntl.F_GETFL) != "ok")
    """
    assert all(line.endswith("False") for line in run(code, confine=False, tmp=str(tree)).splitlines())
    said = run(code, confine=True, tmp=str(tree)).splitlines()
    assert said[:-1] == [f"{name} True" for name in ("flock", "lockf", "getlk", "ofd", "notify", "inotify")], said
    assert said[-1] == "getfl False"


def test_with_processes_refused_it_starts_threads_only():
    run("""
        seccomp.restrict(processes=True)
        assert outcome(os.fork) == "EAGAIN"
        assert os.system("true") != 0
        done = []
        thread = threading.Thread(target=done.append, args=[1])
        thread.start()
        thread.join()
        assert done == [1]
    """)


def test_the_runtime_reuses_its_memory_without_the_advice_that_frees_pages():
    """glibc's malloc, pymalloc and threads' stacks keep working without MADV_DONTNEED and
    MADV_FREE (which they use only to hand memory back): a loop that allocates and frees 64 MB
    in threads, 30 times, peaks within 100 MB of its first round (memory never reused would
    pass 1.5 GB; how the threads overlap moves the peak by tens of MB), with every result right."""
    code = """
        seccomp.restrict(processes=True)
        def work(size):
            blocks = [bytearray(size) for _ in range(16)]
            return sum(len(block) for block in blocks) + len({{str(n): n for n in range(20000)}})
        sizes = []
        for round in range(30):
            threads, results = [], []
            for _ in range(4):
                threads.append(threading.Thread(target=lambda: results.append(work(1 << 20))))
                threads[-1].start()
            for thread in threads:
                thread.join()
            assert results == [16 * (1 << 20) + 20000] * 4, results
            with open("/proc/self/status") as status:
                sizes.append(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")))
        print(sizes[0], sizes[-1])
    """
    first, last = map(int, run(code).split())
    assert last < first + 100_000, (first, last)  # kB


def test_the_measurement_counts_the_calls_made_under_a_filter(tmp_path):
    """tests/isolation/measure_syscalls.py's reading of strace's files: a process's calls after the
    prctl that installs its filter, and every call of the processes and threads it starts
    after that (named by their pid outside a pid namespace), count; nothing before does."""
    (tmp_path / "trace.100").write_text(
        "clone(child_stack=NULL, flags=0x1200000|17, child_tidptr=0x7f0) = 101\n"
        "read(3, \"\"..., 4096) = 5\n"
        "prctl(0x16, 0x2, 0x7ffd12345678, 0, 0) = 0\n"
        "kill(2 /* 104 in strace's PID NS */, 0x9) = 0\n"
        "clone(child_stack=NULL, flags=0x1200000|17, child_tidptr=0x7f0) = 3 /* 102 in strace's PID NS */\n"
        "write(4, \"\"..., 18 <unfinished ...>\n")
    (tmp_path / "trace.101").write_text("getpid() = 101\n")
    (tmp_path / "trace.102").write_text("ioctl(5, 0x5401, 0x7ffed95c1e80) = -1 ENOTTY (Inappropriate ioctl)\n")
    assert dict(confined_calls(tmp_path)) == {("kill", (2, 9)): 1, ("clone", (0x1200011, 0, 0, 0x7F0, 0)): 1,
                                              ("write", (4, None, 18)): 1, ("ioctl", (5, 0x5401, None)): 1}
