"""The batch a class report is made from: a ``grade`` run's gradebook and results, and the
submissions' code for the similarity section (nbgrader's side is :mod:`.nbgrader`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...batch.pipeline import safe_names
from ...config import Course
from ...errors import GraderError
from ...intake.staging import SubmissionError, stage, submission_name
from ...results import Grade


@dataclass
class Entry:
    """One submission's latest grading (one student's, from nbgrader), as the gradebook and
    its ``results.json`` (the autograded notebooks' feedback) hold it."""

    name: str
    score: float
    seconds: float | None  # None where the grader does not record it (nbgrader)
    graded_at: str
    note: str
    grade: Grade | None  # None when its results.json is missing (a grader that failed)
    graded: bool  # whether the suites ran (an unreadable submission has a grade, but nothing ran)
    exercise_scores: dict[str, float] | None = None  # where the gradebook's scores are not the grade's (nbgrader)
    hidden: dict[str, tuple[int, int]] = field(default_factory=dict)  # exercise -> (passed, of), where only counted

    def scores(self, course: Course) -> dict[str, float]:
        """Points per exercise graded (the gradebook's, manual grades included, where it has its own)."""
        if self.exercise_scores is not None:
            return self.exercise_scores
        return {module: score for module, (score, _) in self.grade.by_exercise(course).items()} if self.grade else {}


@dataclass
class Batch:
    """What a report is made from, whichever grader made it."""

    entries: list[Entry]
    origin: str  # "grade" (a `grade` run's folder) or "nbgrader" (an autograded nbgrader course)
    sources: Callable[[list[Path], list[str]], dict[str, dict[str, str]]]  # --submissions -> name -> module -> code
    boilerplate: list[tuple[str, str]]  # what every submission starts from


def load_batch(folder: Path) -> list[Entry]:
    """Every submission's latest grading in the output folder of a ``grade`` run."""
    database = folder / "gradebook.sqlite"
    if not database.is_file():
        raise GraderError(f"{folder}: no gradebook.sqlite here; name the --out folder of a `grade` run")
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT submission, score, seconds, graded_at, note FROM gradings WHERE id IN "
            "(SELECT MAX(id) FROM gradings GROUP BY submission) ORDER BY submission").fetchall()
    except sqlite3.Error as error:
        raise GraderError(f"{database} cannot be read: {error}") from None
    finally:
        connection.close()
    entries = []
    for name, score, seconds, graded_at, note in rows:
        results = folder / name / "results.json"
        grade = None
        if results.is_file():
            try:
                grade = Grade.from_gradescope(json.loads(results.read_text(encoding="utf-8")))
            except (ValueError, KeyError, TypeError) as error:
                note = "; ".join(filter(None, [note, f"results.json unreadable: {error}"]))
        entries.append(Entry(name, score, seconds, graded_at, note, grade,
                             graded=grade is not None and grade.seconds is not None))
    if not entries:
        raise GraderError(f"{database} records no grading yet")
    return entries


def graded_exercises(course: Course, entries: list[Entry]) -> list[str]:
    """The course's exercises that this batch graded (``grade --exercise`` grades fewer)."""
    seen = {r.exercise for e in entries if e.graded and e.grade for r in e.grade.results}
    seen |= {module for e in entries if e.exercise_scores for module in e.exercise_scores}
    return [e.module for e in course.exercises if e.module in seen] or [e.module for e in course.exercises]



def submission_modules(course: Course, paths: list[Path], modules: list[str]) -> dict[str, dict[str, str]]:
    """``name -> module -> source`` for each submission, named as ``grade`` names it."""
    found: dict[str, dict[str, str]] = {}
    for name, path in safe_names([(submission_name(p), p) for p in paths]):
        try:
            staged = stage(course, path)
        except SubmissionError:
            continue  # graded as unreadable: nothing to compare
        try:
            package = staged.root / course.package
            found[name] = {m: (package / f"{m}.py").read_text(encoding="utf-8", errors="replace")
                           for m in modules if (package / f"{m}.py").is_file()}
        finally:
            staged.remove()
    return found


def boilerplate_sources(course: Course) -> list[tuple[str, str]]:
    """What every submission starts from: the course package as handed out (stubs, lesson)
    and the provided files."""
    files = sorted(course.path(course.package).rglob("*.py")) + [course.path(p) for p in course.provided]
    return [(str(f), f.read_text(encoding="utf-8")) for f in dict.fromkeys(files) if f.is_file()]
