"""Self-confinement for the grading worker, standard library only (ctypes on raw syscalls).

The worker calls restrict() (Landlock: file system, TCP, signals, abstract sockets), then
``seccomp.restrict()`` (the system calls it may make, ``seccomp.py``) and, when it is left running
as root, drop_capabilities() before it imports untrusted student code.
They are one-way, need no privilege (they set no_new_privs) and bind every child started
later. They confine the calling thread only, so call them before any thread is started.
This file is copied alone into the sandbox: it must never import from the autograder package.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct

libc = ctypes.CDLL(None, use_errno=True)  # the C library, loaded once
libc.syscall.restype = ctypes.c_long

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # same on x86_64 and aarch64
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH = 1  # LANDLOCK_RULE_PATH_BENEATH
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # all a file rule may hold
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR


def _fs_rights(version: int) -> int:
    """Every file-system right that Landlock ABI ``version`` knows."""
    rights = (1 << 13) - 1  # EXECUTE .. MAKE_SYM: ABI 1
    for since, right in ((2, REFER), (3, TRUNCATE), (5, IOCTL_DEV)):
        if version >= since:
            rights |= right
    return rights


def _syscall(step: str, number: int, *args) -> int:
    """Raw syscall; integer arguments go in as C longs. Raises OSError naming ``step``."""
    values = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    result = libc.syscall(ctypes.c_long(number), *values)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock {step}: {os.strerror(err)}")
    return result


def no_new_privs() -> None:
    """prctl(PR_SET_NO_NEW_PRIVS): needed by an unprivileged process before it confines itself."""
    zero = ctypes.c_ulong(0)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), zero, zero, zero) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl no_new_privs: {os.strerror(err)}")


def abi() -> int:
    """Landlock ABI version of the running kernel, 0 if Landlock is unavailable or disabled."""
    try:
        return _syscall("abi", _CREATE_RULESET, None, 0, _VERSION)
    except OSError:  # ENOSYS: not built in; EOPNOTSUPP: not enabled at boot
        return 0


def restrict(read: list[str], write: list[str], tcp: bool = False) -> int:
    """Confine this process (and every later child) for good; return the ABI used.

    ``read`` paths may be read and executed, ``write`` paths may also be changed in any way;
    the rest of the file system is out of reach. Without ``tcp`` (ABI >= 4) TCP bind and
    connect are denied; ABI >= 6 also keeps signals and abstract UNIX sockets inside the
    domain. Paths that do not exist are skipped.
    """
    version = abi()
    if version == 0:
        raise OSError(errno.EOPNOTSUPP, "landlock: not available in this kernel")
    handled_fs = _fs_rights(version)
    handled_net = 0 if tcp or version < 4 else NET_BIND_TCP | NET_CONNECT_TCP
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    size = 8 if version < 4 else 16 if version < 6 else 24
    ruleset = _syscall("create_ruleset", _CREATE_RULESET, ctypes.c_char_p(attr), size, 0)
    try:
        for paths, rights in ((read, READ_RIGHTS), (write, handled_fs)):
            for path in paths:
                _add_path(ruleset, os.fspath(path), rights)
        no_new_privs()
        _syscall("restrict_self", _RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return version


def _add_path(ruleset: int, path: str, rights: int) -> None:
    """Allow ``rights`` beneath ``path`` (only the file rights if it is not a folder)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as error:
        raise OSError(error.errno, f"landlock open {path}: {error.strerror}") from error
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rule = struct.pack("=Qi", rights, fd)  # packed struct landlock_path_beneath_attr
        _syscall(f"add_rule {path}", _ADD_RULE, ruleset, _PATH_BENEATH, ctypes.c_char_p(rule), 0)
    finally:
        os.close(fd)


_CAPSET = {"x86_64": 126, "amd64": 126, "aarch64": 91, "arm64": 91}
_PR_CAPBSET_DROP, _PR_SET_SECUREBITS, _PR_CAP_AMBIENT, _AMBIENT_CLEAR_ALL = 24, 28, 47, 4
_SECBIT_NOROOT_LOCKED = 0b11  # SECBIT_NOROOT | SECBIT_NOROOT_LOCKED: uid 0 gains nothing by exec


def drop_capabilities() -> None:
    """Give up every capability for good (a worker left running as root, e.g. without CAP_SETUID).

    The securebits and the bounding set need CAP_SETPCAP and are best effort; the ambient,
    effective, permitted and inheritable sets are always emptied, and with no_new_privs a
    later exec cannot bring them back.
    """
    zero = ctypes.c_ulong(0)
    libc.prctl(_PR_SET_SECUREBITS, ctypes.c_ulong(_SECBIT_NOROOT_LOCKED), zero, zero, zero)
    for capability in range(64):
        libc.prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(capability), zero, zero, zero)
    libc.prctl(_PR_CAP_AMBIENT, ctypes.c_ulong(_AMBIENT_CLEAR_ALL), zero, zero, zero)
    machine = os.uname().machine.lower()
    if machine not in _CAPSET:
        raise OSError(errno.ENOTSUP, f"drop_capabilities: unsupported machine {machine!r}")
    header = struct.pack("=Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = ctypes.create_string_buffer(24)  # two empty (effective, permitted, inheritable) triples
    _syscall("capset", _CAPSET[machine], ctypes.c_char_p(header), data)
    no_new_privs()
