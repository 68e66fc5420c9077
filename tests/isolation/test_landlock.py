"""autograder.isolation.inside.landlock confines a process against this kernel: files, TCP, signals, mounts.

The seccomp filter's tests are in ``tests/isolation/test_seccomp.py``.

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
from tests.conftest import ROOT, UNUSED_SITE_PACKAGES

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


def test_the_limited_helper_reads_no_system_folder_it_is_not_given(tmp_path):
    """The limited helper, which parses untrusted bytes, reads its Python's environment, the
    folders it imports from and what it is given: a system folder it is not given, or a base
    interpreter's site-packages it does not import from, it cannot list."""
    from pathlib import Path

    from autograder.isolation import run_helper

    def read(path: str, given: list[Path]) -> str:
        request = {"path": path, "root": str(tmp_path), "package": "exercises", "language": "en", "modules": ["m"]}
        return run_helper("autograder.intake.reading:read_submission", request, read=given, write=[tmp_path])["refused"]

    assert read("/usr/bin", []) == "bin: cannot read '.' (Permission denied)"
    assert "cannot read '.'" not in read("/usr/bin", [Path("/usr/bin")])  # given, it lists it
    for folder in UNUSED_SITE_PACKAGES:
        assert read(folder, []) == "site-packages: cannot read '.' (Permission denied)"
