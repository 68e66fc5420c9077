"""``python -m autograder bench``: what grading costs, measured side by side.

It prints a worker's start and round trip with every sandbox layer against resource limits
only, one grading and a batch on one job against two: ratios and medians, never pass/fail.
``--json`` prints the figures :data:`KEYS` describes, ``--write-results PAGE`` writes them as
the results page (:func:`results_page`), and ``--profile`` splits a grading's time by where it
went (:func:`profile`). docs/development.md, "Benchmarks"; the figures: docs/results.md.
"""

from __future__ import annotations

import contextlib
import cProfile
import datetime
import os
import platform
import pstats
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

from rich.console import Console
from rich.table import Table

from ..batch.cluster import connect
from ..batch.cluster_tls import CA, CERTIFICATE, KEY, make_certificates, security
from ..batch.grader import ENGINE_HOME, grader_environment
from ..batch.pipeline import BatchOptions, grade_many
from ..config import Course
from ..engine.run import grade_staged
from ..engine.session import Session
from ..errors import GraderError
from ..intake.staging import stage
from ..isolation import Child, Layout, Worker, WorkerLimits, isolation, tree, with_layers

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
        named = _copies([submission], Path(folder), copies)
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


KEYS = {  # what each figure of ``--json`` measures, as the results page says it
    "first_grading_seconds": "one `grade` of the reference solutions with no recorded examples: the course's first "
                             "grading on a machine, which records them",
    "reference_seconds": "one `grade` of the reference solutions, examples replayed, a job per core",
    "reference_seconds_jobs1": "the same on one job",
    "stubs_seconds": "one `grade` of the untouched stubs, a job per core",
    "check_one_exercise_seconds": "`check --exercise` of the first exercise on the reference solutions, from the "
                                  "command to its table (a student's second check)",
    "requests_per_grading": "the frames one grading of the reference (examples replayed) sends its workers: its "
                            "round trips, a batch of requests side by side counting once",
    "overhead_ratio": "one grading of the reference on one job, over the CPU time of the workers it started "
                      "(the student code's own, their starts included) plus one worker's start",
    "nbgrader_class_per_minute": "students a minute of `nbgrader-autograde --jobs 2` of a class of copies of a "
                                 "student who submitted every exercise's notebook, nbgrader's start-up included",
    "nbgrader_autograde_class_per_minute": "the same class autograded by nbgrader's own `nbgrader autograde`, in the "
                                           "same run",
    "batch_per_minute_jobs2": "gradings a minute of a batch of copies of the reference on two jobs",
    "samples_batch_per_minute_jobs2": "the same, of copies of the course's samples (course.yaml's `samples`) taken in "
                                      "turn: a class whose work fails some properties, or every one",
    "dask_two_workers_ratio": "the rate of the reference's batch on a local Dask cluster of two one-thread workers, "
                              "over its rate on one such worker (each timed once its workers have graded one copy "
                              "each)",
}
def results_page(figures: dict[str, float | None], command: str, machine: str, day: str, commit: str) -> str:
    """The results page (docs/results.md) for ``figures`` of ``bench --json``."""
    rows = []
    for key, what in KEYS.items():
        value = figures.get(key)
        unit = " s" if "_seconds" in key else "×" if key.endswith("_ratio") else ""
        rows.append(f"| `{key}` | {'(not in this run)' if value is None else f'{value:g}{unit}'} | {what} |")
    return "\n".join([
        "# Results", "",
        "The engine's throughput, as `autograder bench --json` measures it: wall seconds of real",
        "gradings, as an instructor would see them, and a batch's rate. This page holds the latest",
        "figures with the machine and the day they were measured, and is regenerated by",
        "`autograder bench --write-results docs/results.md`; older figures are in the git history. On a",
        "shared machine a figure can move by half from one hour to the next: compare runs side by side.", "",
        textwrap.fill(f"Measured on {day} with `{command}`, engine at commit `{commit}`, on {machine}.", 96), "",
        "| key | value | what it measures |", "|---|---|---|", *rows, "",
        "`autograder bench` without `--json` prints what the sandbox costs on the machine it runs on: a",
        "worker's start and a call's round trip with every layer against resource limits only, one",
        "grading, and a batch on one job against two. `autograder bench --profile` splits a grading's",
        "time by where it goes (worker starts, round trips, the reference, hypothesis, pytest, the",
        "suites).", ""])


def write_results(page: Path, figures: dict[str, float | None], copies: int) -> None:
    """Write the results page for ``figures``, naming this machine, the day and the engine's commit."""
    found = isolation()
    who = "as root" if os.geteuid() == 0 else "as an unprivileged user"
    machine = (f"a {os.cpu_count()}-core {platform.machine()} machine (Linux {platform.release().split('-')[0]}), "
               f"{who}, with {found.describe()}")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ENGINE_HOME, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    page.write_text(results_page(figures, f"autograder bench --json --copies {copies}", machine,
                                 datetime.date.today().isoformat(), commit), encoding="utf-8")


def targets(course: Course, copies: int, out: Path) -> dict[str, float | None]:
    """The figures of ``--json``: wall seconds of real runs, as an instructor would see them.

    They start from no recorded examples (:mod:`autograder.engine.replay`, in a folder of their own):
    ``first_grading_seconds`` is the course's first grading on a machine, which records them;
    every later figure replays them, as every grading after the first does (:data:`KEYS` says
    what each figure is). A lone grading runs
    as ``grade`` runs it, with a job per core (its exercises spread over them:
    :class:`autograder.batch.parts.GradingInParts`); ``reference_seconds_jobs1`` is the same with ``--jobs 1``."""
    quiet = Console(file=open(os.devnull, "w"))
    figures: dict[str, float | None] = {}
    cores = os.cpu_count() or 1
    with fresh_records():
        reference, stubs = course.solutions_path(), course.path(course.package)
        for key, path, jobs in (("first_grading_seconds", reference, cores), ("reference_seconds", reference, cores),
                                ("reference_seconds_jobs1", reference, 1), ("stubs_seconds", stubs, cores)):
            began = time.perf_counter()
            grade_many(course, [("one", path)], out / key, quiet, BatchOptions(jobs=jobs, force=True))
            figures[key] = round(time.perf_counter() - began, 2)
        figures["check_one_exercise_seconds"] = _check_one(course, out / "check")
        figures["overhead_ratio"] = _apart(course, "overhead_ratio")
        figures["requests_per_grading"] = _apart(course, "requests_per_grading")
        figures.update(_nbgrader_class(course, out / "nbgrader", copies))
        with tempfile.TemporaryDirectory() as folder:
            named = _copies([course.solutions_path()], Path(folder), copies)
            figures["batch_per_minute_jobs2"] = _per_minute(course, named, out / "batch", quiet)
            figures["dask_two_workers_ratio"] = _dask_two_workers_ratio(course, named, out / "dask")
        if course.samples:
            with tempfile.TemporaryDirectory() as folder:
                samples = _copies([course.path(sample.path) for sample in course.samples], Path(folder), copies)
                figures["samples_batch_per_minute_jobs2"] = _per_minute(course, samples, out / "samples", quiet)
    return figures


def _per_minute(course: Course, named: list[tuple[str, Path]], out: Path, console: Console) -> float:
    """Gradings a minute of the batch ``named`` on two jobs."""
    began = time.perf_counter()
    grade_many(course, named, out, console, BatchOptions(jobs=2, force=True))
    return round(len(named) / (time.perf_counter() - began) * 60, 1)


@contextlib.contextmanager
def fresh_records() -> Iterator[None]:
    """Record examples in a new private folder (``AUTOGRADER_RECORDS``) for a while; grader
    processes started meanwhile inherit it."""
    with tempfile.TemporaryDirectory() as folder, mock.patch.dict(os.environ, AUTOGRADER_RECORDS=f"{folder}/records"):
        yield


def _copies(submissions: list[Path], folder: Path, copies: int) -> list[tuple[str, Path]]:
    """``copies`` copies of ``submissions`` taken in turn, each with its own digest."""
    named = []
    for index in range(copies):
        copy = folder / f"copy{index:02d}"
        shutil.copytree(submissions[index % len(submissions)], copy)
        (copy / f"bench_marker_{index}.py").write_text(f"# copy {index}\n")
        named.append((copy.name, copy))
    return named


def _dask_two_workers_ratio(course: Course, named: list[tuple[str, Path]], out: Path) -> float | None:
    """A batch's rate on a local Dask cluster of two one-thread workers over its rate on one
    (``grade --cluster`` as an instructor runs it, over TLS on loopback), each once its workers
    have started their grader processes and run the canary, as in a long batch; None without Dask."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return None
    quiet = Console(file=open(os.devnull, "w"))
    rates = {}
    for workers in (1, 2):
        with _local_cluster(workers, out / f"cluster{workers}") as (address, certificates):
            cluster = connect(address, course, unsafe=False, certificates=certificates)
            try:
                warm = [(f"warm{index}", path) for index, (_, path) in enumerate(named[:workers])]  # tasks of their own
                grade_many(course, warm, out / f"warm{workers}", quiet, BatchOptions(force=True), cluster)
                began = time.perf_counter()
                grade_many(course, named, out / f"workers{workers}", quiet, BatchOptions(force=True), cluster)
                rates[workers] = len(named) / (time.perf_counter() - began)
            finally:
                cluster.close()
    return round(rates[2] / rates[1], 2)


@contextlib.contextmanager
def _local_cluster(workers: int, logs: Path) -> Iterator[tuple[str, Path]]:
    """A Dask scheduler and ``workers`` one-thread workers on loopback, speaking TLS with
    certificates made for them (a ``tcp://`` scheduler is any local user's), their logs in
    ``logs`` (emptied first: a run before left its own): the scheduler's address and the
    certificates' folder, once every worker has joined. They are stopped on leaving, with the
    grader processes they started."""
    from distributed import Client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tls://127.0.0.1:{port}"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    certificates = logs / "certs"
    make_certificates(certificates)
    tls = ["--tls-ca-file", str(certificates / CA), "--tls-cert", str(certificates / CERTIFICATE),
           "--tls-key", str(certificates / KEY)]
    env = {**os.environ, "PYTHONPATH": str(ENGINE_HOME)}
    commands = [["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard",
                 "--protocol", "tls", *tls]] + [
        ["distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", *tls]] * workers
    processes = []
    try:
        for index, command in enumerate(commands):
            with open(logs / f"dask-{index}.log", "wb") as log:
                processes.append(subprocess.Popen([sys.executable, "-m", *command], env=env, stdout=log,
                                                  stderr=subprocess.STDOUT, start_new_session=True))
        with Client(address, security=security(certificates), timeout="60s") as client:
            client.wait_for_workers(workers, timeout=120)
        yield address, certificates
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)


def _check_one(course: Course, out: Path) -> float:
    """Seconds of ``check --exercise`` of the course's first exercise on the reference solutions,
    from the command to its table: a student's check after the first (which made hypothesis's
    tables in the folder it runs in)."""
    out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "autograder", "--course", str(course.file), "check",
               "--exercise", course.exercises[0].module, str(course.solutions_path())]
    env = {**os.environ, "PYTHONPATH": str(ENGINE_HOME)}
    seconds = []
    for _ in range(2):
        began = time.perf_counter()
        subprocess.run(command, cwd=out, env=env, check=True, capture_output=True)
        seconds.append(time.perf_counter() - began)
    return round(seconds[-1], 2)


def _apart(course: Course, figure: str) -> float:
    """``bench.<figure>(course)`` (:func:`overhead_ratio`, :func:`requests_per_grading`) in a process
    started as a grader process is (the same hash seed, so its requests are those recorded)."""
    env = grader_environment(tempfile.gettempdir())
    code = ("import sys; from autograder import config; from autograder.authoring import bench; "
            "print(getattr(bench, sys.argv[2])(config.load_course(sys.argv[1])))")
    run = subprocess.run([sys.executable, "-c", code, str(course.file), figure], env=env, check=True,
                         capture_output=True, text=True)
    return float(run.stdout.split()[-1])


def requests_per_grading(course: Course) -> int:
    """The frames one grading of the reference sends its workers (a batch of requests is one),
    graded here with its examples replayed: the round trips a grading waits on."""
    frames = []

    def counting(kind: type[Worker] | type[Child]) -> Any:
        sending = kind.request_many

        def counted(worker: Any, payloads: list[bytes], timeouts: list[float], *rest: Any) -> Any:
            frames.append(len(timeouts))
            return sending(worker, payloads, timeouts, *rest)
        return mock.patch.object(kind, "request_many", counted)

    staged = stage(course, course.solutions_path())
    try:
        with counting(Worker), counting(Child):
            grade_staged(course, staged.root, staged.notes)
    finally:
        staged.remove()
    return len(frames)


def overhead_ratio(course: Course) -> float:
    """How far one grading of the reference is from its floor: its wall time (graded here, on one
    job, examples replayed) over the CPU time of every worker it started (the student code's own,
    and the workers' starts and imports, which makes the ratio the lower) plus one worker's
    start. Needs recorded examples: :func:`targets` calls it after gradings that recorded them."""
    spent: list[float] = []
    closing = Worker.close

    def close(worker: Worker) -> None:  # a zygote's children are collected by it: in its own figure
        if not worker.closed and type(worker) is Worker:
            spent.append(sum(_cpu_seconds(pid) for pid in tree(worker.process.pid)))
        closing(worker)

    start, _trip = round_trip(calls=1)
    staged = stage(course, course.solutions_path())
    try:
        with mock.patch.object(Worker, "close", close):
            began = time.perf_counter()
            grade_staged(course, staged.root, staged.notes)
            wall = time.perf_counter() - began
    finally:
        staged.remove()
    return round(wall / (sum(spent) + start), 2)


def _cpu_seconds(pid: int) -> float:
    """The CPU time of a process and of its children that it collected (``/proc/PID/stat``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return sum(int(tick) for tick in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _nbgrader_class(course: Course, out: Path, students: int) -> dict[str, float | None]:
    """Students a minute of a class of ``students`` who each submitted every exercise's source
    notebook, autograded by ``nbgrader autograde`` and, in a copy of the course folder, by
    ``nbgrader-autograde`` on two jobs; after another student's autograde (the course's first
    grading, which records the examples)."""
    try:
        import nbformat
    except ImportError:
        return dict.fromkeys(["nbgrader_class_per_minute", "nbgrader_autograde_class_per_minute"])
    shutil.rmtree(out, ignore_errors=True)
    theirs, ours = out / "nbgrader", out / "parallel"
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])}
    env.pop("PYTHONPATH", None)

    def autograder(*args: str) -> None:  # the channel's commands, as an instructor runs them
        run = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course.file), *args], env=env,
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise GraderError(f"bench: autograder {args[0]} failed (exit {run.returncode}): {run.stdout[-500:]}")

    autograder("nbgrader", "--out", str(theirs))

    def nbgrader(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=theirs, env=env, check=True, capture_output=True)

    nbgrader("generate_assignment", "*")
    for student in ["first", *(f"student{number:03d}" for number in range(students))]:
        for exercise in course.exercises:
            notebook = nbformat.read(theirs / "source" / exercise.module / f"{exercise.module}.ipynb", as_version=4)
            folder = theirs / "submitted" / student / exercise.module
            shutil.copytree(theirs / "release" / exercise.module, folder)
            nbformat.write(notebook, folder / f"{exercise.module}.ipynb")
    nbgrader("autograde", "*", "--student=first")
    shutil.copytree(theirs, ours, symlinks=True)
    began = time.perf_counter()
    nbgrader("autograde", "*")
    own = students / (time.perf_counter() - began) * 60
    began = time.perf_counter()
    autograder("nbgrader-autograde", str(ours), "--jobs", "2")  # exits 2 if one was not autograded
    parallel = students / (time.perf_counter() - began) * 60
    return {"nbgrader_class_per_minute": round(parallel, 1), "nbgrader_autograde_class_per_minute": round(own, 1)}


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
