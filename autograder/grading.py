"""Grading one submission, and many in parallel with a progress bar and a gradebook.

Submissions are graded in grader processes (:class:`GraderProcess`), never in the process
that stages them and keeps the gradebook; a grader process runs the suites, which start the
sandboxed workers. The batch keeps going whatever happens to one submission.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import __version__
from .config import Course
from .errors import GraderError
from .gradebook import BATCH_FILES, Gradebook
from .i18n import in_course_language
from .report import read_results, write_reports
from .results import Grade, PropertyResult
from .sandbox import isolation, isolation_note
from .submission import Staged, SubmissionError, notebook_spans, stage

ENGINE_HOME = Path(__file__).resolve().parent.parent  # where `python -m autograder` is found


@in_course_language
def grade_staged(course: Course, staged: Staged, public_only: bool = False,
                 exercises: list[str] | None = None, began: float | None = None,
                 public_results: list[PropertyResult] | None = None) -> Grade:
    """Run the suites (of ``exercises``, default all) on a staged submission here and return its
    grade; the submission's time budget counts from ``began`` (``time.monotonic()``, default now).
    With ``public_results`` (of the public properties, graded before) only the hidden ones run."""
    from .plugin import run_suites  # pytest and hypothesis: only a grader process needs them, not a batch's

    results, seconds = run_suites(course, staged.root, public_only, exercises, began=began,
                                  public_results=public_results)
    return Grade(tuple(name_cells(course, staged.root, results)), (isolation_note(), *staged.notes), seconds)


def name_cells(course: Course, root: Path, results: Iterable[PropertyResult]) -> list[PropertyResult]:
    """``results`` whose feedback names a notebook's cells where the module came from one."""
    spans = notebook_spans(root)
    return [replace(r, output=spans[r.exercise].relabel(r.output, f"{course.package}/{r.exercise}.py",
                                                        f"{r.exercise}.ipynb"))
            if r.exercise in spans else r for r in results]


def course_digest(course: Course) -> str:
    """A hash of everything that decides a grade besides the submission: the course file, the
    suites and the course's own modules they import, the solutions, the support modules, the data
    files and the read-only paths (each file with its path). A file this process cannot read
    is a :class:`GraderError` naming it: a batch stops there, before it grades anyone."""
    files = [course.file, *suite_sources(course)]
    files += sorted(course.solutions_path().rglob("*.py")) if course.solutions is not None else []
    files += [course.path(m) for m in course.sandbox.support_modules]
    for named in [*course.data.values(), *course.sandbox.readonly_paths]:
        path = course.path(named)
        files += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest, root = hashlib.sha256(), course.root.resolve()
    for file in files:
        name = file.relative_to(root) if file.is_relative_to(root) else file
        digest.update(f"\0{name}\0".encode("utf-8", "surrogateescape"))
        try:
            digest.update(file.read_bytes() if file.is_file() else b"\0missing")
        except OSError as error:
            raise GraderError(f"cannot read the course file {file} ({error.strerror}): the grader's user must "
                              "be able to read every file of the course") from None
    return digest.hexdigest()


def suite_sources(course: Course) -> list[Path]:
    """The suites and, transitively, every module of the course's own they import (found under
    the course root by reading their imports, nothing run): a suite's strategies decide its examples."""
    root = course.root.resolve()
    todo = [course.path(e.suite) for e in course.exercises]
    found: list[Path] = []
    while todo:
        file = todo.pop(0)
        if file in found or not file.is_file():
            continue
        found.append(file)
        got = file.stat()
        todo += _imported_files(file, root, (got.st_dev, got.st_ino, got.st_size, got.st_mtime_ns, got.st_ctime_ns))
    return found


@functools.lru_cache(maxsize=1024)
def _imported_files(file: Path, root: Path, version: tuple[int, ...]) -> tuple[Path, ...]:
    """The files under ``root`` that ``file``'s imports may name, read once per ``version`` of
    it (its inode, size and times: a change to the file changes its ctime), since reading the
    suites anew took 40 ms of every grading of a batch's grader process."""
    try:
        tree = ast.parse(file.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return ()  # pytest reports a broken suite, course_digest one it cannot read
    here = file.parent.relative_to(root).parts if file.is_relative_to(root) else ()
    files: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):  # a relative import starts from the file's package
            package = here[:len(here) - node.level + 1] if node.level else ()
            base = ".".join([*package, *filter(None, [node.module])])
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for parts in (name.strip(".").split(".") for name in names if name.strip(".")):
            for end in range(1, len(parts) + 1):
                stem = root.joinpath(*parts[:end])
                files += [stem.with_suffix(".py"), stem / "__init__.py"]
    return tuple(files)


def grade_many(course: Course, submissions: list[tuple[str, Path]], out: Path, jobs: int, force: bool,
               console: Console, exercises: list[str] | None = None,
               grader: Callable[..., tuple[Grade | None, float, str]] | None = None, where: str | None = None,
               ) -> list[tuple[str, Grade | None, str]]:
    """Grade every ``(name, path)`` into ``out/<name>/`` (``exercises``, default all); return
    ``(name, grade, note)`` rows. Names are made safe first (:func:`safe_names`).

    ``grader`` grades one staged submission into its report folder, ``jobs`` at once: by default
    a :class:`GraderPool` here; :meth:`autograder.cluster.Cluster.grade` sends it to a Dask cluster,
    whose sandboxes ``where`` names for the gradebook (by default, this machine's)."""
    graders, local = GraderPool(), grader is None
    grader = grader or graders.grade
    where = where or isolation().describe()
    out = out.resolve()  # the graders run in scratch folders of their own
    submissions = safe_names(submissions)
    out.mkdir(parents=True, exist_ok=True)
    book = Gradebook(out)
    rows: dict[str, tuple[str, Grade | None, str]] = {}
    todo: list[tuple[str, Staged, dict, Path]] = []
    common = {"course_digest": course_digest(course), "seed": course.hypothesis.seed, "engine_version": __version__}
    chosen = "".join(f" {module}" for module in exercises or ())
    full_marks = course.full_marks(exercises)
    for name, path in submissions:
        folder = report_folder(out, name)
        try:
            staged = stage(course, path)
        except SubmissionError as error:
            note = f"unreadable: {error}"  # the same unreadable file on a rerun adds no gradebook row
            key = {**common, "digest": "unreadable" + chosen}
            if force or not book.is_current(name, key, note) or not (folder / "results.json").is_file():
                grade = Grade.unreadable(course, f"The submission could not be read: {error}", exercises)
                write_reports(course, folder, name, grade)
                book.record(name, key, where, grade, full_marks, 0.0, note=note)
            rows[name] = (name, read_results(folder), note)
            continue
        key = {**common, "digest": staged.digest + chosen}
        if not force and book.is_current(name, key) and (folder / "results.json").is_file():
            rows[name] = (name, read_results(folder), "unchanged, skipped")
            staged.remove()
            continue
        todo.append((name, staged, key, folder))
    split = local and len(todo) < jobs  # threads would idle: they share the submissions
    columns = (TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with graders, Progress(*columns, console=console, transient=False) as progress, \
            ThreadPoolExecutor(max(1, jobs)) as threads:
        # every submission counts: those unreadable or unchanged are done before grading starts
        bar = progress.add_task("", total=len(submissions), completed=len(submissions) - len(todo))
        running: dict[Future, tuple[dict, Parts]] = {}
        for name, staged, key, folder in todo:
            parts = Parts(course, name, staged, folder, exercises, split)
            running |= {threads.submit(parts.grade, index, grader): (key, parts) for index in parts.indices}
        for future in as_completed(running):
            future.result()
            key, parts = running[future]
            if not parts.last_in():
                continue
            name, staged, (graded, seconds, problem) = parts.name, parts.staged, parts.joined()
            staged.remove()
            if graded is None:
                rows[name] = (name, None, problem)
            else:  # what staging noticed (a copied notebook cell, skipped links) is the instructor's to see too
                book.record(name, key, where, graded, full_marks, seconds, note="; ".join(staged.notes))
                rows[name] = (name, graded, f"{seconds:.1f} s")
            progress.update(bar, advance=1, description=name)
    book.write_csv(course, out / "grades.csv")
    book.close()
    return [rows[name] for name in sorted(rows)]


class Parts:
    """One submission's grading into its report folder: whole, or (``split``) in parts of one
    exercise each, graded at once on whichever graders are free and then put together.

    A split grading keeps what a whole one keeps: every public property is graded before any
    hidden one (docs/security.md). Its parts are first the public properties of each exercise,
    then, once all of those are graded, the hidden properties of each exercise, a part each,
    which is given its exercise's public results and answers all of them, in the suite's order.

    A part is graded as that exercise alone is (``grade --exercise``), into a scratch folder,
    with the submission's time budget counted from the moment the first part began (so it
    still caps the whole grading's wall time). The hidden parts' results in the course's order, and
    their notes (the same in each), make the grade the whole would give (:meth:`Grade.joined`):
    a part's texts were capped with at least the room the whole leaves them, so capping the
    joined grade cuts them where the whole would (``tests/test_results.py``). A part that
    fails fails the submission, with that part's log.
    """

    def __init__(self, course: Course, name: str, staged: Staged, folder: Path, exercises: list[str] | None,
                 split: bool):
        self.course, self.name, self.staged, self.folder = course, name, staged, folder
        modules = [e.module for e in course.exercises if exercises is None or e.module in exercises]
        whole = not split or len(modules) < 2 or len(modules) != len(set(exercises or modules))  # or a name unknown
        apart: list[list[str] | None] = [[module] for module in modules]
        self.exercises = [exercises] if whole else apart * 2
        self.indices = range(len(self.exercises))
        self.public = 0 if whole else len(modules)  # parts 0 .. public - 1 grade the public properties
        self.answers: dict[int, tuple[Grade | None, float, str]] = {}
        self.scratch = tempfile.TemporaryDirectory(prefix="autograder-parts-") if len(self.exercises) > 1 else None
        self.began: float | None = None
        self.lock = threading.Lock()
        self.left = len(self.exercises)
        self.public_left = self.public
        self.public_graded = threading.Event()

    def _folder(self, index: int) -> Path:
        return self.folder if self.scratch is None else Path(self.scratch.name) / str(index)

    def grade(self, index: int, grader: Callable[..., tuple[Grade | None, float, str]]) -> None:
        """Grade part ``index`` with ``grader`` (a grading thread's). A hidden part waits for
        every public part: the batch submits them first, and its threads take parts in that
        order, so those are all being graded by then."""
        timing = {}
        if self.scratch is not None:  # the parts share one budget, from the first part's start
            with self.lock:
                self.began = self.began or time.monotonic()
            timing = {"began": self.began}
        if not self.public:
            self.answers[index] = grader(self.course, self.name, self.staged, self._folder(index),
                                         self.exercises[index], **timing)
        elif index < self.public:
            try:
                self.answers[index] = grader(self.course, self.name, self.staged, self._folder(index),
                                             self.exercises[index], public_only=True, **timing)
            finally:
                with self.lock:
                    self.public_left -= 1
                    if self.public_left == 0:
                        self.public_graded.set()
        else:
            self.public_graded.wait()
            failed = next((self.answers[i] for i in range(self.public) if self.answers[i][0] is None), None)
            # a failed public part fails the submission with its log: nothing more to grade
            self.answers[index] = failed or grader(self.course, self.name, self.staged, self._folder(index),
                                                   self.exercises[index], after=self._folder(index - self.public),
                                                   **timing)

    def last_in(self) -> bool:
        """Whether the part just graded was the last (the batch's thread asks once per part)."""
        self.left -= 1
        return self.left == 0

    def joined(self) -> tuple[Grade | None, float, str]:
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
            write_reports(self.course, self.folder, self.name, Grade.joined(grades, seconds))
            return read_results(self.folder), seconds, ""
        finally:
            self.scratch.cleanup()


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


def hypothesis_storage(fallback: str) -> str:
    """Where a grader process's hypothesis keeps its files: the user's cache, shared by all of
    this user's grader processes, or ``fallback`` (the process's scratch folder) if that cannot
    be made. What it keeps there is the table of unicode categories it builds on first use
    (about 0.9 s of every fresh grader process's start); its example database is off, so
    nothing there depends on a submission."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autograder" / "hypothesis"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return fallback
    return str(cache)


def grader_seconds(course: Course, exercises: list[str] | None = None) -> float:
    """How long one grader process may take: its exercises' budgets, capped by the submission's, and a minute
    for starting up and writing the reports."""
    budget = course.limits.exercise_seconds * len(exercises or course.exercises)
    return min(budget, course.limits.submission_seconds or budget) + 60


class GraderPool:
    """A grader process per grading thread of a batch, which grades that thread's submissions one
    after another (:class:`GraderProcess`): a batch of 300 on two jobs starts two grader
    processes, not 300, and each submission's grading is the one a fresh process gives."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.graders: list[GraderProcess] = []

    def grade(self, course: Course, name: str, staged: Staged, folder: Path, exercises: list[str] | None = None,
              began: float | None = None, public_only: bool = False,
              after: Path | None = None) -> tuple[Grade | None, float, str]:
        grader = getattr(self.local, "grader", None)
        if grader is None:
            grader = self.local.grader = GraderProcess(course)
            self.graders.append(grader)  # list.append is atomic: threads may add theirs at once
        return grader.grade(name, staged, folder, exercises, began, public_only, after)

    def __enter__(self) -> GraderPool:
        return self

    def __exit__(self, *exc: object) -> None:
        for grader in self.graders:
            grader.close()


class GraderProcess:
    """A grader process (``python -m autograder grade-serve``) that grades staged submissions
    one after another, each into its report folder, until it is closed.

    Student code never runs in it, and a grading leaves nothing that decides the next one: each
    runs pytest afresh with its own plugin, workers and hypothesis engine. So a batch keeps one
    per grading thread (:class:`GraderPool`) and nbgrader one per run, which saves a grader's
    start-up (Python, pytest, hypothesis, the suites, the sandbox's check) for every grading but
    the first, and so does a Dask worker (:mod:`autograder.cluster`).

    A grading that fails, overruns :func:`grader_seconds` or kills the process ends it: its
    output goes to that grading's ``grader.log``, and the next grading (as after a process that
    died between gradings) starts a fresh process.
    """

    def __init__(self, course: Course):
        self.course = course
        self.process: subprocess.Popen | None = None
        self.scratch: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> GraderProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def grade(self, name: str, staged: Staged, folder: Path, exercises: list[str] | None = None,
              began: float | None = None, public_only: bool = False,
              after: Path | None = None) -> tuple[Grade | None, float, str]:
        """Grade ``staged`` (``exercises``, default all) into ``folder``; ``began`` is when the
        submission's grading began (``time.monotonic()``, this machine's clock) if before now:
        its time budget counts from then. ``public_only`` grades the public properties only;
        ``after`` (the folder of a grading of those) the hidden ones, answering all of them."""
        folder.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        request = {"staged": str(staged.root), "out": str(folder), "name": name, "notes": staged.notes,
                   "exercises": list(exercises or ()), "began": began, "public_only": public_only,
                   "after": None if after is None else str(after)}
        if self.process is not None and self.process.poll() is not None:  # it died between gradings
            self.close()
        try:
            process = self.process or self._start()
            assert process.stdin is not None
            process.stdin.write((json.dumps(request) + "\n").encode())
            process.stdin.flush()
            answer = self._answer(time.monotonic() + grader_seconds(self.course, exercises))
        except (OSError, TimeoutError) as error:
            answer = "timeout" if isinstance(error, TimeoutError) else "no answer"
        seconds = time.monotonic() - started
        if answer == "graded" and (folder / "results.json").is_file():
            return read_results(folder), seconds, ""
        self._keep_log(folder / "grader.log")
        self.close()
        return None, seconds, f"grader failed ({answer}), see {name}/grader.log"

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

    def _start(self) -> subprocess.Popen:
        self.scratch = tempfile.TemporaryDirectory(prefix="autograder-grader-")
        scratch = self.scratch.name
        env = {**os.environ, "PYTHONHASHSEED": "0", "HYPOTHESIS_STORAGE_DIRECTORY": hypothesis_storage(scratch),
               "PYTHONPATH": os.pathsep.join([str(ENGINE_HOME), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        with open(Path(scratch) / "grader.log", "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "autograder", "--course", str(self.course.file), "grade-serve"],
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

    def _keep_log(self, log: Path) -> None:
        if self.scratch is not None:
            output = (Path(self.scratch.name) / "grader.log").read_bytes()
            log.write_bytes(output[-200_000:])
