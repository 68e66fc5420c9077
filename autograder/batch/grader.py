"""Grader processes: where a batch's submissions are graded, one after another, never in the batch itself.

A :class:`GraderProcess` is ``python -m autograder.batch.serve`` (:mod:`autograder.batch.serve`):
it imports the suites and the solutions, which the batch's process never does, and grades each
staged submission it is handed into that submission's report folder. A :class:`GraderPool`
keeps one per grading thread of a batch, or of ``mutate``, whose mutants are submissions too. A
request is a :class:`Request` on one JSON line, the answer the :class:`~autograder.results.Grade`
on one line, or nothing from a process that failed or died, whose log is then kept.
"""

from __future__ import annotations

import itertools
import json
import os
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..config import Course
from ..intake.staging import Staged
from ..isolation import compiled_code, hypothesis_storage, sweep_folders
from ..results import Grade, PropertyResult

ENGINE_HOME = Path(__file__).resolve().parents[2]  # where `python -m autograder` is found
ERROR = "error: "  # how a grader process's log says the error it stopped on
Graded = tuple[Grade | None, float, str]  # a grading's grade (None: it failed), seconds and problem


@dataclass(frozen=True)
class Part:
    """Which part of a submission's grading a grader process does: the properties of ``exercises``
    (default all); of those the public ones alone (``public_only``), or the hidden ones, given the
    results of a grading of the public ones (``public_results``), which it then answers too. The
    submission's time budget counts from ``began`` (``time.monotonic()``, this machine's clock) if
    that is before now. ``first_failure`` stops at the first failing property (a mutant's grading)."""

    exercises: list[str] | None = None
    began: float | None = None
    public_only: bool = False
    public_results: tuple[PropertyResult, ...] | None = None
    first_failure: bool = False


WHOLE = Part()  # every property of every exercise


@dataclass(frozen=True)
class Request:
    """What a grader process is asked: ``part`` of the grading of the submission staged in
    ``staged`` (with staging's ``notes``), its reports written into ``out`` for ``name``."""

    staged: Path
    out: Path
    name: str
    notes: tuple[str, ...]
    part: Part = WHOLE

    def to_plain(self) -> dict:
        """The request as plain data (JSON), as it goes to the grader process (:meth:`from_plain`)."""
        part = self.part
        return {"staged": str(self.staged), "out": str(self.out), "name": self.name, "notes": list(self.notes),
                "exercises": part.exercises, "began": part.began, "public_only": part.public_only,
                "public_results": None if part.public_results is None else [r.to_plain() for r in part.public_results],
                "first_failure": part.first_failure}

    @classmethod
    def from_plain(cls, plain: dict) -> Request:
        """The request :meth:`to_plain` made plain."""
        public = plain["public_results"]
        part = Part(plain["exercises"], plain["began"], plain["public_only"],
                    None if public is None else tuple(map(PropertyResult.from_plain, public)), plain["first_failure"])
        return cls(Path(plain["staged"]), Path(plain["out"]), plain["name"], tuple(plain["notes"]), part)


def grader_environment(scratch: str) -> dict[str, str]:
    """The environment of a process that grades as a grader process does (a grader process,
    bench's), whose scratch folder is ``scratch``: this one's, with the hash seed the
    examples were recorded under, hypothesis's and the compiled code's folders (where it writes
    the code it compiles, whatever ``PYTHONDONTWRITEBYTECODE`` says here), and the engine importable.
    The caller's pytest settings (``PYTEST_ADDOPTS``, ``PYTEST_PLUGINS``, ...) stay here: a
    grading's pytest takes the engine's arguments alone, and its hypothesis loads no installed
    package's plugin (``HYPOTHESIS_NO_PLUGINS``): the grade depends on the course alone."""
    kept = {name: value for name, value in os.environ.items()
            if name != "PYTHONDONTWRITEBYTECODE" and not name.startswith("PYTEST_")}
    return {**kept, "PYTHONHASHSEED": "0", "HYPOTHESIS_NO_PLUGINS": "1",
            "HYPOTHESIS_STORAGE_DIRECTORY": hypothesis_storage(scratch),
            "PYTHONPYCACHEPREFIX": str(compiled_code() or os.path.join(scratch, "compiled")),
            "PYTHONPATH": os.pathsep.join([str(ENGINE_HOME), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def lane_core(lane: int) -> int:
    """The core of the ``lane``-th grader process of a batch: the ``lane``-th of those this process
    may run on, round again when there are more lanes than cores."""
    cores = sorted(os.sched_getaffinity(0))
    return cores[lane % len(cores)]


def grader_seconds(course: Course, exercises: list[str] | None = None) -> float:
    """How long one grader process may take: its exercises' budgets, capped by the submission's, and a minute
    for starting up and writing the reports."""
    budget = course.limits.exercise_seconds * len(exercises or course.exercises)
    return min(budget, course.limits.submission_seconds or budget) + 60


class GraderPool:
    """A grader process per grading thread of a batch, which grades that thread's submissions one
    after another (:class:`GraderProcess`): a batch of 300 on two jobs starts two grader
    processes, not 300, and each submission's grading is the one a fresh process gives.

    With ``one_core_each`` (a batch on this machine, not a Dask worker's pool, which shares the
    machine with other workers), the Nth grader process and every worker it starts keep to the Nth
    of this process's cores (:func:`lane_core`): a grading is a conversation of thousands of short
    calls between a grader and its worker, and on one core each answer wakes its reader without
    a wake-up sent across cores."""

    def __init__(self, one_core_each: bool = False) -> None:
        self.local = threading.local()
        self.graders: list[GraderProcess] = []
        self.started: list[GraderProcess] = []  # started ahead, for the next threads that grade
        self.one_core_each = one_core_each
        self.lanes = itertools.count()

    def start(self, course: Course, count: int) -> None:
        """Start ``count`` grader processes of ``course`` now, for the first threads that grade (the
        pool grades one course): their start-up overlaps what the caller does before it grades."""
        for _ in range(count):
            grader = self._new(course)
            grader.start()
            self.started.append(grader)

    def grade(self, course: Course, name: str, staged: Staged, folder: Path, part: Part = WHOLE,
              limit: float | None = None) -> Graded:
        """``part`` of ``staged``'s grading, into ``folder``, by this thread's grader process, in
        ``limit`` seconds (:meth:`GraderProcess.grade`)."""
        grader = getattr(self.local, "grader", None)
        if grader is None:
            try:
                grader = self.started.pop(0)  # list.pop is atomic: threads may take theirs at once
            except IndexError:
                grader = self._new(course)
            self.local.grader = grader
        return grader.grade(name, staged, folder, part, limit)

    def _new(self, course: Course) -> GraderProcess:
        core = lane_core(next(self.lanes)) if self.one_core_each else None  # next() of a count is atomic
        grader = GraderProcess(course, core)
        self.graders.append(grader)  # list.append is atomic: threads may add theirs at once
        return grader

    def __enter__(self) -> GraderPool:
        return self

    def __exit__(self, *exc: object) -> None:
        for grader in self.graders:
            grader.close()
        sweep_folders()  # the workers' folders of a grader killed before it closed them (a stopped batch's)


class GraderProcess:
    """A grader process (``python -m autograder.batch.serve``) that grades staged submissions
    one after another, each into its report folder, until it is closed.

    Student code never runs in it, and a grading leaves nothing that decides the next one: each
    runs pytest afresh with its own plugin, workers and hypothesis engine. So a batch keeps one
    per grading thread (:class:`GraderPool`) and nbgrader one per run, which saves a grader's
    start-up (Python, pytest, hypothesis, the suites, the sandbox's check) for every grading but
    the first, and so does a Dask worker (:mod:`autograder.batch.cluster`).

    A grading that fails, overruns :func:`grader_seconds` or kills the process ends it: its
    output goes to that grading's ``grader.log``, and the next grading (as after a process that
    died between gradings) starts a fresh process.
    """

    def __init__(self, course: Course, core: int | None = None):
        self.course = course
        self.core = core  # the one core it and its workers run on, if kept to one
        self.process: subprocess.Popen | None = None
        self.scratch: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> GraderProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def grade(self, name: str, staged: Staged, folder: Path, part: Part = WHOLE,
              limit: float | None = None) -> Graded:
        """Grade ``part`` of ``staged``'s grading into ``folder``; ``(grade, seconds, problem)``. It
        may take ``limit`` seconds (default :func:`grader_seconds`), a fresh process's start-up included."""
        folder.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        request = Request(staged.root, folder, name, tuple(staged.notes), part).to_plain()
        if self.process is not None and self.process.poll() is not None:  # it died between gradings
            self.close()
        try:
            process = self.start()
            assert process.stdin is not None
            process.stdin.write((json.dumps(request) + "\n").encode())
            process.stdin.flush()
            limit = grader_seconds(self.course, part.exercises) if limit is None else limit
            answer = self._answer(time.monotonic() + limit)
        except (OSError, TimeoutError) as error:
            answer = "timeout" if isinstance(error, TimeoutError) else "no answer"
        seconds = time.monotonic() - started
        try:
            return Grade.from_plain(json.loads(answer)), seconds, ""
        except (ValueError, TypeError, KeyError):
            pass
        said = self._keep_log(folder / "grader.log")
        self.close()
        return None, seconds, f"grader failed ({said or answer[:200]})"

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None
        if self.scratch is not None:
            self.scratch.cleanup()
            self.scratch = None

    def start(self) -> subprocess.Popen:
        """The process, started now if it is not running."""
        return self.process or self._start()

    def _start(self) -> subprocess.Popen:
        self.scratch = tempfile.TemporaryDirectory(prefix="autograder-grader-")
        scratch = self.scratch.name
        env = grader_environment(scratch)
        with open(Path(scratch) / "grader.log", "wb") as log:
            core = [] if self.core is None else ["--core", str(self.core)]  # it keeps to it before any worker starts
            self.process = subprocess.Popen(
                [sys.executable, "-m", "autograder.batch.serve", str(self.course.file), "--lang", self.course.language,
                 *core],
                cwd=scratch, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        return self.process

    def _answer(self, deadline: float) -> str:
        """The process's one-line answer to the last request, by ``deadline``; raises TimeoutError."""
        assert self.process is not None and self.process.stdout is not None
        with selectors.DefaultSelector() as waiting:
            waiting.register(self.process.stdout, selectors.EVENT_READ)
            if not waiting.select(max(0.0, deadline - time.monotonic())):
                raise TimeoutError
        line = self.process.stdout.readline()  # the process writes its answer as one line, at once
        if not line:
            return f"exit code {self.process.wait()}"
        return line.decode(errors="replace").strip()

    def _keep_log(self, log: Path) -> str:
        """Keep the end of the process's output in ``log``; answer the error it stopped on, if it said
        one (:mod:`autograder.batch.serve` says a course's or the grader's fault last), on one line
        and without a traceback's frames."""
        if self.scratch is None:
            return ""
        output = (Path(self.scratch.name) / "grader.log").read_bytes()[-200_000:]
        log.write_bytes(output)
        _, found, said = ("\n" + output.decode(errors="replace")).rpartition(f"\n{ERROR}")
        lines = [line for line in said.splitlines() if line.strip() and not line[0].isspace()  # a traceback's
                 and line != "Traceback (most recent call last):"] if found else []  # frames are in the log
        return " ".join(" ".join(lines).split())[:300]

