"""Self-confinement for the grading worker, standard library only (ctypes on raw syscalls).

The worker calls restrict() (Landlock: file system, TCP, signals, abstract sockets),
deny_syscalls() (seccomp: sockets, IPC, other processes, file metadata, locks) and, when it is left running as root,
drop_capabilities() before it imports untrusted student code.
Both are one-way, need no privilege (they set no_new_privs) and bind every child started
later. They confine the calling thread only, so call them before any thread is started.
This file is copied alone into the sandbox: it must never import from the autograder package.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct

TYPE_CHECKING = False  # typing is not imported: a worker's every import is paid at each of its starts
if TYPE_CHECKING:
    from typing import Any

libc = ctypes.CDLL(None, use_errno=True)  # the C library, loaded once
libc.syscall.restype = ctypes.c_long

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # same on x86_64 and aarch64
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH = 1  # LANDLOCK_RULE_PATH_BENEATH
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2

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


def _no_new_privs() -> None:
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
        _no_new_privs()
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


# seccomp-BPF: the numbers of the machines the worker runs on, by group (see deny_syscalls)
_MACHINES: dict[str, dict[str, Any]] = {
    "x86_64": {
        "arch": 0xC000003E, "x32": True, "socket": 41, "clone": 56, "fork": (57, 58), "fcntl": 72, "ioctl": 16,
        "keys": (248, 249, 250),  # add_key, request_key, keyctl
        # System V shared memory, semaphores, message queues; POSIX message queues
        "ipc": (29, 30, 31, 64, 65, 66, 67, 68, 69, 70, 71, 220, *range(240, 246)),
        "times": (132, 235, 261, 280),  # utime, utimes, futimesat, utimensat
        "modes": (90, 91, 268),  # chmod, fchmod, fchmodat
        "owners": (92, 93, 94, 260),  # chown, fchown, lchown, fchownat
        "xattrs": (188, 189, 190, 197, 198, 199),  # setxattr, lsetxattr, fsetxattr, removexattr, l.., f..
        "locks": (73,),  # flock
        "watches": (253, 294, 254, 300),  # inotify_init, inotify_init1, inotify_add_watch, fanotify_init
        # process_vm_readv, process_vm_writev, kcmp, ptrace, perf_event_open
        "others": (310, 311, 312, 101, 298),
        # prlimit64, sched_setparam, sched_getparam, sched_setscheduler, sched_getscheduler,
        # sched_rr_get_interval, sched_setaffinity, sched_getaffinity, sched_setattr, sched_getattr,
        # migrate_pages, move_pages, get_robust_list: the pid in their first argument
        "own_pid": (302, 142, 143, 144, 145, 148, 203, 204, 314, 315, 256, 279, 274),
        "priority": (140, 141), "io_priority": (251, 252)},  # get/setpriority; ioprio_set, ioprio_get
    "aarch64": {
        "arch": 0xC00000B7, "x32": False, "socket": 198, "clone": 220, "fork": (), "fcntl": 25, "ioctl": 29,
        "keys": (217, 218, 219), "ipc": tuple(range(180, 198)), "times": (88,),
        "modes": (52, 53), "owners": (55, 54), "xattrs": (5, 6, 7, 14, 15, 16), "locks": (32,),
        "watches": (26, 27, 262), "others": (270, 271, 272, 117, 241),
        "own_pid": (261, 118, 121, 119, 120, 127, 122, 123, 274, 275, 238, 239, 100),
        "priority": (140, 141), "io_priority": (30, 31)}}
_MACHINES["amd64"], _MACHINES["arm64"] = _MACHINES["x86_64"], _MACHINES["aarch64"]
# the same on every machine: io_uring_setup, clone3; fchmodat2; setxattrat, removexattrat, file_setattr;
# pidfd_send_signal, pidfd_open, pidfd_getfd, process_madvise, process_mrelease
_IO_URING_SETUP, _CLONE3, _FCHMODAT2, _SET_ATTRS, _PIDFDS = 425, 435, 452, (463, 466, 469), (424, 434, 438, 440, 448)
_CLONE_THREAD = 0x10000
_PRIO_PROCESS, _IOPRIO_WHO_PROCESS = 0, 1
_LOCK_COMMANDS = (5, 6, 7, 36, 37, 38)  # F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
_WATCH_COMMANDS = (1024, 1025, 1026)  # F_SETLEASE, F_GETLEASE, F_NOTIFY
# FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS (chattr), FS_IOC_SETVERSION, FS_IOC32_SETVERSION, FS_IOC_FSSETXATTR
_SET_ATTR_IOCTLS = (0x40086602, 0x40046602, 0x40087602, 0x40047602, 0x401C5820)
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ/JGE/JSET|K, RET|K
_KILL_PROCESS, _RET_ERRNO, _ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data; args[i] at 16 + 8 * i (its low half, little-endian)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def deny_syscalls(processes: bool = False, metadata: bool = True) -> None:
    """Deny, for good, the system calls by which a worker could reach beyond itself:

    - ``socket(2)`` fails with EACCES, so no network of any kind; ``socketpair(2)`` stays.
    - io_uring, the kernel keyring calls and System V and POSIX IPC fail with EPERM: a keyring
      or an IPC object outlives the processes that made it and can be shared by name or number
      across uids (and workers forked from one zygote share an IPC namespace), so one worker
      could leave data for the next property, or for another student's submission.
    - Calls that act on another process by its pid, which the kernel allows on any process of
      the same uid: prlimit, get/setpriority, the sched_* calls (affinity, policy, parameters),
      ioprio_get/set, migrate_pages, move_pages and get_robust_list work on the caller only (pid
      0); process_vm_readv/writev, kcmp, ptrace, perf_event_open and the pidfd calls fail with
      EPERM. A worker could otherwise read or lower the limits of its grader (and break the
      next student's grading) or of any process of its uid.
    - flock and fcntl's record locks (F_GETLK, F_SETLK(W), F_OFD_*) fail with ENOLCK, and its
      leases and F_NOTIFY, inotify and fanotify with EPERM: two workers that can open the same
      file (a runtime file) could signal each other through its locks, and a watch reports
      names made in folders a worker cannot read.
    - Setting a file's times succeeds and changes nothing: it needs only write permission,
      which ``/dev/null`` gives everyone, and Landlock does not cover it.

    With ``metadata`` (every worker that runs student code), a file's mode, owner and
    attributes cannot change either, which Landlock does not cover and which a worker of the
    file's owner (root without capabilities, or the grader's own user) could otherwise change
    on any file it can name, outside the sandbox too: chmod and its kin succeed and change
    nothing, like the times; chown, setting or removing an extended attribute and the ioctls
    that set inode flags (chattr) fail with EPERM. A zygote, which runs no student code, keeps
    chmod for cleaning up after its children, and gives each child :func:`deny_metadata`.

    With ``processes``, no new process either: fork, vfork and clone fail with EAGAIN unless
    they start a thread (clone3 gives ENOSYS, so the C library falls back to clone), for a
    worker where nothing else counts its processes or kills them when it ends. A call made
    through a foreign syscall convention (e.g. i386 ``int 0x80`` on x86_64) kills the process.
    """
    numbers = _numbers()
    eperm, eagain = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.EAGAIN
    rules: list[tuple[int, Any, Any]] = [(numbers["socket"], _RET_ERRNO | errno.EACCES, None)]
    rules += [(nr, eperm, None) for nr in (_IO_URING_SETUP, *numbers["keys"], *numbers["ipc"], *numbers["others"],
                                           *numbers["watches"], *_PIDFDS)]
    rules += [(nr, _RET_ERRNO, None) for nr in numbers["times"]]  # errno 0: "done", and nothing changes
    rules += [(nr, eperm, ("only", [(0, 0)])) for nr in numbers["own_pid"]]
    rules += [(nr, eperm, ("only", [(0, _PRIO_PROCESS), (1, 0)])) for nr in numbers["priority"]]
    rules += [(nr, eperm, ("only", [(0, _IOPRIO_WHO_PROCESS), (1, 0)])) for nr in numbers["io_priority"]]
    rules += [(nr, _RET_ERRNO | errno.ENOLCK, None) for nr in numbers["locks"]]
    rules.append((numbers["fcntl"], None, ("not", 1, [(_LOCK_COMMANDS, _RET_ERRNO | errno.ENOLCK),
                                                       (_WATCH_COMMANDS, eperm)])))
    if metadata:
        rules += _metadata_rules(numbers)
    if processes:
        rules += [(nr, eagain, None) for nr in numbers["fork"]] + [(_CLONE3, _RET_ERRNO | errno.ENOSYS, None)]
        rules.append((numbers["clone"], eagain, ("has", 0, _CLONE_THREAD)))  # a thread may start, a process not
    _install(numbers, rules)


def deny_metadata() -> None:
    """Add :func:`deny_syscalls`'s ``metadata`` rules, for good: a zygote's child, which runs student code."""
    numbers = _numbers()
    _install(numbers, _metadata_rules(numbers))


def _numbers() -> dict[str, Any]:
    machine = os.uname().machine.lower()
    if machine not in _MACHINES or struct.calcsize("P") != 8:  # a 32-bit build would be killed
        raise OSError(errno.ENOTSUP, f"deny_syscalls: unsupported machine {machine!r}")
    return _MACHINES[machine]


def _metadata_rules(numbers: dict[str, Any]) -> list[tuple[int, Any, Any]]:
    eperm = _RET_ERRNO | errno.EPERM
    return ([(nr, _RET_ERRNO, None) for nr in (*numbers["modes"], _FCHMODAT2)]  # errno 0: nothing changes
            + [(nr, eperm, None) for nr in (*numbers["owners"], *numbers["xattrs"], *_SET_ATTRS)]
            + [(numbers["ioctl"], None, ("not", 1, [(_SET_ATTR_IOCTLS, eperm)]))])


def _install(numbers: dict[str, Any], rules: list[tuple[int, Any, Any]]) -> None:
    """Install a seccomp filter made of ``rules``, (syscall number, action, test) each: with no
    test the call gets ``action``; ``("only", [(arg, value), ...])``: unless each argument has
    that value; ``("has", arg, flag)``: unless the argument has that flag; ``("not", arg,
    [(values, action), ...])``: an argument among ``values`` gets that action. Only the low 32
    bits of an argument are looked at: every argument tested is an int to the kernel."""
    assert len({nr for nr, _, _ in rules}) == len(rules), "one rule a system call"
    program: list[Any] = [(_LD_W_ABS, 0, 0, _ARCH), (_JEQ, 1, 0, numbers["arch"]), (_RET, 0, 0, _KILL_PROCESS),
                          (_LD_W_ABS, 0, 0, _NR)]
    if numbers["x32"]:
        program += [(_JGE, 0, 1, 0x40000000), (_RET, 0, 0, _RET_ERRNO | errno.EPERM)]
    for index, (nr, action, test) in enumerate(rules):
        after, deny = f"after {index}", f"deny {index}"
        program.append((_JEQ, 0, after, nr))  # not this call: the next rule (the accumulator still holds nr)
        if test is None:
            program.append((_RET, 0, 0, action))
        elif test[0] == "only":
            for arg, value in test[1]:
                program += [(_LD_W_ABS, 0, 0, 16 + 8 * arg), (_JEQ, 0, deny, value)]
            program += [(_RET, 0, 0, _ALLOW), deny, (_RET, 0, 0, action)]
        elif test[0] == "has":
            program += [(_LD_W_ABS, 0, 0, 16 + 8 * test[1]), (_JSET, 0, deny, test[2]), (_RET, 0, 0, _ALLOW),
                        deny, (_RET, 0, 0, action)]
        else:  # "not"
            program.append((_LD_W_ABS, 0, 0, 16 + 8 * test[1]))
            for group, (values, _) in enumerate(test[2]):
                program += [(_JEQ, f"{deny} {group}", 0, value) for value in values]
            program.append((_RET, 0, 0, _ALLOW))
            for group, (_, denied) in enumerate(test[2]):
                program += [f"{deny} {group}", (_RET, 0, 0, denied)]
        program.append(after)
    program.append((_RET, 0, 0, _ALLOW))
    count, code = _assemble(program)
    _no_new_privs()
    fprog = _SockFprog(count, code)
    if libc.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.byref(fprog),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"deny_syscalls: prctl seccomp: {os.strerror(err)}")


def _assemble(program: list[Any]) -> tuple[int, bytes]:
    """The BPF code of ``program``: instructions (code, jt, jf, k), where a jump may name a
    label (a string in the list, which marks the place it stands at) instead of an offset."""
    places, count = {}, 0
    for item in program:
        if isinstance(item, str):
            places[item] = count
        else:
            count += 1
    code, at = [], 0
    for item in program:
        if isinstance(item, str):
            continue
        op, *jumps, k = item
        jt, jf = (places[jump] - at - 1 if isinstance(jump, str) else jump for jump in jumps)
        assert 0 <= jt < 256 and 0 <= jf < 256, "a jump too far for BPF"
        code.append(struct.pack("=HBBI", op, jt, jf, k))
        at += 1
    return count, b"".join(code)


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
    _no_new_privs()
