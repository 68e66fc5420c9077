"""The canary: before official grading, a hostile probe tries the very sandbox that will grade.

Once per batch (``grade``, Gradescope's ``run_autograder``) and once per nbgrader autograde
process, a built-in probe runs in a worker with the course's limits and tries what student
code must never do: read a solution and a suite, write into the course folder and the
output folder, read another staged submission, connect to a TCP socket the grader listens
on, signal the grader, and start more processes than the course allows. If anything gets
through, grading is refused (:class:`~autograder.sandbox.IsolationRefused`, exit status 3).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

from .config import Course
from .errors import SandboxFailure, StudentError
from .proxy import Session
from .sandbox import IsolationRefused, Layout, Limits

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
    limits = course.limits
    with tempfile.TemporaryDirectory(prefix="autograder-canary-") as scratch:
        folder, decoy = Path(scratch) / "probe", Path(tempfile.mkdtemp(prefix="autograder-submission-"))
        folder.mkdir()
        (folder / "autograder_canary.py").write_text(PROBE)
        (decoy / "secret.py").write_text("answer = 42\n")
        session = Session(
            Layout(folder, tuple(course.path(m) for m in course.sandbox.support_modules),
                   tuple(course.path(p) for p in course.sandbox.readonly_paths)),
            Limits(call_seconds=10, memory_mb=limits.memory_mb, processes=limits.processes,
                   file_mb=limits.file_mb, open_files=limits.open_files, disk_mb=limits.disk_mb),
            budget_seconds=60)
        try:
            breaches = _probe(session, course, out, decoy)
        except (SandboxFailure, StudentError) as failure:
            raise IsolationRefused(f"the sandbox's canary could not run ({failure}); nothing was graded") from None
        finally:
            session.close()
            shutil.rmtree(decoy, ignore_errors=True)
    if breaches:
        raise IsolationRefused("refusing to grade: the sandbox's canary got through: " + "; ".join(breaches))


def _probe(session: Session, course: Course, out: Path | None, decoy: Path) -> list[str]:
    probe = session.module("autograder_canary")
    secrets = [*sorted(course.path(course.solutions or course.package).glob("*.py"))[:1],
               course.path(course.exercises[0].suite), decoy / "secret.py"]
    if out is not None and (out / "gradebook.sqlite").exists():
        secrets.append(out / "gradebook.sqlite")
    breaches = [f"read {path}" for path in secrets if probe.read(str(path)) == "got through"]
    for folder in [course.root, *([out] if out is not None else [])]:
        if probe.write(str(folder)) == "got through" or (folder / ".autograder-canary").exists():
            breaches.append(f"wrote into {folder}")
            (folder / ".autograder-canary").unlink(missing_ok=True)
    with socket.create_server(("127.0.0.1", 0)) as server:
        if probe.connect(server.getsockname()[1]) == "got through":
            breaches.append("connected to a TCP socket on 127.0.0.1")
    if probe.signal(os.getpid()) == "got through":
        breaches.append("signalled the grader")
    started = probe.processes(course.limits.processes + 8)
    if started >= course.limits.processes:
        breaches.append(f"started {started} processes (the course allows {course.limits.processes})")
    return breaches
