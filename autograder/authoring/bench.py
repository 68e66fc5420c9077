"""``python -m autograder bench``: what grading costs, measured side by side.

Reports the worker's start-up time and round-trip overhead with every sandbox layer this
machine has and with resource limits only, side by side; the time to grade one submission (by
default the course's first sample); and batch throughput on copies of it with one job against
two. Figures are ratios and medians of a few runs, never pass/fail.

``--json`` prints one JSON object instead: ``reference_seconds`` and ``stubs_seconds`` (one
``grade`` of the course's solutions and of its package's stubs, a job per core as ``grade``
runs by default), ``nbgrader_student_seconds``
(one nbgrader autograde of a student's notebooks, all exercises, nbgrader's start-up included;
null without nbgrader) and ``batch_per_minute_jobs2``. ``--profile`` grades the solutions and
the stubs in this process under cProfile and splits the time by where it went
(:func:`profile`).
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from rich.console import Console
from rich.table import Table

from ..batch.batch import BatchOptions, grade_many
from ..batch.staging import stage
from ..config import Course
from ..delivery.nbgrader_course import build_nbgrader_course
from ..engine.run import grade_staged
from ..engine.session import Session
from ..isolation import Layout, WorkerLimits, isolation, with_layers

ECHO = "def echo(value):\n    return value\n"


def round_trip(calls: int = 2000) -> tuple[float, float]:
    """Median worker start (s) and mean round-trip (s) of an echo call carrying a small list."""
    with tempfile.TemporaryDirectory() as folder:
        package = Path(folder) / "bench"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "echo.py").write_text(ECHO)
        for path in (Path(folder), package, *package.iterdir()):
            path.chmod(0o755 if path.is_dir() else 0o644)
        starts, trips = [], []
        for _ in range(5):
            session = Session(Layout(Path(folder)), WorkerLimits(), budget_seconds=600)
            began = time.perf_counter()
            echo = session.module("bench.echo").echo
            starts.append(time.perf_counter() - began)
            value = list(range(20))
            began = time.perf_counter()
            for _ in range(calls):
                echo(value)
            trips.append((time.perf_counter() - began) / calls)
            session.close()
    return statistics.median(starts), statistics.median(trips)


def run(course: Course, submission: Path, copies: int, out: Path, console: Console) -> None:
    with with_layers(""):
        bare_start, bare_trip = round_trip()
    start, trip = round_trip()
    quiet = Console(file=open("/dev/null", "w"))
    began = time.perf_counter()
    grade_many(course, [("one", submission)], out / "one", quiet, BatchOptions(jobs=1, force=True))
    one = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as folder:
        named = _copies(submission, Path(folder), copies)
        timings = {}
        for jobs in (1, 2):
            began = time.perf_counter()
            grade_many(course, named, out / f"jobs{jobs}", quiet, BatchOptions(jobs=jobs, force=True))
            timings[jobs] = time.perf_counter() - began
    table = Table(title=f"autograder bench ({isolation().describe()})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("worker start + import (median)",
                  f"{start * 1000:.1f} ms ({(start - bare_start) * 1000:+.1f} ms over limits only)")
    table.add_row("round trip, echo of a 20-int list (mean)",
                  f"{trip * 1e6:.0f} µs ({(trip - bare_trip) * 1e6:+.0f} µs over limits only)")
    table.add_row(f"grade {submission.name} (one submission)", f"{one:.1f} s")
    for jobs, seconds in timings.items():
        table.add_row(f"{copies} submissions, --jobs {jobs}", f"{seconds:.1f} s ({copies / seconds * 60:.1f}/min)")
    table.add_row("speed-up, 2 jobs over 1", f"{timings[1] / timings[2]:.2f}×")
    console.print(table)


def targets(course: Course, copies: int, out: Path) -> dict[str, float | None]:
    """The figures of ``--json``: wall seconds of real runs, as an instructor would see them.

    They start from no recorded examples (:mod:`autograder.engine.replay`, in a folder of their own):
    ``reference_seconds_first`` is the course's first grading on a machine, which records them;
    every later figure replays them, as every grading after the first does. A lone grading runs
    as ``grade`` runs it, with a job per core (its exercises spread over them:
    :class:`autograder.batch.parts.GradingInParts`); ``reference_seconds_jobs1`` is the same with ``--jobs 1``."""
    quiet = Console(file=open(os.devnull, "w"))
    figures: dict[str, float | None] = {}
    cores = os.cpu_count() or 1
    with fresh_records():
        reference, stubs = course.solutions_path(), course.path(course.package)
        for key, path, jobs in (("reference_seconds_first", reference, cores), ("reference_seconds", reference, cores),
                                ("reference_seconds_jobs1", reference, 1), ("stubs_seconds", stubs, cores)):
            began = time.perf_counter()
            grade_many(course, [("one", path)], out / key, quiet, BatchOptions(jobs=jobs, force=True))
            figures[key] = round(time.perf_counter() - began, 2)
        figures["nbgrader_student_seconds"] = _nbgrader_student(course, out / "nbgrader")
        with tempfile.TemporaryDirectory() as folder:
            named = _copies(course.solutions_path(), Path(folder), copies)
            began = time.perf_counter()
            grade_many(course, named, out / "batch", quiet, BatchOptions(jobs=2, force=True))
            figures["batch_per_minute_jobs2"] = round(copies / (time.perf_counter() - began) * 60, 1)
    return figures


@contextlib.contextmanager
def fresh_records() -> Iterator[None]:
    """Record examples in a new private folder (``AUTOGRADER_RECORDS``) for a while; grader
    processes started meanwhile inherit it."""
    with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, AUTOGRADER_RECORDS=f"{folder}/records"):
        yield


def _copies(submission: Path, folder: Path, copies: int) -> list[tuple[str, Path]]:
    """``copies`` copies of a submission, each with its own digest."""
    named = []
    for index in range(copies):
        copy = folder / f"copy{index:02d}"
        shutil.copytree(submission, copy)
        (copy / f"bench_marker_{index}.py").write_text(f"# copy {index}\n")
        named.append((copy.name, copy))
    return named


def _nbgrader_student(course: Course, out: Path) -> float | None:
    """Seconds of ``nbgrader autograde`` of one student who submitted every exercise's source
    notebook, after another student's (the course's first grading, which records the examples)."""
    try:
        import nbformat
    except ImportError:
        return None
    shutil.rmtree(out, ignore_errors=True)
    build_nbgrader_course(course, out)
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])}
    env.pop("PYTHONPATH", None)

    def nbgrader(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=out, env=env, check=True, capture_output=True)

    nbgrader("generate_assignment", "*")
    for student in ("first", "student"):  # the first student's grading records the examples
        for exercise in course.exercises:
            notebook = nbformat.read(out / "source" / exercise.module / f"{exercise.module}.ipynb", as_version=4)
            folder = out / "submitted" / student / exercise.module
            shutil.copytree(out / "release" / exercise.module, folder)
            nbformat.write(notebook, folder / f"{exercise.module}.ipynb")
    nbgrader("autograde", "*", "--student=first")
    began = time.perf_counter()
    nbgrader("autograde", "*", "--student=student")
    return round(time.perf_counter() - began, 2)


CATEGORIES = (  # where a function's own time goes, by the file it is in (the first match)
    ("worker start", ("autograder/isolation/process.py", "autograder/isolation/zygote.py",
                      "autograder/isolation/standby.py", "autograder/isolation/cgroup.py",
                      "autograder/isolation/reaping.py", "autograder/isolation/inside/__init__.py",
                      "autograder/isolation/channel.py:_hello", "fork_exec")),
    ("round trips, waiting on the worker (student code included)",
     ("autograder/isolation/channel.py", "autograder/engine/session.py", "autograder/isolation/inside/codec.py")),
    ("reference computation", ("/solutions/",)),
    ("hypothesis: generating and shrinking", ("/hypothesis/",)),
    ("pytest and the grading plugin", ("/_pytest/", "/pluggy/", "autograder/engine/plugin.py",
                                       "autograder/engine/replay.py", "autograder/suite.py")),
    ("the suites' own code", ("/suites/", "/tokcourse/")),
)


def profile(course: Course, console: Console) -> dict[str, dict[str, float]]:
    """Grade the solutions and the stubs here under cProfile; seconds per category of :data:`CATEGORIES`.

    A function's own time goes to the category its file matches; a built-in's (``poll``,
    ``write``, ``open``) and the standard library's to that of the nearest caller outside them
    that spent the most in it, so that waiting on a worker counts as a round trip. The profiler
    slows Python code down, so the shares matter more than the seconds. The reference is graded
    twice, from no recorded examples (:mod:`autograder.engine.replay`): first recording, then replaying."""
    breakdown = {}
    with fresh_records():
        for name, path in (("reference, first grading", course.solutions_path()),
                           ("reference, replayed", course.solutions_path()), ("stubs", course.path(course.package))):
            breakdown[name] = _profiled(course, path)
    table = Table(title="where grading's time goes (cProfile; seconds)")
    table.add_column("category")
    for name in breakdown:
        table.add_column(name, justify="right")
    for category in next(iter(breakdown.values())):
        table.add_row(category, *(f"{b[category]:.1f}" for b in breakdown.values()))
    console.print(table)
    return breakdown


def _profiled(course: Course, path: Path) -> dict[str, float]:
    """Seconds per category of grading ``path`` here under cProfile."""
    staged = stage(course, path)
    profiler = cProfile.Profile()
    try:
        profiler.enable()
        grade_staged(course, staged.root, staged.notes)
        profiler.disable()
    finally:
        staged.remove()
    return _categorise(pstats.Stats(profiler))


def _categorise(stats) -> dict[str, float]:
    totals = dict.fromkeys([name for name, _ in CATEGORIES] + ["other"], 0.0)
    entries = stats.stats  # {(file, line, function): (calls, primitive calls, own time, cumulative, callers)}

    def owner(key: tuple[str, int, str]) -> tuple[str, int, str]:
        """The function a built-in's or the standard library's time is charged to: up the callers
        that spent the most in it, to the first that is neither."""
        for _ in range(30):
            callers = entries.get(key, (0, 0, 0.0, 0.0, {}))[4]
            if not (key[0] == "~" or key[0].startswith((STDLIB, "<frozen"))) or not callers or "fork_exec" in key[2]:
                return key
            key = max(callers, key=lambda caller: callers[caller][3])
        return key

    def category(key: tuple[str, int, str]) -> str:
        where = f"{key[0]}:{key[2]}" if key[0] != "~" else key[2]
        return next((name for name, marks in CATEGORIES if any(mark in where for mark in marks)), "other")

    for key, (_calls, _primitive, own, _cumulative, _callers) in entries.items():
        totals[category(owner(key))] += own
    return {name: round(seconds, 2) for name, seconds in totals.items()}


STDLIB = sysconfig.get_paths()["stdlib"]
