"""``python -m autograder mutate``: does each exercise's suite catch small changes to its reference?

Each mutant that cosmic-ray's default operators make of an exercise's solution module is graded
like a submission, with that exercise's suite alone, by the batch's grader processes
(:class:`~autograder.batch.grader.GraderPool`, one per job), stopping at the first failing
property. A mutant that keeps full points *survived*, unless the course lists it as
equivalent (``mutation.equivalents``, :func:`load_equivalents`). How to read the report, and why
cosmic-ray: docs/authors.md, "Holding the suites to account".
"""

from __future__ import annotations

import difflib
import functools
import random
import shutil
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..batch.grader import GraderPool, Part, grader_seconds
from ..config import Course, CourseConfigError
from ..errors import GraderError
from ..intake.staging import Staged, stage

TIME_FACTOR = 3.0  # a mutant may take this many times the reference's time on the suite ...
TIME_SLACK = 10.0  # ... plus this many seconds, before it counts as looping
OUTCOMES = ("killed", "survived", "equivalent", "timed out")


# --------------------------------------------------------------------------- the mutants


@dataclass(frozen=True)
class Place:
    """Where one of cosmic-ray's operators can change an exercise's solution module: a mutant
    before it is made (:func:`made`), which is all a sample needs."""

    module: str
    operator: str  # cosmic-ray's name, such as "core/NumberReplacer"
    occurrence: int  # cosmic-ray's index of the change among the operator's places in the module
    line_number: int
    line: str  # the line of the reference it changes, stripped


@dataclass(frozen=True)
class Mutant:
    """One change of one exercise's solution module."""

    module: str
    operator: str  # cosmic-ray's name, such as "core/NumberReplacer"
    occurrence: int  # cosmic-ray's index of the change among the operator's places in the module
    line_number: int
    line: str  # the changed line of the reference, stripped
    mutated: str  # what the mutant has there, stripped (lines joined by " / "; "" when removed)
    source: str = field(repr=False)
    diff: str = field(repr=False)

    @property
    def label(self) -> str:
        return f"{self.module}:{self.line_number} {self.operator} #{self.occurrence}"


@functools.cache
def _operators() -> dict[str, Any]:
    """cosmic-ray's default operators, by name: the core ones that take no arguments."""
    try:
        import cosmic_ray.plugins as plugins
    except ImportError:
        raise GraderError("mutate needs cosmic-ray (pip install cosmic-ray==8.7.0; `make setup` installs it)") from None
    names = sorted(name for name in plugins.operator_names() if not plugins.get_operator(name).arguments())
    return {name: plugins.get_operator(name)() for name in names}


Drawn = TypeVar("Drawn", Place, Mutant)  # what sample draws from


def mutants_of(course: Course, module: str) -> list[Mutant]:
    """Every mutant cosmic-ray's default operators make of ``module``'s solution, in a stable order."""
    return [mutant for place in places_of(course, module) if (mutant := made(course, place)) is not None]


def places_of(course: Course, module: str) -> list[Place]:
    """Every place where cosmic-ray's default operators change ``module``'s solution, in the order
    of :func:`mutants_of`: the module is parsed once, not once a mutant."""
    from cosmic_ray.ast import ast_nodes, get_ast

    source = _solution(course, module)
    lines = source.splitlines()
    nodes = list(ast_nodes(get_ast(source)))  # only read here: an operator changes a tree only when it mutates
    places = []
    for name, operator in _operators().items():
        positions = [start for node in nodes for start, _ in operator.mutation_positions(node)]
        places += [Place(module, name, occurrence, line_number, lines[line_number - 1].strip())
                   for occurrence, (line_number, _) in enumerate(positions)]
    return places


def made(course: Course, place: Place) -> Mutant | None:
    """The mutant the operator makes at ``place``; None where it leaves the code as it was."""
    from cosmic_ray.mutating import mutate_code

    source = _solution(course, place.module)
    mutated = mutate_code(source, _operators()[place.operator], place.occurrence)
    if mutated is None or mutated == source:
        return None
    shown = f"{course.solutions}/{place.module}.py"
    diff = list(difflib.unified_diff(source.splitlines(), mutated.splitlines(), f"a/{shown}", f"b/{shown}",
                                     n=2, lineterm=""))
    added = [line[1:].strip() for line in diff[2:] if line.startswith("+")]
    return Mutant(place.module, place.operator, place.occurrence, place.line_number, place.line,
                  " / ".join(added), mutated, "\n".join(diff))


def _solution(course: Course, module: str) -> str:
    path = course.solutions_path() / f"{module}.py"
    if not path.is_file():
        raise GraderError(f"mutate: no solution module {path}")
    return path.read_text(encoding="utf-8")


def sample(mutants: dict[str, list[Drawn]], size: int, seed: int) -> dict[str, list[Drawn]]:
    """``size`` mutants (or places) drawn with ``seed``, spread over the modules in proportion to
    their mutants (largest remainders first; every module gets one while ``size`` allows)."""
    total = sum(len(found) for found in mutants.values())
    if size >= total:
        return mutants
    shares = {module: size * len(found) / total for module, found in mutants.items()}
    counts = {module: int(share) for module, share in shares.items()}
    if size >= len(mutants):
        for module in counts:
            counts[module] = max(counts[module], min(1, len(mutants[module])))
    by_remainder = sorted(mutants, key=lambda module: (counts[module] - shares[module], module))
    for module in by_remainder:
        if sum(counts.values()) >= size:
            break
        if counts[module] < len(mutants[module]):
            counts[module] += 1
    while sum(counts.values()) > size:  # the minimum of one overshot: take from the largest
        largest = max(counts, key=lambda module: (counts[module], module))
        counts[largest] -= 1
    rng = random.Random(seed)
    return {module: sorted(rng.sample(found, counts[module]), key=lambda m: (m.operator, m.occurrence))
            for module, found in mutants.items()}


# --------------------------------------------------------------------------- the equivalents


class Equivalent(BaseModel):
    """One entry of the course's list of equivalent mutants."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    module: str
    operator: str
    line: str
    mutated: str | None = None  # needed only when one line has several mutants of the operator
    reason: Annotated[str, Field(min_length=1)]

    def matches(self, mutant: Mutant) -> bool:
        return (self.module, self.operator, self.line.strip()) == (mutant.module, mutant.operator, mutant.line) and (
            self.mutated is None or self.mutated.strip() == mutant.mutated)


def load_equivalents(course: Course) -> list[Equivalent]:
    """The course's list (``mutation.equivalents``), or none; a malformed one raises
    :class:`CourseConfigError` naming the entry and key."""
    if course.mutation.equivalents is None:
        return []
    path = course.path(course.mutation.equivalents)
    if not path.is_file():
        raise CourseConfigError(f"{course.file.name}: mutation.equivalents: no such file "
                                f"{course.mutation.equivalents!r}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise CourseConfigError(f"{path}: cannot be read ({error})") from None
    if not isinstance(raw, list):
        raise CourseConfigError(f"{path}: must be a list of mutants, got {type(raw).__name__}")
    entries = []
    for index, entry in enumerate(raw):
        try:
            entries.append(Equivalent.model_validate(entry))
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise CourseConfigError(f"{path}: entry {index}: {problems}") from None
    return entries


def listing(mutant: Mutant) -> str:
    """The entry that would list ``mutant`` as equivalent (its reason left to write)."""
    entry = {"module": mutant.module, "operator": mutant.operator, "line": mutant.line, "mutated": mutant.mutated,
             "reason": "WHY it cannot be told apart from the reference"}
    return yaml.safe_dump([entry], sort_keys=False, allow_unicode=True, width=200).rstrip()


# --------------------------------------------------------------------------- grading


@dataclass
class Graded:
    mutant: Mutant | None  # None for the unmutated copy
    outcome: str  # one of OUTCOMES or "error", or "passed"/"failed" for the unmutated copy
    seconds: float
    why: str = ""  # the property that killed it, or what went wrong


class _Copies:
    """The solutions folder as a submission, once; a mutant is that with one module replaced,
    graded by the batch's grader processes (one per grading thread: ``graders``)."""

    def __init__(self, course: Course, scratch: Path, graders: GraderPool):
        self.course, self.scratch, self.graders = course, scratch, graders
        self.base = scratch / "base" / course.package
        shutil.copytree(course.solutions_path(), self.base, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

    def graded(self, mutant: Mutant | None, module: str, seconds: float) -> Graded:
        """Grade the unmutated copy (``mutant`` None) or a mutant of ``module`` on that exercise's
        suite alone, stopped after ``seconds``; a grader that fails gets one more try, then the
        outcome "error" (the run goes on and fails at the end)."""
        result = self._graded(mutant, module, seconds)
        return self._graded(mutant, module, seconds) if result.outcome == "error" else result

    def _graded(self, mutant: Mutant | None, module: str, seconds: float) -> Graded:
        if mutant is not None:
            try:
                with warnings.catch_warnings():  # such as `x is 1`, which the mutant's grading shows anyway
                    warnings.simplefilter("ignore")
                    compile(mutant.source, f"{module}.py", "exec")
            except (SyntaxError, ValueError) as error:
                return Graded(mutant, "killed", 0.0, f"not valid Python ({error.__class__.__name__})")
        folder = Path(tempfile.mkdtemp(prefix="mutant-", dir=self.scratch))
        try:
            shutil.copytree(self.base, folder / self.course.package)
            if mutant is not None:
                (folder / self.course.package / f"{module}.py").write_text(mutant.source, encoding="utf-8")
            staged = stage(self.course, folder)
            try:
                return self._run(staged, folder / "report", mutant, module, seconds)
            finally:
                staged.remove()
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _run(self, staged: Staged, report: Path, mutant: Mutant | None, module: str, seconds: float) -> Graded:
        """Grade ``staged`` in a grader process, its reports in ``report``, stopping at the first failure."""
        grade, spent, problem = self.graders.grade(self.course, module, staged, report,
                                                   Part([module], first_failure=True), seconds)
        if grade is None:
            return _failed(mutant, problem, spent, seconds)
        failed = next((r for r in grade.results if not r.passed), None)
        if mutant is None:
            return Graded(None, "failed" if failed else "passed", spent, failed.name if failed else "")
        if failed is None:
            return Graded(mutant, "survived", spent)
        return Graded(mutant, "timed out" if failed.timed_out else "killed", spent, failed.name)


def _failed(mutant: Mutant | None, problem: str, spent: float, seconds: float) -> Graded:
    """A grading that gave no grade: its grader process stopped at ``seconds``, or failed (``problem``
    says why)."""
    if spent >= seconds:
        return Graded(mutant, "timed out", spent, f"stopped after {seconds:.0f} s")
    return Graded(mutant, "error", spent, problem)


# --------------------------------------------------------------------------- the command


@dataclass
class Report:
    graded: list[Graded]
    baseline: dict[str, float]
    equivalents: list[Equivalent]
    seconds: float
    available: dict[str, int]  # how many mutants each module has, sampled or not
    sampled: bool

    def unlisted(self) -> list[Graded]:
        return [g for g in self.graded if g.outcome == "survived"]

    def errors(self) -> list[Graded]:
        return [g for g in self.graded if g.outcome == "error"]


def run(course: Course, modules: list[str], jobs: int, size: int | None, seed: int, console: Console) -> Report:
    """Mutate and grade ``modules``; the unmutated copy must score full points first."""
    known = [e.module for e in course.exercises]
    for module in modules:
        if module not in known:
            raise GraderError(f"mutate: {module!r} is not an exercise of {course.file.name} ({', '.join(known)})")
    modules = list(dict.fromkeys(modules))
    equivalents = load_equivalents(course)
    everything = {module: places_of(course, module) for module in modules}
    chosen = sample(everything, size, seed) if size is not None else everything  # made below: only these
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="autograder-mutate-") as scratch, GraderPool() as graders, \
            ThreadPoolExecutor(max(1, jobs)) as pool:
        copies = _Copies(course, Path(scratch), graders)
        baseline = {}
        for module, future in [(m, pool.submit(copies.graded, None, m, grader_seconds(course, [m])))
                               for m in modules]:
            reference = future.result()
            if reference.outcome == "error":
                raise GraderError(f"mutate: grading the unmutated solution of {module}: {reference.why}")
            if reference.outcome != "passed":
                raise GraderError(f"mutate: the unmutated solution of {module} does not pass its own suite "
                                  f"({reference.why or reference.outcome}); fix that first")
            baseline[module] = reference.seconds
        todo = [m for module in modules for place in chosen[module] if (m := made(course, place)) is not None]
        graded = []
        columns = (TextColumn("mutants"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.description}"))
        with Progress(*columns, console=console, transient=True) as progress:
            bar = progress.add_task("", total=len(todo))
            futures = [pool.submit(copies.graded, m, m.module, TIME_FACTOR * baseline[m.module] + TIME_SLACK)
                       for m in todo]
            for future in as_completed(futures):
                result = future.result()
                if result.outcome == "survived" and result.mutant and any(
                        e.matches(result.mutant) for e in equivalents):
                    result.outcome = "equivalent"
                graded.append(result)
                if result.outcome in ("survived", "error") and result.mutant:  # as found: a long run shows them early
                    progress.console.print(escape(f"{result.outcome}: {result.mutant.label}: {result.mutant.line!r} "
                                                  f"-> {result.mutant.mutated!r} {result.why}"),
                                           highlight=False, soft_wrap=True)
                progress.update(bar, advance=1, description=result.mutant.label if result.mutant else "")
    graded.sort(key=lambda g: (modules.index(g.mutant.module), g.mutant.operator, g.mutant.occurrence)
                if g.mutant else (0, "", 0))
    return Report(graded, baseline, equivalents, time.monotonic() - started,
                  {module: len(found) for module, found in everything.items()}, size is not None)


def print_report(console: Console, report: Report, modules: list[str]) -> None:
    table = Table(title="Mutants of the reference solutions, graded by their exercise's suite")
    for column in ("exercise", "mutants", *OUTCOMES, "reference (s)", "mutants (s)"):
        table.add_column(column, justify="left" if column == "exercise" else "right")
    totals = dict.fromkeys(("mutants", *OUTCOMES), 0)
    for module in modules:
        mine = [g for g in report.graded if g.mutant and g.mutant.module == module]
        counts = {outcome: sum(g.outcome == outcome for g in mine) for outcome in OUTCOMES}
        shown = f"{len(mine)} of {report.available[module]}" if report.sampled else str(len(mine))
        table.add_row(module, shown, *(str(counts[o]) for o in OUTCOMES), f"{report.baseline[module]:.1f}",
                      f"{sum(g.seconds for g in mine):.0f}")
        totals["mutants"] += len(mine)
        for outcome in OUTCOMES:
            totals[outcome] += counts[outcome]
    table.add_row("total", str(totals["mutants"]), *(str(totals[o]) for o in OUTCOMES), "",
                  f"{sum(g.seconds for g in report.graded):.0f}", style="bold")
    console.print(table)
    console.print(f"{report.seconds:.0f} s in all; \"survived\" counts the survivors the course has not listed as "
                  "equivalent.", highlight=False)
    listed_but_killed = [g for g in report.graded if g.mutant and g.outcome in ("killed", "timed out")
                         and any(e.matches(g.mutant) for e in report.equivalents)]
    for g in listed_but_killed:
        console.print(f"[yellow]note:[/] {escape(g.mutant.label if g.mutant else '')} is listed as equivalent "
                      f"but the suite kills it ({escape(g.why)}): take it off the list", highlight=False)
    if not report.sampled:
        seen = [g.mutant for g in report.graded if g.mutant]
        for entry in report.equivalents:
            if entry.module in modules and not any(entry.matches(m) for m in seen):
                console.print(f"[yellow]note:[/] the listed equivalent {escape(entry.module)} {escape(entry.operator)} "
                              f"{escape(repr(entry.line))} matches no mutant any more: take it off the list",
                              highlight=False)
    for g in report.unlisted():
        assert g.mutant is not None
        console.print(f"\n[bold red]survived:[/] {escape(g.mutant.label)}", highlight=False)
        console.print(escape(g.mutant.diff), highlight=False, soft_wrap=True)
        console.print("If it cannot be told apart from the reference, list it in the equivalents file:",
                      highlight=False)
        console.print(escape(listing(g.mutant)), highlight=False, soft_wrap=True)


def command(course: Course, modules: list[str], jobs: int, size: int | None, seed: int, console: Console) -> int:
    """``python -m autograder mutate``: 1 when a mutant the course has not listed survives, else 0."""
    if course.is_release:
        raise GraderError("this is a student release: it has no solutions to mutate")
    modules = list(dict.fromkeys(modules))
    report = run(course, modules, jobs, size, seed, console)
    print_report(console, report, modules)
    for g in report.errors():
        console.print(f"[bold red]error:[/] {escape(g.mutant.label if g.mutant else '')}: {escape(g.why)}",
                      highlight=False)
    unlisted = report.unlisted()
    if report.errors():
        console.print(f"\n[bold red]{len(report.errors())} mutant(s) could not be graded.[/]", highlight=False)
        return 2
    if unlisted:
        console.print(f"\n[bold red]{len(unlisted)} mutant(s) survived that the course has not listed as "
                      "equivalent.[/]", highlight=False)
        return 1
    return 0

