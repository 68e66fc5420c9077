"""One submission's grading, whole or in parts of one exercise each, put together again.

Where a batch has fewer submissions than grading threads, each submission's exercises are graded
at once, each on whichever grader is free (:class:`GradingInParts`), and the parts' results make
the grade the whole would give.
"""

from __future__ import annotations

import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..config import Course
from ..engine.report_files import write_reports
from ..intake.staging import Staged
from ..results import Grade
from .grader import Graded, Part

Grader = Callable[[Course, str, Staged, Path, Part], Graded]  # GraderPool.grade, Cluster.grade


class GradingInParts:
    """One submission's grading into its report folder: whole, or split over ``groups`` of its
    exercises (as many as the graders that would otherwise idle), graded at once on whichever
    graders are free and then put together. A group is a run of exercises in the course's order,
    as even in number as can be: each part costs a grader's round of pytest and zygotes, which
    weighs most on a part of one exercise.

    A split grading keeps what a whole one keeps: every public property is graded before any
    hidden one (docs/security.md). Its parts are first the public properties of each group,
    then, once all of those are graded, the hidden properties of each group, a part each,
    which is given its group's public results and answers all of them, in the suites' order.

    A part is graded as its exercises alone are (``grade --exercise``), into a scratch folder,
    with the submission's time budget counted from the moment the first part began (so it
    still caps the whole grading's wall time). The hidden parts' results in the course's order, and
    their notes (the same in each), make the grade the whole would give (:meth:`Grade.joined`):
    a part's texts were capped with at least the room the whole leaves them, so capping the
    joined grade cuts them where the whole would (``tests/engine/test_results.py``). A part that
    fails fails the submission, with that part's log.
    """

    def __init__(self, course: Course, name: str, staged: Staged, folder: Path, exercises: list[str] | None,
                 groups: int):
        self.course, self.name, self.staged, self.folder = course, name, staged, folder
        for earlier in ("results.json", "feedback.md"):  # should this grading fail, no earlier grade stands
            (folder / earlier).unlink(missing_ok=True)
        modules = [e.module for e in course.exercises if exercises is None or e.module in exercises]
        whole = groups < 2 or len(modules) < 2 or len(modules) != len(set(exercises or modules))  # or a name unknown
        count = min(groups, len(modules))
        apart: list[list[str] | None] = [modules[len(modules) * i // count:len(modules) * (i + 1) // count]
                                         for i in range(count)]
        self.exercises = [exercises] if whole else apart * 2
        self.indices = range(len(self.exercises))
        self.public = 0 if whole else count  # parts 0 .. public - 1 grade the public properties
        self.answers: dict[int, Graded] = {}
        # the parts' reports: named so that no worker can, as the batch's own are (batch/withheld.py)
        self.scratch = tempfile.TemporaryDirectory(prefix=f"autograder-parts-{secrets.token_hex(16)}-") \
            if len(self.exercises) > 1 else None
        self.began: float | None = None
        self.lock = threading.Lock()
        self.left = len(self.exercises)
        self.public_left = self.public
        self.public_graded = threading.Event()

    def _folder(self, index: int) -> Path:
        return self.folder if self.scratch is None else Path(self.scratch.name) / str(index)

    def grade(self, index: int, grader: Grader) -> None:
        """Grade part ``index`` with ``grader`` (a grading thread's). A hidden part waits for
        every public part: the batch submits them first, and its threads take parts in that
        order, so those are all being graded by then."""
        began = None
        if self.scratch is not None:  # the parts share one budget, from the first part's start
            with self.lock:
                self.began = began = self.began or time.monotonic()
        part = Part(self.exercises[index], began)
        if not self.public:
            self.answers[index] = grader(self.course, self.name, self.staged, self._folder(index), part)
        elif index < self.public:
            try:
                self.answers[index] = grader(self.course, self.name, self.staged, self._folder(index),
                                             replace(part, public_only=True))
            finally:
                self._public_done()
        else:
            self.public_graded.wait()
            failed = next((self.answers[i] for i in range(self.public) if self.answers[i][0] is None), None)
            # a failed public part fails the submission with its log: nothing more to grade
            public = self.answers[index - self.public][0]
            self.answers[index] = failed or grader(self.course, self.name, self.staged, self._folder(index),
                                                   replace(part, public_results=public.results if public else None))

    def _public_done(self) -> None:
        with self.lock:
            self.public_left -= 1
            if self.public_left == 0:
                self.public_graded.set()

    def last_in(self) -> bool:
        """Whether the part just graded was the last (the batch's thread asks once per part)."""
        self.left -= 1
        return self.left == 0

    def joined(self) -> Graded:
        """``(grade, seconds, problem)`` of the whole submission, its reports written."""
        if self.scratch is None:
            return self.answers[0]
        try:
            seconds = time.monotonic() - (self.began or time.monotonic())
            grades = []
            for index in self.indices:
                grade, _seconds, problem = self.answers[index]
                if grade is None:
                    log = self._folder(index) / "grader.log"
                    if log.is_file():
                        self.folder.mkdir(parents=True, exist_ok=True)
                        (self.folder / "grader.log").write_bytes(log.read_bytes())
                    return None, seconds, problem
                if index >= self.public:
                    grades.append(grade)
            grade = Grade.joined(grades, seconds).capped(self.course.limits)  # as the reports hold it
            write_reports(self.course, self.folder, self.name, grade)
            return grade, seconds, ""
        finally:
            self.scratch.cleanup()
