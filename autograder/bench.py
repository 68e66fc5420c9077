"""``python -m autograder bench``: what the sandbox costs, measured side by side.

Reports the worker's start-up time and round-trip overhead with every sandbox layer this
machine has and with resource limits only, side by side; the time to grade one submission (by
default the course's first sample); and batch throughput on copies of it with one job against
two. Figures are ratios and medians of a few runs, never pass/fail.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .config import Course
from .grading import grade_many
from .proxy import Session
from .sandbox import Layout, Limits, isolation, with_layers

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
            session = Session(Layout(Path(folder)), Limits(), budget_seconds=600)
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
    grade_many(course, [("one", submission)], out / "one", 1, True, quiet)
    one = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as folder:
        named = []
        for index in range(copies):
            copy = Path(folder) / f"copy{index:02d}"
            shutil.copytree(submission, copy)
            (copy / f"bench_marker_{index}.py").write_text(f"# copy {index}\n")  # distinct digests
            named.append((copy.name, copy))
        timings = {}
        for jobs in (1, 2):
            began = time.perf_counter()
            grade_many(course, named, out / f"jobs{jobs}", jobs, True, quiet)
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
