"""The gradebook: a SQLite record of every grading run, and ``grades.csv`` made from it.

Each run stores the submission's name and content hash, the exercises graded, the seed, the
engine version, the course's hash, the isolation mode, the time taken and the per-test results;
a submission whose latest grading has the same hashes, exercises, seed and engine version is
skipped. ``grades.csv`` writes a cell that a spreadsheet would run as a formula
(:data:`FORMULA_STARTS`) with a leading ``'``. What a batch writes: docs/instructors.md, "What a
batch writes".
"""

from __future__ import annotations

import csv
import datetime
import sqlite3
from pathlib import Path

from ..config import Course
from ..results import Grade

BATCH_FILES = frozenset({"gradebook.sqlite", "grades.csv"})  # beside the submissions' report folders
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

SCHEMA = """
CREATE TABLE IF NOT EXISTS gradings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    submission TEXT NOT NULL,
    digest TEXT NOT NULL,
    course_digest TEXT NOT NULL,
    seed INTEGER NOT NULL,
    engine_version TEXT NOT NULL,
    isolation TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    seconds REAL NOT NULL,
    graded_at TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    exercises TEXT NOT NULL DEFAULT 'all'
);
CREATE TABLE IF NOT EXISTS failures (
    submission TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    exercises TEXT NOT NULL,
    reason TEXT NOT NULL,
    failed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    grading_id INTEGER NOT NULL REFERENCES gradings(id),
    exercise TEXT NOT NULL,
    test TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    status TEXT NOT NULL
);
"""


class Gradebook:
    """``gradebook.sqlite`` in the output folder."""

    def __init__(self, folder: Path):
        self.connection = sqlite3.connect(folder / "gradebook.sqlite")
        self.connection.executescript(SCHEMA)
        columns = {row[1] for row in self.connection.execute("PRAGMA table_info(gradings)")}
        if "note" not in columns:  # a gradebook written before notes were kept
            self.connection.execute("ALTER TABLE gradings ADD COLUMN note TEXT NOT NULL DEFAULT ''")
        if "exercises" not in columns:  # one written when the digest carried them: its rows are graded again
            self.connection.execute("ALTER TABLE gradings ADD COLUMN exercises TEXT NOT NULL DEFAULT ''")

    def close(self) -> None:
        self.connection.close()

    def is_current(self, name: str, key: dict, note: str | None = None) -> bool:
        """Whether ``name``'s latest grading was done with exactly this key (and ``note``, if given),
        and none has failed since."""
        row = self.connection.execute(
            "SELECT digest, exercises, course_digest, seed, engine_version, note FROM gradings "
            "WHERE submission = ? ORDER BY id DESC LIMIT 1", (name,)).fetchone()
        wanted = (key["digest"], graded(key), key["course_digest"], key["seed"], key["engine_version"])
        failed = self.connection.execute("SELECT 1 FROM failures WHERE submission = ?", (name,)).fetchone()
        return row is not None and row[:5] == wanted and note in (None, row[5]) and failed is None

    def record(self, name: str, key: dict, grade: Grade, seconds: float, note: str = "") -> None:
        """Store one grading. ``key`` is what decides it (:meth:`is_current`'s) and what the row keeps
        beside: the sandbox it ran in (``isolation``) and the full marks of what it graded
        (``max_score``); its ``exercises`` are those graded, all if it names none. ``note`` (it goes
        to grades.csv) says why a submission was not graded, or what staging noticed in it (a
        copied notebook cell, skipped links)."""
        with self.connection:
            self.connection.execute("DELETE FROM failures WHERE submission = ?", (name,))
            cursor = self.connection.execute(
                "INSERT INTO gradings (submission, digest, exercises, course_digest, seed, engine_version, isolation,"
                " score, max_score, seconds, graded_at, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (name, key["digest"], graded(key), key["course_digest"], key["seed"], key["engine_version"],
                 key["isolation"],
                 grade.score, key["max_score"], round(seconds, 3),
                 _now(), note))
            self.connection.executemany(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?)",
                [(cursor.lastrowid, r.exercise, r.title, r.score, r.points, r.status) for r in grade.results])

    def record_failure(self, name: str, key: dict, reason: str) -> None:
        """Store that ``name``'s latest grading failed (the grader's fault, never the student's: no
        score), until a grading of it succeeds. grades.csv shows it as a row with no score."""
        with self.connection:
            self.connection.execute(
                "INSERT OR REPLACE INTO failures (submission, digest, exercises, reason, failed_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (name, key["digest"], graded(key), reason, _now()))

    def write_csv(self, course: Course, path: Path) -> None:
        """One row per submission (its latest grading): its score (bonus included), its score without
        the bonus and full marks (bonus not included) over the exercises graded
        (:meth:`~autograder.config.Course.score_without_bonus`), each exercise's score (empty where that
        grading left the exercise out: ``grade --exercise``), the submission's content hash, the
        exercises graded (``all``, or their modules) and a note. A submission whose latest grading
        failed has no score, and its note says why."""
        latest = self.connection.execute(
            "SELECT id, submission, digest, exercises, score, max_score, graded_at, note FROM gradings WHERE id IN "
            "(SELECT MAX(id) FROM gradings GROUP BY submission)").fetchall()
        failed = {name: row for name, *row in self.connection.execute(
            "SELECT submission, digest, exercises, failed_at, reason FROM failures")}
        rows = {row[1]: self._row(course, row) for row in latest}
        empty = [""] * (3 + len(course.exercises))
        rows |= {name: [name, *empty, digest, exercises, failed_at, f"grader failed: {reason}"]
                 for name, (digest, exercises, failed_at, reason) in failed.items()}
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["submission", "score", "score_without_bonus", "max_score",
                             *(e.module for e in course.exercises),
                             "digest", "exercises", "graded_at", "note"])
            writer.writerows(map(as_text, rows[name]) for name in sorted(rows))

    def _row(self, course: Course, grading: tuple) -> list[str]:
        """A grading's row of grades.csv, from its row of the gradings table (as :meth:`write_csv` selects it)."""
        grading_id, name, digest, exercises, score, max_score, graded_at, note = grading
        scores = dict(self.connection.execute(
            "SELECT exercise, SUM(score) FROM results WHERE grading_id = ? GROUP BY exercise", (grading_id,)))
        return [name, f"{score:g}", f"{course.score_without_bonus(scores):g}", f"{max_score:g}",
                *(f"{scores[e.module]:g}" if e.module in scores else "" for e in course.exercises),
                digest, exercises, graded_at, note]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def graded(key: dict) -> str:
    """The exercises a gradebook key names as the gradings table keeps them: their modules, or ``all``."""
    return " ".join(key.get("exercises") or ()) or "all"


def as_text(cell: object) -> str:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula."""
    cell = str(cell)
    return "'" + cell if cell.startswith(FORMULA_STARTS) else cell
