"""autograder.isolation.inside.landlock confines a process against this kernel: files, TCP, signals, mounts, sockets.

Every check runs in a fresh Python subprocess, because confinement is for good: the test
process itself is never restricted. Each check first shows the action works unconfined, so
a test cannot pass merely because its setting is broken.
"""

import errno
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap

import pytest

from autograder.isolation.inside import landlock
from tests.conftest import ROOT

ABI = landlock.abi()
pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(ABI == 0, reason="Landlock is not available or not enabled in this kernel")]

PRELUDE = """
import ctypes, errno, os, socket, sys
from autograder.isolation.inside import landlock
SYSTEM = [sys.base_prefix, sys.prefix, {root!r}, "/usr", "/bin", "/lib", "/lib64", "/etc"]

def denied(action, *args, error=PermissionError):
    try:
        action(*args)
    except error:
        return True
    return False
"""


def run(code: str, **names) -> str:
    """Run PRELUDE + ``code`` (formatted with ``names``) in a new interpreter; return its stdout."""
    source = PRELUDE.format(root=str(ROOT)) + textwrap.dedent(code).format(**names)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def tree(tmp_path):
    """tmp/read/file, tmp/write/, tmp/secret/file: one folder for each kind of rule."""
    for name in ("read", "write", "secret"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "file").write_text(name)
    return tmp_path


def test_reads_only_allowed_paths_also_in_children(tree):
    run("""
        import subprocess
        def cat(path):
            return subprocess.run(["cat", path], capture_output=True, text=True).stdout
        secret = {tmp!r} + "/secret/file"
        assert open(secret).read() == cat(secret) == "secret"
        assert landlock.restrict(SYSTEM + [{tmp!r} + "/read"], []) == {abi}
        assert open({tmp!r} + "/read/file").read() == cat({tmp!r} + "/read/file") == "read"
        assert denied(open, secret)
        assert cat(secret) == ""  # a child is confined too
    """, tmp=str(tree), abi=ABI)


def test_a_single_file_rule_allows_that_file_only(tree):
    (tree / "secret" / "other").write_text("other")
    run("""
        landlock.restrict(SYSTEM + [{tmp!r} + "/secret/file"], [{tmp!r} + "/secret/file"])
        assert open({tmp!r} + "/secret/file").read() == "secret"
        open({tmp!r} + "/secret/file", "a").write("!")
        assert denied(open, {tmp!r} + "/secret/other")
    """, tmp=str(tree))


def test_listing_a_forbidden_folder_fails(tree):
    run("""
        assert os.listdir({tmp!r} + "/secret") == ["file"]
        landlock.restrict(SYSTEM + [{tmp!r} + "/read"], [{tmp!r} + "/write"])
        assert os.listdir({tmp!r} + "/read") == ["file"]
        assert denied(os.listdir, {tmp!r} + "/secret")
        assert denied(os.listdir, {tmp!r})
    """, tmp=str(tree))


def test_writes_only_inside_the_write_folder(tree):
    run("""
        landlock.restrict(SYSTEM + [{tmp!r} + "/read"], [{tmp!r} + "/write"])
        w = {tmp!r} + "/write"
        open(w + "/new", "w").write("x")
        os.mkdir(w + "/sub")
        os.rename(w + "/new", w + "/sub/moved")
        os.truncate(w + "/file", 0)
        os.unlink(w + "/sub/moved")
        os.rmdir(w + "/sub")
        assert denied(open, {tmp!r} + "/read/file", "a")
        assert denied(open, {tmp!r} + "/read/new", "w")
        assert denied(os.mkdir, {tmp!r} + "/read/sub")
        assert denied(open, {tmp!r} + "/outside", "w")
        assert denied(os.rename, w + "/file", {tmp!r} + "/read/moved")
    """, tmp=str(tree))
    assert not (tree / "outside").exists() and (tree / "write" / "file").read_text() == ""


@pytest.fixture
def listener():
    """A TCP socket of the test process, listening on 127.0.0.1: its port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@pytest.mark.skipif(ABI < 4, reason="TCP rules need Landlock ABI 4")
def test_tcp_connect_is_denied_unless_allowed(listener):
    run("""
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
        landlock.restrict(SYSTEM, [])
        assert denied(socket.create_connection, ("127.0.0.1", {port}), 2)
        assert denied(socket.create_server, ("127.0.0.1", 0))
    """, port=listener)
    run("""
        landlock.restrict(SYSTEM, [], tcp=True)
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    """, port=listener)


@pytest.mark.skipif(ABI < 6, reason="signal scoping needs Landlock ABI 6")
def test_no_signal_to_a_process_outside_the_domain():
    run("""
        os.kill(os.getppid(), 0)
        landlock.restrict(SYSTEM, [])
        assert denied(os.kill, os.getppid(), 0)
        os.kill(os.getpid(), 0)
    """)


def test_no_new_mount_even_in_an_own_user_namespace(tree):
    code = """
        libc = ctypes.CDLL(None, use_errno=True)
        if {confine}:
            landlock.restrict(SYSTEM, [{tmp!r} + "/write"])
        assert libc.unshare(0x10000000 | 0x00020000) == 0, "unshare CLONE_NEWUSER|CLONE_NEWNS"
        result = libc.mount(b"none", {tmp!r}.encode() + b"/write", b"tmpfs", 0, None)
        print(result, ctypes.get_errno())
    """
    if run(code, confine=False, tmp=str(tree)).split()[0] != "0":
        pytest.skip("this machine lets no one mount a tmpfs in a new user namespace")
    assert run(code, confine=True, tmp=str(tree)).split() == ["-1", str(errno.EPERM)]


def test_deny_syscalls_keeps_socketpair():
    run("""
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        landlock.deny_syscalls()
        for family, kind in [(socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_DGRAM),
                             (socket.AF_INET6, socket.SOCK_STREAM), (socket.AF_UNIX, socket.SOCK_STREAM)]:
            assert denied(socket.socket, family, kind), (family, kind)
        left, right = socket.socketpair()
        left.sendall(b"ok")
        assert right.recv(2) == b"ok"
        assert os.system("true") == 0
    """)


def test_missing_paths_are_skipped_and_unopenable_ones_named(tree):
    (tree / "loop").symlink_to(tree / "loop")
    run("""
        missing = [{tmp!r} + "/missing", {tmp!r} + "/read/file/below"]
        assert landlock.restrict(SYSTEM + missing, missing) == landlock.abi()
        assert denied(open, {tmp!r} + "/read/file")
    """, tmp=str(tree))
    run("""
        try:
            landlock.restrict(SYSTEM + [{tmp!r} + "/loop"], [])
        except OSError as error:
            assert error.errno == errno.ELOOP and {tmp!r} + "/loop" in str(error), error
        else:
            raise AssertionError("a path that cannot be opened was accepted")
        assert open({tmp!r} + "/secret/file").read() == "secret"  # nothing was restricted
    """, tmp=str(tree))


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="needs root to start a child as nobody, and a system python3")
def test_copied_alone_it_confines_an_unprivileged_process():
    folder = tempfile.mkdtemp(dir="/tmp")
    try:
        os.chmod(folder, 0o755)
        shutil.copy(ROOT / "autograder" / "isolation" / "inside" / "landlock.py", folder)
        code = ("import landlock, os\n"
                f"assert os.listdir({folder!r}) == ['landlock.py']\n"
                "landlock.restrict(['/usr', '/lib', '/lib64', '/etc'], [])\n"
                "try:\n"
                f"    os.listdir({folder!r})\n"
                "except PermissionError:\n"
                "    print('denied')")
        done = subprocess.run(["/usr/bin/python3", "-c", code], cwd=folder, user=65534, group=65534,
                              extra_groups=[], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["denied"]
    finally:
        shutil.rmtree(folder)


def test_deny_syscalls_keeps_each_process_to_itself():
    """Limits, priority, affinity and scheduling of another process of the same uid (here: the
    parent) can be neither read nor set; the caller's own (pid 0) can, as the C library asks."""
    code = """
        import resource
        parent = os.getppid()
        calls = {{
            "prlimit": lambda pid: resource.prlimit(pid, resource.RLIMIT_NOFILE),
            "getpriority": lambda pid: os.getpriority(os.PRIO_PROCESS, pid),
            "setpriority": lambda pid: os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid)),
            "affinity": lambda pid: os.sched_setaffinity(pid, os.sched_getaffinity(pid)),
            "scheduler": lambda pid: os.sched_getscheduler(pid),
        }}
        if {confine}:
            landlock.deny_syscalls()
        for name, call in calls.items():
            call(0)
            print(name, "denied" if denied(call, parent) else "allowed")
        print("user", "denied" if denied(os.setpriority, os.PRIO_USER, 0, 0) else "allowed")
        print("pidfd_open", "denied" if denied(os.pidfd_open, parent) else "allowed")
        if os.uname().machine == "x86_64":  # nothing read: no buffers
            print("process_vm_readv", "denied" if denied(landlock._syscall, "x", 310, parent, None, 0, None, 0, 0)
                  else "allowed")
    """
    unconfined = run(code, confine=False).split()
    assert unconfined[1::2] == ["allowed"] * (len(unconfined) // 2), unconfined
    confined = run(code, confine=True).split()
    assert confined[1::2] == ["denied"] * (len(confined) // 2), confined


def test_deny_syscalls_changes_no_file_metadata(tree):
    """A file's mode (chmod succeeds and changes nothing, so shutil.copy still works), owner,
    extended attributes and inode flags stay as they were; a zygote (``metadata=False``) keeps
    chmod for its cleaning, and :func:`deny_metadata` takes it from its children."""
    code = """
        import fcntl, shutil
        path = {tmp!r} + "/read/file"
        if {how!r} == "all":
            landlock.deny_syscalls()
        elif {how!r} != "none":
            landlock.deny_syscalls(metadata=False)
            os.chmod(path, 0o600)
            if {how!r} == "child":
                landlock.deny_metadata()
        os.chmod(path, 0o640)
        shutil.copy(path, {tmp!r} + "/write/copy")
        print(oct(os.stat(path).st_mode & 0o777))
        print(denied(os.chown, path, os.getuid(), os.getgid()))
        print(denied(os.setxattr, path, "user.autograder", b"x"), os.listxattr(path))
        with open(path, "rb") as file:
            flags = bytearray(8)
            fcntl.ioctl(file, 0x80086601, flags)  # FS_IOC_GETFLAGS
            print(denied(fcntl.ioctl, file, 0x40086602, flags))  # FS_IOC_SETFLAGS, the same flags
    """
    assert run(code, how="none", tmp=str(tree)).split() == ["0o640", "False", "False", "['user.autograder']",
                                                              "False"]
    os.removexattr(tree / "read" / "file", "user.autograder")
    (tree / "read" / "file").chmod(0o644)
    for how in ("all", "child"):
        assert run(code, how=how, tmp=str(tree)).split() == ["0o644" if how == "all" else "0o600", "True", "True",
                                                             "[]", "True"], how
    assert run(code, how="zygote", tmp=str(tree)).split()[0] == "0o640"


def test_deny_syscalls_leaves_no_lock_and_no_watch(tree):
    """flock, fcntl's record locks, leases and F_NOTIFY, inotify and fanotify are refused: two
    workers that open one file could signal each other through its locks."""
    code = """
        import fcntl, struct
        libc = ctypes.CDLL(None, use_errno=True)

        def inotify():
            if libc.inotify_init1(0) < 0:
                raise OSError(ctypes.get_errno(), "inotify_init1")

        if {confine}:
            landlock.deny_syscalls()
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
            print(name, denied(action, error=OSError))
        print("getfl", denied(fcntl.fcntl, file, fcntl.F_GETFL))
    """
    assert all(line.endswith("False") for line in run(code, confine=False, tmp=str(tree)).splitlines())
    said = run(code, confine=True, tmp=str(tree)).splitlines()
    assert said[:-1] == [f"{name} True" for name in ("flock", "lockf", "getlk", "ofd", "notify", "inotify")], said
    assert said[-1] == "getfl False"


def test_deny_syscalls_with_processes_starts_threads_only():
    run("""
        import threading
        landlock.deny_syscalls(processes=True)
        assert denied(os.fork, error=BlockingIOError)
        assert os.system("true") != 0
        done = []
        thread = threading.Thread(target=done.append, args=[1])
        thread.start()
        thread.join()
        assert done == [1]
    """)
