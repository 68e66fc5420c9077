"""What the console shows: the student's self-check table, and the instructor's table of a batch.

Both read :class:`~autograder.results.Grade` objects; the properties that one cause stopped (a
function not written yet) take one line, as in ``feedback.md``
(:func:`autograder.engine.report_files.entries`). While the check runs, :func:`check_progress` shows
which property it is on.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleOptions
from rich.markup import escape
from rich.progress import MofNCompleteColumn, Progress, ProgressColumn, SpinnerColumn, Task, TextColumn
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from .. import STUDENT_COMMAND, bidi
from ..config import Course, Exercise
from ..engine.report_files import cause, entries, is_locked, shown_name
from ..i18n import _, in_course_language, ngettext
from ..results import Grade, PropertyResult


@in_course_language
def print_check(console: Console, course: Course, grade: Grade) -> None:
    """The self-check screen: a table with a row per exercise checked, what its numbers mean in
    words, then each failure's feedback. The exercises in progress (some of it passes, some
    not) come first; the properties that one cause stopped (a function not written yet) take
    one line, not one entry each."""
    grade = grade.capped(course.limits)
    locked = any(map(is_locked, grade.results))
    checked = [(e, [r for r in grade.results if r.exercise == e.module]) for e in course.exercises]
    checked = sorted([(e, results) for e, results in checked if results], key=lambda item: _progress(item[1]))
    table = Table(title=_("{title}: self-check").format(title=course.title))
    table.add_column(_("exercise"), no_wrap=True)
    for column in (_("points"), _("public properties"), *([_("locked cases")] if locked else []), _("still failing")):
        table.add_column(column)
    for exercise, results in checked:
        properties = [r for r in results if not is_locked(r)]
        cases = [r for r in results if is_locked(r)]
        failing = [r for r in results if not r.passed]
        style = "green" if not failing else ("red" if len(failing) == len(results) else "yellow")
        cells = [exercise.module, exercise.points_text,
                 f"[{style}]" + _("{score:g} of {points:g} points").format(
                     score=sum(r.score for r in properties), points=sum(r.points for r in properties)) + "[/]"]
        if locked:
            cells.append(_("{passed} of {total} pass").format(passed=sum(r.passed for r in cases), total=len(cases))
                         if cases else _("none"))
        cells.append(_failing(failing) if failing else "[green]" + _("nothing") + "[/]")
        table.add_row(*cells)
    console.print(_IsolatedCells(table) if bidi.right_to_left(course.language) else table)
    # a right-to-left line is laid out whole where the terminal wraps it, not where rich would cut it
    soft = bidi.right_to_left(course.language)
    console.print(_how_to_read(course, checked, locked), highlight=False, soft_wrap=soft)
    for exercise, results in checked:
        failures = entries(r for r in results if not r.passed)
        if failures:
            console.rule(f"[red]{exercise.module}")
        for group in failures:
            first = group[0]
            if first.blocked and "\n" not in cause(first):
                names = _(", ").join(bidi.code(course.language, shown_name(course, r)) if not is_locked(r)
                                     else shown_name(course, r) for r in group)
                console.print(f"{cause(first)}: {names}", markup=False, highlight=False, soft_wrap=soft)
                continue
            console.print(f"\n[bold red]✗ {escape(shown_name(course, first))}[/]", highlight=False, soft_wrap=soft)
            console.print(cause(first) if first.blocked else first.output, markup=False, highlight=False,
                          soft_wrap=soft)
    working = [e.module for e, results in checked if not all(r.passed for r in results)]
    if len(checked) > 1 and working:
        console.print("\n" + _("Working on one exercise? {command} checks it alone.").format(
            command=f"[bold]{STUDENT_COMMAND} check --exercise {working[0]}[/]"), highlight=False, soft_wrap=soft)
    if grade.notes_text:
        console.print()
        console.print(grade.notes_text, markup=False, highlight=False, soft_wrap=soft)


class _IsolatedCells:
    """A table in a right-to-left language, each physical line isolated left to right (LRI ... PDI)
    and each cell's part of it isolated by itself (FSI ... PDI), after rich has wrapped the cells:
    an isolate that a wrap cut in two would swallow the rest of its line, and a line that starts
    with Persian would be laid out right to left, its columns reversed (docs/persian.md)."""

    def __init__(self, table: Table):
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for line in console.render_lines(self.table, options, pad=False):
            borders = [at for at, segment in enumerate(line) if _BORDER.fullmatch(segment.text)]
            if len(borders) < 2:  # the title, a rule
                yield from line
            else:
                yield Segment(bidi.LRI)
                depth = 0  # the isolates open in the cell, of those its own text opened
                for at, segment in enumerate(line):
                    if at in borders[1:]:
                        yield Segment(bidi.PDI * (depth + 1))
                    if at in borders:
                        yield segment
                        depth = 0
                    else:
                        text, depth = bidi.balanced(segment.text, depth)
                        yield Segment(text, segment.style)
                    if at in borders[:-1]:
                        yield Segment(bidi.FSI)
                yield Segment(bidi.PDI)
            yield Segment.line()


_BORDER = re.compile("[\u2500-\u257f]+")  # box drawing


def _progress(results: list[PropertyResult]) -> int:
    """0 for an exercise in progress (some of it passes, some not), 1 for one of which nothing
    passes, 2 for one of which everything does: the one a student is working on, first."""
    passed = sum(r.passed for r in results)
    return 0 if 0 < passed < len(results) else (1 if passed == 0 else 2)


def _failing(failing: list[PropertyResult]) -> str:
    """What still fails on an exercise, counted: ``3 properties, 1 locked case``."""
    properties = sum(not is_locked(r) for r in failing)
    cases = len(failing) - properties
    counted = [ngettext("{count} property", "{count} properties", properties).format(count=properties)
               if properties else "",
               ngettext("{count} locked case", "{count} locked cases", cases).format(count=cases) if cases else ""]
    return _(", ").join(said for said in counted if said)


def _how_to_read(course: Course, checked: list[tuple[Exercise, list[PropertyResult]]], locked: bool) -> str:
    """The table's numbers in words, said once under it."""
    words = [_("Public properties: the properties this check runs, and the points they give out of what they are "
               "worth.")]
    seen = [(e, sum(r.points for r in results if not is_locked(r))) for e, results in checked]
    partial = [(e, points) for e, points in seen if points < e.points]
    if partial:
        words.append(_("What this check sees: its properties are worth {shares}.").format(shares=_(", ").join(
            _("{seen} of the {points} points of {module}").format(seen=points, points=e.points, module=e.module)
            for e, points in partial)))
        words.append(_("Official grading decides the rest with properties that compare your results with the "
                       "reference solutions' and with hidden properties: full public points do not mean full marks.")
                     if course.is_release else
                     _("Official grading decides the rest with hidden properties: full public points do not mean "
                       "full marks."))
    if locked:
        words.append(_("Locked cases: fixed calls whose answers are compared with the reference's through a salted "
                       "hash, so you learn pass or fail but never the answer; they give no points here, but they "
                       "test rules that the points this check cannot see depend on, and official grading checks the "
                       "same answers."))
    if any(e.bonus for e, results in checked):
        words.append(_("Full marks are {total}: a bonus exercise's points come on top.").format(
            total=course.max_score_text))
    words.append(_("An exercise is ready when nothing on its row still fails."))
    return " ".join(words)


def print_grades(console: Console, course: Course, rows: list[tuple[str, Grade | None, str]]) -> None:
    """The batch summary (:func:`grades_table`)."""
    console.print(grades_table(course, rows))


def grades_table(course: Course, rows: list[tuple[str, Grade | None, str]]) -> Table:
    """One row per submission, one column per exercise graded (``–`` where a submission's grading
    left it out), the total and, where a bonus exercise was graded beside the others, the total
    without it (grades.csv's ``score`` and ``score_without_bonus``). Headers break before "bonus",
    notes wrap rather than being cut, and columns are set apart by space alone, so that an
    80-column terminal shows them whole."""
    graded = {module for _, grade, _ in rows if grade is not None for module in grade.by_exercise(course)}
    exercises = [e for e in course.exercises if e.module in graded] or list(course.exercises)
    modules = [e.module for e in exercises]
    table = Table(title=f"{course.title}: grades", box=None, header_style="bold")
    table.add_column("submission", no_wrap=True)
    labels = [module.split("_")[0] for module in modules]
    if len(set(labels)) < len(labels):
        labels = modules
    for label, exercise in zip(labels, exercises, strict=True):
        table.add_column(f"{label}\n/{exercise.points}" + ("\nbonus" if exercise.bonus else ""), justify="right")
    total = course.full_marks_text(modules).replace(" + ", "\n+").replace(" bonus", "\nbonus")
    table.add_column(f"total\n/{total}", justify="right")
    both = bool(course.bonus_marks(modules) and course.full_marks(modules))
    if both:
        table.add_column(f"no\nbonus\n/{course.full_marks(modules)}", justify="right")
    table.add_column("note", overflow="fold", min_width=12)
    for name, grade, note in rows:
        if grade is None:
            table.add_row(name, *[""] * (len(exercises) + 1 + both), f"[red]{escape(note)}")
            continue
        scores = grade.by_exercise(course)
        totals = [grade.score, course.score_without_bonus({m: score for m, (score, _) in scores.items()})][:1 + both]
        table.add_row(name, *(f"{scores[m][0]:g}" if m in scores else "–" for m in modules),
                      *(f"{total:g}" for total in totals), escape(note))
    return table


class CheckProgress:
    """A pytest plugin beside the grading plugin, for the self-check's live line: the property
    running (its exercise and name), how many are done, and the seconds it has taken so far, so
    that a call that takes long shows as time going by, not as a screen that stopped."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self.task = progress.add_task("", total=None, since=time.monotonic())

    def pytest_collection_finish(self, session: Any) -> None:
        self.progress.update(self.task, total=len(session.items))

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        suite, _sep, name = nodeid.partition("::")
        self.now(f"{Path(suite).stem}: {name}")

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.progress.advance(self.task)

    def now(self, doing: str) -> None:
        """Show ``doing`` as what runs now, its seconds counted from now."""
        self.progress.update(self.task, description=doing, since=time.monotonic(), refresh=True)


class _Seconds(ProgressColumn):
    """The seconds the task's current step has taken."""

    def render(self, task: Task) -> Text:
        return Text(_("{seconds} s").format(seconds=int(time.monotonic() - task.fields["since"])), style="dim")


@contextlib.contextmanager
def check_progress(console: Console) -> Iterator[CheckProgress]:
    """The self-check's live line (:class:`CheckProgress`), gone once the check is done; on a
    console that is not a terminal, nothing."""
    columns = (SpinnerColumn(), TextColumn(_("checking")), MofNCompleteColumn(), TextColumn("{task.description}"),
               _Seconds())
    with Progress(*columns, console=console, transient=True) as progress:
        yield CheckProgress(progress)
