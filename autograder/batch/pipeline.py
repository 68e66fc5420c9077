"""Grading many submissions: staged here, graded in grader processes, recorded in the gradebook.

:func:`grade_many` stages each submission (:mod:`autograder.intake.staging`, ``jobs`` at once),
skips one the gradebook holds as graded unchanged, hands the others to grader processes (a
:class:`~autograder.batch.grader.GraderPool` here, or a Dask cluster's), ``jobs`` at once and in
parts where threads would idle (:mod:`autograder.batch.parts`), and records each grading in the
gradebook and ``grades.csv``, all of them out of the workers' reach until the batch ends
(:mod:`autograder.batch.withheld`). Student code never runs in this process, nor the suites: the
batch keeps going whatever happens to one submission.
"""

from __future__ import annotations

import re
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .. import __version__
from ..config import Course
from ..engine.digest import course_digest
from ..engine.report_files import read_results, write_reports
from ..errors import GraderError, SubmissionError
from ..intake.staging import Staged, stage_many
from ..isolation import isolation
from ..results import Grade
from .gradebook import BATCH_FILES, Gradebook
from .grader import Graded, GraderPool, Part
from .parts import GradingInParts
from .withheld import Withheld

Row = tuple[str, Grade | None, str]  # a submission's name, its grade (None: the grading failed) and a note


@dataclass(frozen=True)
class BatchOptions:
    """How a batch grades: ``jobs`` submissions (or parts of one) at once, the ``exercises`` chosen
    (default all), and submissions graded unchanged graded again too if ``force``."""

    jobs: int = 1
    force: bool = False
    exercises: list[str] | None = None


class Elsewhere(Protocol):
    """Graders on other machines (:class:`autograder.batch.cluster.Cluster`), which the batch hands
    every submission at once; ``isolation`` names their sandboxes for the gradebook."""

    isolation: str

    def grade(self, course: Course, name: str, staged: Staged, folder: Path, part: Part) -> Graded: ...


def grade_many(course: Course, submissions: list[tuple[str, Path]], out: Path, console: Console,
               options: BatchOptions = BatchOptions(), elsewhere: Elsewhere | None = None) -> list[Row]:
    """Grade every ``(name, path)`` into ``out/<name>/``; return a row per submission, by name.
    Names are made safe first (:func:`safe_names`). The graders are a :class:`GraderPool` here,
    or ``elsewhere``'s. While the batch runs, its reports and gradebook are kept where no worker
    can name them, and they are in ``out`` when it returns (:class:`Withheld`)."""
    named = safe_names(submissions)
    # resolved: the graders run in scratch folders of their own
    with Withheld(out.resolve()) as reports, GraderPool(one_core_each=True) as graders:
        batch = _Batch(course, reports, options, elsewhere, graders)
        if elsewhere is None:  # they start up while the submissions are staged
            graders.start(course, graders_kept_busy(course, len(named), options))
        staged_all: list[Staged | SubmissionError] = []
        try:
            staged_all = stage_many(course, [path for _, path in named], options.jobs)
            for (name, _path), staged in zip(named, staged_all, strict=True):
                batch.stage(name, staged)
            batch.grade_all(console)
            batch.book.write_csv(course, reports / "grades.csv")
        finally:
            batch.book.close()
            for staged in staged_all:  # those left when the batch is stopped (Ctrl-C, SIGTERM)
                if isinstance(staged, Staged):
                    staged.remove()
    return [batch.rows[name] for name in sorted(batch.rows)]


def graders_kept_busy(course: Course, submissions: int, options: BatchOptions) -> int:
    """How many grader processes a batch of ``submissions`` keeps busy: one a job, but no more than
    the parts it grades at once, at most one an exercise of each submission (:class:`GradingInParts`)."""
    exercises = len(set(options.exercises or [e.module for e in course.exercises]))
    return max(1, min(options.jobs, submissions * exercises))


def groups_of_exercises(jobs: int, submissions: int) -> int:
    """Over how many groups of its exercises each of ``submissions`` is graded: where there are fewer
    submissions than ``jobs``, the threads that would idle share them (:class:`GradingInParts`)."""
    return -(-jobs // submissions) if 0 < submissions < jobs else 1


@dataclass
class _Pending:
    """A staged submission to grade: its name, where its reports go, and its gradebook key."""

    name: str
    staged: Staged
    folder: Path
    key: dict = field(default_factory=dict)


class _Batch:
    """One :func:`grade_many`: its gradebook, the rows found so far and the submissions left to grade."""

    def __init__(self, course: Course, out: Path, options: BatchOptions, elsewhere: Elsewhere | None,
                 graders: GraderPool):
        self.course, self.out, self.options, self.elsewhere = course, out, options, elsewhere
        self.graders = graders  # this machine's, which grade unless elsewhere does
        self.book = Gradebook(out)
        self.rows: dict[str, Row] = {}
        self.todo: list[_Pending] = []
        where = elsewhere.isolation if elsewhere is not None else isolation().describe()
        self.common = {"course_digest": course_digest(course), "seed": course.hypothesis.seed,
                       "engine_version": __version__, "isolation": where,
                       "max_score": course.full_marks(options.exercises), "exercises": options.exercises,
                       # a grading in another language writes other feedback: not the same grading
                       **({} if course.language == "en" else {"language": course.language})}

    def stage(self, name: str, staged: Staged | SubmissionError) -> None:
        """Take one staged submission to grade; one that could not be read is graded unreadable
        here, and one graded unchanged before is skipped (unless forced)."""
        folder = report_folder(self.out, name)
        if isinstance(staged, SubmissionError):
            self._unreadable(name, folder, staged)
            return
        key = {**self.common, "digest": staged.digest}
        if not self.options.force and self.book.is_current(name, key) and (folder / "results.json").is_file():
            self.rows[name] = (name, read_results(folder), "unchanged, skipped")
            staged.remove()
            return
        self.todo.append(_Pending(name, staged, folder, key))

    def _unreadable(self, name: str, folder: Path, error: SubmissionError) -> None:
        note = f"unreadable: {error}"  # the same unreadable file on a rerun adds no gradebook row
        key = {**self.common, "digest": "unreadable"}
        if self.options.force or not self.book.is_current(name, key, note) or not (folder / "results.json").is_file():
            grade = Grade.unreadable(self.course, f"The submission could not be read: {error}", self.options.exercises)
            write_reports(self.course, folder, name, grade)
            self.book.record(name, key, grade, 0.0, note=note)
        self.rows[name] = (name, read_results(folder), note)

    def grade_all(self, console: Console) -> None:
        """Grade what :meth:`stage` left to grade, ``jobs`` at once, with a progress bar that
        counts every submission (those unreadable or unchanged are done before grading starts)."""
        jobs = self.options.jobs if self.elsewhere is None else max(1, len(self.todo))  # a cluster spreads them
        groups = groups_of_exercises(jobs, len(self.todo)) if self.elsewhere is None else 1
        grader = self.graders.grade if self.elsewhere is None else self.elsewhere.grade
        columns = (TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.description}"))
        total = len(self.rows) + len(self.todo)
        with Progress(*columns, console=console, transient=False) as progress, \
                ThreadPoolExecutor(max(1, jobs)) as threads:
            bar = progress.add_task("", total=total, completed=len(self.rows))
            running: dict[Future, tuple[_Pending, GradingInParts]] = {}
            for pending in self.todo:
                parts = GradingInParts(self.course, pending.name, pending.staged, pending.folder,
                                       self.options.exercises, groups)
                running |= {threads.submit(parts.grade, index, grader): (pending, parts) for index in parts.indices}
            for future in as_completed(running):
                future.result()
                pending, parts = running[future]
                if parts.last_in():
                    self._record(pending, parts.joined())
                    progress.update(bar, advance=1, description=pending.name)

    def _record(self, pending: _Pending, graded: Graded) -> None:
        grade, seconds, problem = graded
        pending.staged.remove()
        if grade is None:  # the grader's failure: a row that says so, never a missing student or a zero
            if (pending.folder / "grader.log").is_file():
                problem = f"{problem}, see {pending.name}/grader.log"
            self.book.record_failure(pending.name, pending.key, problem)
            self.rows[pending.name] = (pending.name, None, problem)
            return
        # what staging noticed (a copied notebook cell, skipped links) is the instructor's to see too
        self.book.record(pending.name, pending.key, grade, seconds, note="; ".join(pending.staged.notes))
        self.rows[pending.name] = (pending.name, grade, f"{seconds:.1f} s")


def safe_names(submissions: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """``submissions`` with each name fit to be a folder of the output and a gradebook row.

    A name comes from a file name the student chose: ``...zip`` is named ``..``, which would
    put its reports beside the output folder. Only ``[A-Za-z0-9._-]`` is kept (others become
    ``_``); a name that is empty, starts with a dot or is one of the batch's own files gets a
    leading ``_``. Two submissions under one name would overwrite each other's reports, so
    that stops the batch before anything is graded.
    """
    named: list[tuple[str, Path]] = []
    first: dict[str, Path] = {}
    for name, path in submissions:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", name)
        if not name or name.startswith(".") or name in BATCH_FILES:
            name = "_" + name
        if name in first:
            raise GraderError(f"two submissions would be filed under the name {name!r}: {first[name]} and {path}; "
                              "rename one of them")
        first[name] = path
        named.append((name, path))
    return named


def report_folder(out: Path, name: str) -> Path:
    """``out/<name>``, checked to be a folder right inside ``out`` (``out`` is resolved)."""
    folder = (out / name).resolve()
    if folder.parent != out:
        raise GraderError(f"the reports of {name!r} would land at {folder}, outside {out}")
    return folder


