"""A class's notebooks autograded in parallel, into nbgrader's own ``autograded/`` and gradebook.

:func:`autograde_class` starts ``jobs`` long-lived workers
(:mod:`autograder.delivery.nbgrader.autograde_worker`), each running nbgrader's own
``Autograde`` converter for one (assignment, student) at a time, and hands them the class's
submissions as they come free, with a progress bar; what they write is what ``nbgrader
autograde`` writes. It resumes as nbgrader does (``force`` autogrades again); a notebook nbgrader
cannot autograde, or a worker that stops, fails that student's row only. Why and how fast:
docs/nbgrader.md, "Step by step".
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ...errors import GraderError
from .course import GRADING

WORKER = Path(__file__).with_name("autograde_worker.py")


@dataclass(frozen=True)
class Failed:
    """A submission nbgrader could not autograde: why (the exception, one line) and nbgrader's log of it."""

    assignment: str
    student: str
    why: str
    log: str


@dataclass
class ClassAutograded:
    """What :func:`autograde_class` did: the submissions autograded, those left as already
    autograded, and those that failed, with nbgrader's reason."""

    autograded: list[tuple[str, str]] = field(default_factory=list)  # (assignment, student)
    skipped: int = 0
    failed: list[Failed] = field(default_factory=list)


def autograde_class(folder: Path, assignments: list[str] | None, jobs: int, force: bool,
                    console: Console) -> ClassAutograded:
    """Autograde every submission of ``assignments`` (default: all) of the nbgrader course ``folder``,
    ``jobs`` at once."""
    folder = _course_folder(folder)
    workers = [_Worker(folder) for _ in range(jobs)]
    try:
        plan = workers[0].ask({"plan": {"assignments": assignments, "force": force}})
        if "error" in plan:
            raise GraderError(plan["error"])
        todo = [(assignment, student) for assignment, student in plan["jobs"]]
        done = ClassAutograded(skipped=plan["submitted"] - len(todo))
        _autograde(workers, todo, force, done, console)
    finally:
        for worker in workers:
            worker.close()
    return done


def _course_folder(folder: Path) -> Path:
    """``folder`` resolved, checked to be an nbgrader course that ``python -m autograder nbgrader`` made."""
    folder = folder.resolve()
    if not (folder / "nbgrader_config.py").is_file() or not (folder / GRADING / "course.yaml").is_file():
        raise GraderError(f"{folder}: not an nbgrader course folder that `python -m autograder nbgrader` made "
                          f"(no nbgrader_config.py and {GRADING}/course.yaml)")
    return folder


def _autograde(workers: list[_Worker], todo: list[tuple[str, str]], force: bool, done: ClassAutograded,
               console: Console) -> None:
    """Hand ``todo`` to the first worker free, one at a time, as a progress bar shows."""
    idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
    for worker in workers:
        idle.put(worker)

    def one(assignment: str, student: str) -> Failed | None:
        worker = idle.get()
        try:
            return worker.autograde(assignment, student, force)
        finally:
            idle.put(worker)

    columns = (TextColumn("autograding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=console) as progress, ThreadPoolExecutor(len(workers)) as threads:
        bar = progress.add_task("", total=done.skipped + len(todo), completed=done.skipped)
        running = {threads.submit(one, *pair): pair for pair in todo}
        for future in as_completed(running):
            assignment, student = running[future]
            failed = future.result()
            if failed is None:
                done.autograded.append((assignment, student))
            else:
                done.failed.append(failed)
            progress.update(bar, advance=1, description=f"{student}: {assignment}")
    done.autograded.sort()
    done.failed.sort(key=lambda failed: (failed.assignment, failed.student))


class _Worker:
    """One worker process (:mod:`autograder.delivery.nbgrader.autograde_worker`), started at once so that
    nbgrader's start-up runs in every worker together, and again after it stops."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.log: IO[bytes] = tempfile.TemporaryFile()  # its stderr: nbgrader's log, shown if it stops
        self.scratch: tempfile.TemporaryDirectory[str] | None = None
        self.process = self._start()

    def _start(self) -> subprocess.Popen[str]:
        """The process, with a temporary folder of its own: what one that stopped left there (a
        student's staged copy, its kernels' folder) is removed with the folder."""
        if self.scratch is not None:
            self.scratch.cleanup()
        self.scratch = tempfile.TemporaryDirectory(prefix="autograder-autograde-", ignore_cleanup_errors=True)
        # -P: the script's own folder stays off the path, where the engine's modules would shadow others
        return subprocess.Popen([sys.executable, "-P", str(WORKER)], cwd=self.folder, text=True, encoding="utf-8",
                                env={**os.environ, "TMPDIR": self.scratch.name},
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """The worker's answer to ``request``; :class:`GraderError` if it stopped instead."""
        if self.process.poll() is not None:
            self.process = self._start()
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # it stopped: said below
        answer = self.process.stdout.readline()
        if not answer:
            raise GraderError(f"the autograde worker stopped (exit status {self.process.wait()}): {self._log_tail()}")
        return json.loads(answer)

    def autograde(self, assignment: str, student: str, force: bool) -> Failed | None:
        """Autograde one submission; None, or why it failed."""
        try:
            answer = self.ask({"autograde": [assignment, student], "force": force})
        except GraderError as stopped:
            with contextlib.suppress(GraderError):  # a worker that cannot start fails the next submission
                self.ask({"forget": [assignment, student]})
            return Failed(assignment, student, str(stopped).splitlines()[0], str(stopped))
        return None if answer["success"] else Failed(assignment, student, answer["why"], answer["log"])

    def _log_tail(self, lines: int = 20) -> str:
        self.log.seek(0)
        return "\n".join(self.log.read().decode("utf-8", "replace").splitlines()[-lines:])

    def close(self) -> None:
        """Let the worker finish (its grader process closes with it); stop it if it will not."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        if self.scratch is not None:
            self.scratch.cleanup()
