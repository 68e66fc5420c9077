"""The canary: before official grading, a hostile probe tries the very sandbox that will grade.

Once per batch, nbgrader process and Dask worker, a built-in probe runs in a worker with the
course's limits and tries what student code must never do (read a solution, write into the
course, signal the grader, ...); if anything gets through, grading is refused
(:class:`~autograder.isolation.IsolationRefused`, exit status 3). What reaches the host is
judged from the host, not from what the probe says. What it tries and why: docs/security.md,
"The canary".
"""

from __future__ import annotations

import fcntl
import os
import resource
import shutil
import socket
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..config import Course
from ..engine.session import Session
from ..errors import SandboxFailure, StudentError
from ..isolation import IsolationRefused, Layout, WorkerLimits

PROBE = '''\
import os, socket, time

def attempt(action):
    try:
        action()
    except BaseException as error:
        return "blocked (" + type(error).__name__ + ")"
    return "got through"

def read(path):
    return attempt(lambda: open(path, "rb").read(1))

def write(folder):
    return attempt(lambda: open(os.path.join(folder, ".autograder-canary"), "w").write("x"))

def connect(port):
    return attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close())

def signal(pid):
    return attempt(lambda: os.kill(pid, 0))

def metadata(path):
    return {"chmod": attempt(lambda: os.chmod(path, 0o777)), "times": attempt(lambda: os.utime(path, (0, 0))),
            "chown": attempt(lambda: os.chown(path, os.getuid(), os.getgid())),
            "xattr": attempt(lambda: os.setxattr(path, "user.autograder-canary", b"x"))}

def other_process(pid):
    import resource
    return {"prlimit": attempt(lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE,
                                                        resource.prlimit(pid, resource.RLIMIT_NOFILE))),
            "setpriority": attempt(lambda: os.setpriority(os.PRIO_PROCESS, pid,
                                                          os.getpriority(os.PRIO_PROCESS, pid))),
            "sched_setaffinity": attempt(lambda: os.sched_setaffinity(pid, os.sched_getaffinity(pid)))}

HELD = []

def lock(path):
    import fcntl
    HELD.append(open(path, "rb"))
    return attempt(lambda: fcntl.flock(HELD[-1], fcntl.LOCK_EX | fcntl.LOCK_NB))

def watch(folder):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    def add():
        if libc.inotify_add_watch(libc.inotify_init1(0), folder.encode(), 0x100) < 0:  # IN_CREATE
            raise OSError(ctypes.get_errno(), "inotify")
    return attempt(add)

def processes(count):
    started = 0
    for _ in range(count):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        started += 1
    return started
'''


def run_canary(course: Course, out: Path | None = None) -> None:
    """Run the probe in the sandbox; raise IsolationRefused naming everything that got through."""
    with tempfile.TemporaryDirectory(prefix="autograder-canary-") as scratch:
        folder, decoy = Path(scratch) / "probe", Path(tempfile.mkdtemp(prefix="autograder-submission-"))
        shared = Path(scratch) / "shared"  # what every worker may read: the runtime, the course's files
        for made in (folder, shared):
            made.mkdir()
        (folder / "autograder_canary.py").write_text(PROBE)
        (decoy / "secret.py").write_text("answer = 42\n")
        (shared / "file.txt").write_text("shared\n")
        for path, mode in ((Path(scratch), 0o755), (shared, 0o755), (shared / "file.txt", 0o644)):
            path.chmod(mode)
        layout = Layout.for_course(course, folder)
        session = Session(replace(layout, readonly_paths=(*layout.readonly_paths, shared)),
                          WorkerLimits.for_course(course.limits, call_seconds=10), budget_seconds=60)
        try:
            breaches = _probe(session.module("autograder_canary"), course, out, decoy, shared / "file.txt")
        except (SandboxFailure, StudentError) as failure:
            raise IsolationRefused(f"the sandbox's canary could not run ({failure}); nothing was graded") from None
        finally:
            session.close()
            shutil.rmtree(decoy, ignore_errors=True)
    if breaches:
        raise IsolationRefused("refusing to grade: the sandbox's canary got through: " + "; ".join(breaches))


def _probe(probe: Any, course: Course, out: Path | None, decoy: Path, shared: Path) -> list[str]:
    """What got through of what ``probe`` (the probe's module, in the sandbox) tried."""
    return [*_file_breaches(probe, course, out, decoy), *_shared_file_breaches(probe, shared),
            *_process_breaches(probe, course)]


def _file_breaches(probe: Any, course: Course, out: Path | None, decoy: Path) -> list[str]:
    """Reading the course's secrets and the gradebook; writing into the course or the output."""
    secrets = [*sorted(course.path(course.solutions or course.package).glob("*.py"))[:1],
               course.path(course.exercises[0].suite), decoy / "secret.py"]
    if out is not None and (out / "gradebook.sqlite").exists():
        secrets.append(out / "gradebook.sqlite")
    breaches = [f"read {path}" for path in secrets if probe.read(str(path)) == "got through"]
    for folder in [course.root, *([out] if out is not None else [])]:
        probe.write(str(folder))
        if (folder / ".autograder-canary").exists():
            breaches.append(f"wrote into {folder}")
            (folder / ".autograder-canary").unlink(missing_ok=True)
    return breaches


def _shared_file_breaches(probe: Any, shared: Path) -> list[str]:
    """Changing the metadata of, locking or watching a file every worker can open."""
    breaches = []
    before = _metadata(shared)
    if probe.metadata(str(shared))["chown"] == "got through" or _metadata(shared) != before:
        breaches.append(f"changed the mode, owner, times or extended attributes of {shared}")
    probe.lock(str(shared))
    with open(shared, "rb") as mine:
        try:
            fcntl.flock(mine, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            breaches.append(f"held a lock on {shared}, which other workers open too")
    if probe.watch(str(shared.parent)) == "got through":
        breaches.append(f"watched {shared.parent} with inotify")
    return breaches


def _process_breaches(probe: Any, course: Course) -> list[str]:
    """Reaching the grader's process (its limits, signals, a local socket) or starting too many."""
    limits = _limits()
    breaches = [f"{call} on the grader" for call, said in probe.other_process(os.getpid()).items()
                if said == "got through"]
    if _limits() != limits:
        breaches.append("changed the grader's resource limits")
    with socket.create_server(("127.0.0.1", 0)) as server:
        if probe.connect(server.getsockname()[1]) == "got through":
            breaches.append("connected to a TCP socket on 127.0.0.1")
    if probe.signal(os.getpid()) == "got through":
        breaches.append("signalled the grader")
    started = probe.processes(course.limits.processes + 8)
    if started >= course.limits.processes:
        breaches.append(f"started {started} processes (the course allows {course.limits.processes})")
    return breaches


def _metadata(path: Path) -> tuple:
    """What a worker must not change of a file it can read: mode, owner, times, extended attributes."""
    info = os.stat(path)
    return info.st_mode, info.st_uid, info.st_gid, info.st_mtime_ns, sorted(os.listxattr(path))


def _limits() -> list[tuple[int, int]]:
    """This process's resource limits."""
    return [resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")]
