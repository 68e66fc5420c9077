"""The worker's seccomp filter: the system calls it may make, every other refused. Standard library only.

The worker calls :func:`restrict` after Landlock and before it imports student code; it needs no
privilege (it sets no_new_privs) and binds every process and thread started later. It allows the
calls the Python runtime, the course's code and the worker make (``tests/isolation/measure_syscalls.py``
re-derives the list), some only with some arguments (only an argument's low 32 bits are looked
at); every other fails with EPERM (ENOSYS for a newer form of an allowed call), and a call by a
foreign convention kills the process. :func:`deny_metadata` takes chmod from a zygote's child.
Each call, its answer and why: docs/security.md, "The layers".
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

TYPE_CHECKING = False  # typing is not imported: a worker's every import is paid at each of its starts
if TYPE_CHECKING:
    from typing import Any
if TYPE_CHECKING or __package__:  # the grader's copy, autograder.isolation.inside.seccomp
    from . import landlock
else:  # a worker's, found beside landlock.py on sys.path
    import landlock

# Every call the filter names: (x86_64, aarch64), None where that machine has no such call.
# tests/isolation/test_seccomp.py checks both columns against the kernel's headers.
NUMBERS = {
    "read": (0, 63), "write": (1, 64), "readv": (19, 65), "writev": (20, 66), "pread64": (17, 67),
    "pwrite64": (18, 68), "preadv": (295, 69), "pwritev": (296, 70), "preadv2": (327, 286), "pwritev2": (328, 287),
    "lseek": (8, 62), "open": (2, None), "openat": (257, 56), "openat2": (437, 437), "close": (3, 57),
    "close_range": (436, 436), "dup": (32, 23), "dup2": (33, None), "dup3": (292, 24), "pipe": (22, None),
    "pipe2": (293, 59), "fcntl": (72, 25), "ioctl": (16, 29), "flock": (73, 32), "fstat": (5, 80),
    "stat": (4, None), "lstat": (6, None), "newfstatat": (262, 79), "statx": (332, 291), "statfs": (137, 43),
    "fstatfs": (138, 44), "access": (21, None), "faccessat": (269, 48), "faccessat2": (439, 439),
    "readlink": (89, None), "readlinkat": (267, 78), "getdents64": (217, 61), "getcwd": (79, 17),
    "chdir": (80, 49), "fchdir": (81, 50), "mkdir": (83, None), "mkdirat": (258, 34), "rmdir": (84, None),
    "unlink": (87, None), "unlinkat": (263, 35), "rename": (82, None), "renameat": (264, 38),
    "renameat2": (316, 276), "truncate": (76, 45), "ftruncate": (77, 46), "fsync": (74, 82),
    "fdatasync": (75, 83), "umask": (95, 166), "sendfile": (40, 71), "copy_file_range": (326, 285),
    "poll": (7, None), "ppoll": (271, 73), "select": (23, None), "pselect6": (270, 72), "epoll_create": (213, None),
    "epoll_create1": (291, 20), "epoll_ctl": (233, 21), "epoll_wait": (232, None), "epoll_pwait": (281, 22),
    "epoll_pwait2": (441, 441), "getxattr": (191, 8), "lgetxattr": (192, 9), "fgetxattr": (193, 10),
    "listxattr": (194, 11), "llistxattr": (195, 12), "flistxattr": (196, 13),
    "chmod": (90, None), "fchmod": (91, 52), "fchmodat": (268, 53), "fchmodat2": (452, 452),
    "utime": (132, None), "utimes": (235, None), "futimesat": (261, None), "utimensat": (280, 88),
    "brk": (12, 214), "mmap": (9, 222), "munmap": (11, 215), "mprotect": (10, 226), "mremap": (25, 216),
    "madvise": (28, 233), "msync": (26, 227),
    "clone": (56, 220), "clone3": (435, 435), "fork": (57, None), "vfork": (58, None), "execve": (59, 221),
    "exit": (60, 93), "exit_group": (231, 94), "wait4": (61, 260), "waitid": (247, 95),
    "set_tid_address": (218, 96), "set_robust_list": (273, 99), "rseq": (334, 293), "futex": (202, 98),
    "gettid": (186, 178), "getpid": (39, 172), "getppid": (110, 173), "getuid": (102, 174), "geteuid": (107, 175),
    "getgid": (104, 176), "getegid": (108, 177), "getgroups": (115, 158), "getresuid": (118, 148),
    "getresgid": (120, 150), "getpgrp": (111, None), "getpgid": (121, 155), "getsid": (124, 156),
    "arch_prctl": (158, None), "prctl": (157, 167), "sched_yield": (24, 124), "sched_getaffinity": (204, 123),
    "sched_getparam": (143, 121), "sched_getscheduler": (145, 120), "sched_getattr": (315, 275),
    "prlimit64": (302, 261), "getpriority": (140, 141), "ioprio_get": (252, 31),
    "landlock_create_ruleset": (444, 444), "landlock_add_rule": (445, 445), "landlock_restrict_self": (446, 446),
    "rt_sigaction": (13, 134), "rt_sigprocmask": (14, 135), "rt_sigreturn": (15, 139), "rt_sigpending": (127, 136),
    "rt_sigtimedwait": (128, 137), "rt_sigsuspend": (130, 133), "sigaltstack": (131, 132), "kill": (62, 129),
    "tgkill": (234, 131), "restart_syscall": (219, 128), "setitimer": (38, 103), "getitimer": (36, 102),
    "alarm": (37, None), "nanosleep": (35, 101), "clock_nanosleep": (230, 115), "clock_gettime": (228, 113),
    "clock_getres": (229, 114), "gettimeofday": (96, 169), "time": (201, None), "times": (100, 153),
    "getrandom": (318, 278), "uname": (63, 160), "getcpu": (309, 168),
    "socket": (41, 198), "socketpair": (53, 199), "sendmsg": (46, 211), "recvmsg": (47, 212), "sendto": (44, 206),
    "recvfrom": (45, 207), "shutdown": (48, 210), "getsockname": (51, 204), "getpeername": (52, 205),
    "getsockopt": (55, 209), "setsockopt": (54, 208),
}

# Allowed whatever their arguments (the calls with argument checks are in :func:`rules`)
ALLOWED = (
    # files and descriptors (Landlock decides which files)
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "lseek", "open", "openat",
    "close", "close_range", "dup", "dup2", "dup3", "pipe", "pipe2", "fstat", "stat", "lstat", "newfstatat", "statx",
    "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents64", "getcwd",
    "chdir", "fchdir", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
    "truncate", "ftruncate", "fsync", "fdatasync", "umask", "sendfile", "copy_file_range", "poll", "ppoll",
    "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
    "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
    # memory, threads, the process itself
    "brk", "mmap", "munmap", "mprotect", "mremap", "msync", "execve", "exit", "exit_group",
    "set_tid_address", "set_robust_list", "rseq", "futex", "gettid", "getpid", "getppid", "getuid", "geteuid",
    "getgid", "getegid", "getgroups", "getresuid", "getresgid", "getpgrp", "arch_prctl", "sched_yield",
    "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
    # signals to itself, timers, time
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend",
    "sigaltstack", "restart_syscall", "setitimer", "getitimer", "alarm", "nanosleep", "clock_nanosleep",
    "clock_gettime", "clock_getres", "gettimeofday", "time", "times", "getrandom", "uname", "getcpu",
    # the sockets of a socketpair, and those the grader hands a zygote
    "socketpair", "sendmsg", "recvmsg", "sendto", "recvfrom", "shutdown", "getsockname", "getpeername",
    "getsockopt", "setsockopt",
)
OWN = ("prlimit64", "sched_getaffinity", "sched_getparam", "sched_getscheduler", "sched_getattr", "getpgid", "getsid")
NEWER = ("clone3", "openat2", "epoll_pwait2")  # ENOSYS: the C library falls back to clone, openat, epoll_pwait
TIMES = ("utime", "utimes", "futimesat", "utimensat")
MODES = ("chmod", "fchmod", "fchmodat", "fchmodat2")

ALLOW, RET_ERRNO, KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
CLONE_THREAD, CLONE_NAMESPACES = 0x10000, 0x7E020000  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
PRIO_PROCESS, IOPRIO_WHO_PROCESS, RWF_NOWAIT = 0, 1, 0x8
LOCK_COMMANDS = (5, 6, 7, 36, 37, 38)  # F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW
# F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ
FCNTL_COMMANDS = (0, 1, 2, 3, 4, 1030, 1031, 1032)
# TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIONCLEX, FIOCLEX, FS_IOC_GETFLAGS
IOCTL_REQUESTS = (0x5401, 0x5413, 0x541B, 0x5421, 0x5450, 0x5451, 0x80086601)
# FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS (chattr), FS_IOC_SETVERSION, FS_IOC32_SETVERSION, FS_IOC_FSSETXATTR
SET_ATTR_IOCTLS = (0x40086602, 0x40046602, 0x40087602, 0x40047602, 0x401C5820)
# PR_SET/GET_PDEATHSIG, PR_GET_DUMPABLE, PR_GET_NAME, PR_GET_SECCOMP, PR_SET_SECCOMP, PR_CAPBSET_READ,
# PR_SET/GET_NO_NEW_PRIVS
PRCTL_OPTIONS = (1, 2, 3, 16, 21, 22, 23, 38, 39)
# MADV_NORMAL, RANDOM, SEQUENTIAL, DONTFORK, DOFORK, HUGEPAGE, NOHUGEPAGE, DONTDUMP, DODUMP, WIPEONFORK, KEEPONFORK
MADVICE = (0, 1, 2, 10, 11, 14, 15, 16, 17, 18, 19)


# each machine: its AUDIT_ARCH_* (in struct seccomp_data), its column of NUMBERS, and whether it has a
# second convention on the same arch number, told apart by a bit of the call's number (x32)
MACHINES = {"x86_64": (0xC000003E, 0, True), "aarch64": (0xC00000B7, 1, False)}
MACHINES["amd64"], MACHINES["arm64"] = MACHINES["x86_64"], MACHINES["aarch64"]


def refuse(error: int) -> int:
    """The action that fails a call with ``error`` (0: the call "succeeds" and does nothing)."""
    return RET_ERRNO | error


def when(arg: int, cases: list[tuple[str, Any, Any]], otherwise: Any) -> tuple:
    """An argument check: the first case that holds for argument ``arg`` gives its action,
    ``("in", values, action)`` or ``("has", flags, action)``, else ``otherwise``."""
    return ("when", arg, tuple((test, tuple(v) if test == "in" else v, action) for test, v, action in cases),
            otherwise)


def rules(processes: bool, metadata: bool, pid_namespace: bool, own_pid: int) -> dict[str, Any]:
    """Each call the filter names, by name: its action, or its argument check (:func:`when`)."""
    eperm = refuse(errno.EPERM)
    own = when(0, [("in", [0], ALLOW)], eperm)
    table: dict[str, Any] = dict.fromkeys(ALLOWED, ALLOW) | dict.fromkeys(OWN, own)
    table |= dict.fromkeys(NEWER, refuse(errno.ENOSYS)) | dict.fromkeys(TIMES, refuse(0))
    table |= dict.fromkeys(MODES, refuse(0) if metadata else ALLOW)
    table["socket"] = refuse(errno.EACCES)
    table["getpriority"] = when(0, [("in", [PRIO_PROCESS], when(1, [("in", [0], ALLOW)], eperm))], eperm)
    table["ioprio_get"] = when(0, [("in", [IOPRIO_WHO_PROCESS], when(1, [("in", [0], ALLOW)], eperm))], eperm)
    table["kill"] = ALLOW if pid_namespace else when(0, [("in", [0, own_pid], ALLOW)], eperm)
    table["tgkill"] = ALLOW if pid_namespace else when(0, [("in", [own_pid], ALLOW)], eperm)
    start = refuse(errno.EAGAIN) if processes else ALLOW
    table["clone"] = when(0, [("has", CLONE_NAMESPACES, eperm), ("has", CLONE_THREAD, ALLOW)], start)
    table["fork"] = table["vfork"] = start
    table["flock"] = refuse(errno.ENOLCK)
    table["fcntl"] = when(1, [("in", LOCK_COMMANDS, refuse(errno.ENOLCK)), ("in", FCNTL_COMMANDS, ALLOW)], eperm)
    table["ioctl"] = when(1, [("in", SET_ATTR_IOCTLS, eperm), ("in", IOCTL_REQUESTS, ALLOW)], refuse(errno.ENOTTY))
    table["prctl"] = when(0, [("in", PRCTL_OPTIONS, ALLOW)], eperm)
    table["madvise"] = when(2, [("in", MADVICE, ALLOW)], eperm)
    table["preadv2"] = table["pwritev2"] = when(5, [("has", RWF_NOWAIT, refuse(errno.EOPNOTSUPP))], ALLOW)
    table["wait4"] = when(3, [("in", [0], ALLOW)], eperm)  # no resource usage: it counts major page faults
    table["waitid"] = when(4, [("in", [0], ALLOW)], eperm)
    return table


def machine() -> str:
    """The name of the machine this process runs on, if the filter knows it; raises OSError."""
    name = os.uname().machine.lower()
    if name not in MACHINES or struct.calcsize("P") != 8:  # a 32-bit build would be killed
        raise OSError(errno.ENOTSUP, f"seccomp: unsupported machine {name!r}")
    return name


def allowed_names(name: str) -> list[str]:
    """The calls machine ``name`` has that the filter may allow (with or without an argument check)."""
    table = rules(processes=False, metadata=False, pid_namespace=True, own_pid=0)
    column = MACHINES[name][1]
    return sorted(call for call, action in table.items()
                  if NUMBERS[call][column] is not None and (action == ALLOW or isinstance(action, tuple)))


def program(name: str, processes: bool = False, metadata: bool = True, pid_namespace: bool = True,
            own_pid: int = 0) -> list[tuple[int, int, int, int]]:
    """The filter for machine ``name``: the check of the calling convention, then a binary search
    over the numbers of the calls :func:`rules` names, each leading to its action. Its
    instructions are (code, jt, jf, k), as struct sock_filter."""
    arch, column, x32 = MACHINES[name]
    table = rules(processes, metadata, pid_namespace, own_pid)
    calls = sorted((nr, action) for call, action in table.items() if (nr := NUMBERS[call][column]) is not None)
    listing: list[Any] = [(_LD, 0, 0, _ARCH), (_JEQ, 1, 0, arch), (_RET, 0, 0, KILL_PROCESS), (_LD, 0, 0, _NR)]
    if x32:
        listing += [(_JGE, 0, 1, 0x40000000), (_RET, 0, 0, refuse(errno.EPERM))]
    ordered = sorted(_actions(table.values()), key=lambda action: (-_height(action), repr(action)))
    labels = {action: f"action {index}" for index, action in enumerate(ordered)}  # jumps go forward only
    listing += [*_search(calls, labels, "default"), "default", (_RET, 0, 0, refuse(errno.EPERM))]
    for action in ordered:
        listing += [labels[action], *_block(action, labels)]
    return _assemble(listing)


_LD, _JA, _JEQ, _JGE, _JSET, _RET = 0x20, 0x05, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JA, JEQ/JGE/JSET|K
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data; args[i] at 16 + 8 * i (its low half, little-endian)


def _actions(actions: Any) -> set[Any]:
    """``actions`` and those their argument checks lead to."""
    found = set()
    for action in actions:
        found.add(action)
        if isinstance(action, tuple):
            found |= _actions([then for _, _, then in action[2]] + [action[3]])
    return found


def _height(action: Any) -> int:
    """How many argument checks an action may pass through: a check comes before those it leads to."""
    if not isinstance(action, tuple):
        return 0
    return 1 + max(_height(then) for then in [*(then for _, _, then in action[2]), action[3]])


def _search(calls: list[tuple[int, Any]], labels: dict[Any, str], default: str) -> list[Any]:
    """A binary search over ``calls`` (number, action), sorted: the accumulator holds the call's number."""
    if len(calls) <= 3:
        listing: list[Any] = []
        for nr, action in calls:
            listing += [(_JEQ, 0, 1, nr), (_JA, 0, 0, labels[action])]
        return [*listing, (_JA, 0, 0, default)]
    middle = len(calls) // 2
    upper = f"from {calls[middle][0]}"
    return [(_JGE, 0, 1, calls[middle][0]), (_JA, 0, 0, upper), *_search(calls[:middle], labels, default),
            upper, *_search(calls[middle:], labels, default)]


def _block(action: Any, labels: dict[Any, str]) -> list[Any]:
    """The code of one action: a return, or an argument check that jumps to other actions."""
    if not isinstance(action, tuple):
        return [(_RET, 0, 0, action)]
    _, arg, cases, otherwise = action
    tests: list[Any] = [(_LD, 0, 0, 16 + 8 * arg)]
    jumps: list[Any] = []
    for index, (test, values, then) in enumerate(cases):
        case = f"{labels[action]} case {index}"
        if test == "in":
            tests += [(_JEQ, case, 0, value) for value in values]
        else:
            tests.append((_JSET, case, 0, values))
        jumps += [case, (_JA, 0, 0, labels[then])]
    return [*tests, (_JA, 0, 0, labels[otherwise]), *jumps]


def _assemble(listing: list[Any]) -> list[tuple[int, int, int, int]]:
    """The instructions of ``listing``, where a string marks a place, and a jump (the true or false
    branch of a test, or the constant of BPF_JA) may name one instead of an offset."""
    places, count = {}, 0
    for item in listing:
        if isinstance(item, str):
            places[item] = count
        else:
            count += 1
    code: list[tuple[int, int, int, int]] = []
    for item in (item for item in listing if not isinstance(item, str)):
        op, jt, jf, k = (places[part] - len(code) - 1 if isinstance(part, str) else part for part in item)
        assert 0 <= jt < 256 and 0 <= jf < 256 and k >= 0, "a jump too far, or backwards"
        code.append((op, jt, jf, k))
    return code


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install(instructions: list[tuple[int, int, int, int]]) -> None:
    """Install the filter of ``instructions`` for good (after no_new_privs, which an unprivileged
    process needs first)."""
    landlock.no_new_privs()
    code = b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)
    fprog = _SockFprog(len(instructions), code)
    if landlock.libc.prctl(22, ctypes.c_ulong(2), ctypes.byref(fprog), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(err, f"seccomp: {os.strerror(err)}")


def restrict(processes: bool = False, metadata: bool = True, pid_namespace: bool = False) -> None:
    """Allow this process, and every one it starts, only the calls of :func:`rules`, for good.

    ``processes``: no new process (a worker where nothing counts its processes or kills them
    all when it ends); ``metadata``: chmod changes nothing (every worker that runs student code);
    ``pid_namespace``: the worker has a pid namespace of its own, so it may signal any pid."""
    install(program(machine(), processes, metadata, pid_namespace, os.getpid()))


def deny_metadata() -> None:
    """Make chmod and its kin change nothing, for good, on top of the filter this process has:
    a zygote's child, which runs student code."""
    arch, column, _ = MACHINES[machine()]
    listing: list[Any] = [(_LD, 0, 0, _ARCH), (_JEQ, 1, 0, arch), (_RET, 0, 0, KILL_PROCESS), (_LD, 0, 0, _NR)]
    listing += [(_JEQ, "no change", 0, NUMBERS[call][column]) for call in MODES if NUMBERS[call][column] is not None]
    install(_assemble([*listing, (_RET, 0, 0, ALLOW), "no change", (_RET, 0, 0, refuse(0))]))
