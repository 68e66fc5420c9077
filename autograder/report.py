"""Reports of a grade: ``results.json``, ``feedback.md`` and the console's tables.

``results.json`` is the :class:`~autograder.results.Grade` in Gradescope's schema
(:meth:`~autograder.results.Grade.to_gradescope`); ``feedback.md`` is what the student
reads. Every text a report shows is capped (``limits.feedback_chars`` per text,
``limits.report_chars`` per report), with a marker where it was cut: student code decides
how long its messages are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import bidi
from .config import Course, Exercise
from .i18n import _, in_course_language, ngettext
from .results import LOCKED_PREFIX, Grade, PropertyResult, clip


@in_course_language
def feedback_markdown(course: Course, name: str, grade: Grade) -> str:
    """A student's feedback: the score per exercise, then every failed property with its reason;
    the properties that one cause stopped (a function not written yet, a missing module) on
    one line, with that cause once. In a right-to-left language the prose reads right to left
    and the code left to right (:mod:`autograder.bidi`)."""
    grade = grade.capped(course.limits)
    by_exercise = grade.by_exercise(course)
    rtl = bidi.right_to_left(course.language)
    lines = [_("# {title}: feedback for {name}").format(title=course.title, name=name), "",
             _("**Score: {score:g} / {total}**").format(score=grade.score, total=course.full_marks_text(by_exercise)),
             ""]
    if len(by_exercise) < len(course.exercises):
        lines += [ngettext("Only {exercises} was graded this time.", "Only {exercises} were graded this time.",
                           len(by_exercise)).format(exercises=", ".join(by_exercise)), ""]
    if grade.notes_text:
        lines += bidi.failure_markdown(grade.notes_text)[1:] if rtl else [grade.notes_text, ""]
    for exercise in (e for e in course.exercises if e.module in by_exercise):
        score = by_exercise[exercise.module][0]
        lines += [_("## {module}: {title} ({score:g} / {points})").format(
            module=exercise.module, title=exercise.title, score=score, points=exercise.points_text), ""]
        for results in entries(r for r in grade.results if r.exercise == exercise.module):
            first = results[0]
            mark = (_("passed ({score:g}/{points:g})") if first.passed else _("FAILED ({score:g}/{points:g})")).format(
                score=sum(r.score for r in results), points=sum(r.points for r in results))
            names = ", ".join(shown_name(r, code=True) for r in results)
            text = cause(first) if first.blocked else first.output
            if first.blocked and "\n" not in text:  # one line: the cause, then what it stopped
                said = _("- {mark} hidden, {cause}: {names}") if first.hidden else _("- {mark} {cause}: {names}")
                lines.append(said.format(mark=mark, cause=bidi.spans(text) if rtl else text, names=names))
                continue
            lines.append(f"- {mark} {names}")
            if not first.passed and text:
                lines += bidi.failure_markdown(text, "  ") if rtl else \
                    ["", "  ```text", *("  " + line for line in text.splitlines()), "  ```", ""]
        lines.append("")
    return bidi.markdown(course.language, "\n".join(lines).rstrip() + "\n")


def entries(results: Iterable[PropertyResult]) -> list[list[PropertyResult]]:
    """``results`` in order, one entry each, but the failures one cause blocked in one entry (at
    the first one's place): a function not written yet fails every property that calls it."""
    found: list[list[PropertyResult]] = []
    blocked: dict[tuple[bool, str], list[PropertyResult]] = {}
    for result in results:
        if not result.blocked or result.passed:
            found.append([result])
        elif (key := (result.hidden, cause(result))) in blocked:
            blocked[key].append(result)
        else:
            found.append(blocked.setdefault(key, [result]))
    return found


def cause(result: PropertyResult) -> str:
    """What stopped a blocked property: its feedback without its description, or a hidden
    property's reason (:func:`autograder.plugin._feedback` writes them so)."""
    return result.output.rsplit(" — ", 1)[-1].rstrip(".") if result.hidden else _without_summary(result.output)


def write_reports(course: Course, folder: Path, name: str, grade: Grade) -> None:
    """Write ``results.json`` and ``feedback.md`` for one submission, both within the caps."""
    folder.mkdir(parents=True, exist_ok=True)
    document = grade.to_gradescope(course)
    (folder / "results.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    markdown = clip(feedback_markdown(course, name, grade), course.limits.report_chars)
    (folder / "feedback.md").write_text(markdown.rstrip() + "\n", encoding="utf-8")


def read_results(folder: Path) -> Grade:
    """The grade in ``folder/results.json``, as :func:`write_reports` wrote it."""
    return Grade.from_gradescope(json.loads((folder / "results.json").read_text(encoding="utf-8")))


@in_course_language
def print_check(console: Console, course: Course, grade: Grade) -> None:
    """The self-check screen: a table with a row per exercise checked, what its numbers mean in
    words, then each failure's feedback. The exercises in progress (some of it passes, some
    not) come first; the properties that one cause stopped (a function not written yet) take
    one line, not one entry each."""
    grade = grade.capped(course.limits)
    locked = any(map(_is_locked, grade.results))
    checked = [(e, [r for r in grade.results if r.exercise == e.module]) for e in course.exercises]
    checked = sorted([(e, results) for e, results in checked if results], key=lambda item: _progress(item[1]))
    table = Table(title=_("{title}: self-check").format(title=course.title))
    table.add_column(_("exercise"), no_wrap=True)
    for column in (_("points"), _("public properties"), *([_("locked cases")] if locked else []), _("still failing")):
        table.add_column(column)
    for exercise, results in checked:
        properties = [r for r in results if not _is_locked(r)]
        cases = [r for r in results if _is_locked(r)]
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
    console.print(table)
    console.print(_how_to_read(course, checked, locked), highlight=False)
    for exercise, results in checked:
        failures = entries(r for r in results if not r.passed)
        if failures:
            console.rule(f"[red]{exercise.module}")
        for group in failures:
            first = group[0]
            if first.blocked and "\n" not in cause(first):
                console.print(f"{cause(first)}: {', '.join(map(shown_name, group))}", markup=False, highlight=False)
                continue
            console.print(f"\n[bold red]✗ {escape(shown_name(first))}[/]", highlight=False)
            console.print(cause(first) if first.blocked else first.output, markup=False, highlight=False)
    working = [e.module for e, results in checked if not all(r.passed for r in results)]
    if len(checked) > 1 and working:
        console.print("\n" + _("Working on one exercise? {command} checks it alone.").format(
            command=f"[bold]python -m autograder check --exercise {working[0]}[/]"), highlight=False)
    if grade.notes_text:
        console.print()
        console.print(grade.notes_text, markup=False, highlight=False)


def _progress(results: list[PropertyResult]) -> int:
    """0 for an exercise in progress (some of it passes, some not), 1 for one of which nothing
    passes, 2 for one of which everything does: the one a student is working on, first."""
    passed = sum(r.passed for r in results)
    return 0 if 0 < passed < len(results) else (1 if passed == 0 else 2)


def _failing(failing: list[PropertyResult]) -> str:
    """What still fails on an exercise, counted: ``3 properties, 1 locked case``."""
    properties = sum(not _is_locked(r) for r in failing)
    cases = len(failing) - properties
    counted = [ngettext("{count} property", "{count} properties", properties).format(count=properties)
               if properties else "",
               ngettext("{count} locked case", "{count} locked cases", cases).format(count=cases) if cases else ""]
    return _(", ").join(said for said in counted if said)


def _how_to_read(course: Course, checked: list[tuple[Exercise, list[PropertyResult]]], locked: bool) -> str:
    """The table's numbers in words, said once under it."""
    words = [_("Public properties: the properties this check runs, and the points they give out of what they are "
               "worth.")]
    if any(sum(r.points for r in results if not _is_locked(r)) < e.points for e, results in checked):
        words.append(_("Official grading also runs hidden properties, which make up the rest of an exercise's "
                       "points (the points column): full public points do not mean full marks."))
    if locked:
        words.append(_("Locked cases: fixed calls whose answers are compared with the reference's through a salted "
                       "hash, so you learn pass or fail but never the answer; they give no points here, and "
                       "official grading checks the same answers."))
    if any(e.bonus for e, results in checked):
        words.append(_("Full marks are {total}: a bonus exercise's points come on top.").format(
            total=course.max_score_text))
    words.append(_("An exercise is ready when nothing on its row still fails."))
    return " ".join(words)


def shown_name(result: PropertyResult, code: bool = False) -> str:
    """A result's name as a student reads it (``code``: the name in a Markdown code span): a
    property's own, a locked case's after words in the course's language."""
    name = result.name.removeprefix(LOCKED_PREFIX) if _is_locked(result) else result.name
    name = f"`{name}`" if code else name
    return _("locked case: {name}").format(name=name) if _is_locked(result) else name


def _is_locked(result: PropertyResult) -> bool:
    """Whether a result is a locked known-answer case (:func:`autograder.locked.check_locked` names them so)."""
    return result.name.startswith(LOCKED_PREFIX)


def _without_summary(output: str) -> str:
    """A property's feedback without its first line (the property's own summary)."""
    return output.split("\n", 1)[-1].strip()


def print_grades(console: Console, course: Course, rows: list[tuple[str, Grade | None, str]]) -> None:
    """The batch summary: one row per submission, one column per exercise graded (``–`` where a
    submission's grading left it out). Headers break before "bonus" and notes wrap rather than being
    cut, so that an 80-column terminal shows them whole."""
    graded = {module for _, grade, _ in rows if grade is not None for module in grade.by_exercise(course)}
    exercises = [e for e in course.exercises if e.module in graded] or list(course.exercises)
    modules = [e.module for e in exercises]
    table = Table(title=f"{course.title}: grades")
    table.add_column("submission", no_wrap=True)
    labels = [module.split("_")[0] for module in modules]
    if len(set(labels)) < len(labels):
        labels = modules
    for label, exercise in zip(labels, exercises, strict=True):
        table.add_column(f"{label}\n/{exercise.points}" + ("\nbonus" if exercise.bonus else ""), justify="right")
    total = course.full_marks_text(modules).replace(" + ", "\n+").replace(" bonus", "\nbonus")
    table.add_column(f"total\n/{total}", justify="right")
    table.add_column("note", overflow="fold", min_width=12)
    for name, grade, note in rows:
        if grade is None:
            table.add_row(name, *[""] * len(exercises), "", f"[red]{escape(note)}")
            continue
        scores = grade.by_exercise(course)
        table.add_row(name, *(f"{scores[m][0]:g}" if m in scores else "–" for m in modules), f"{grade.score:g}",
                      escape(note))
    console.print(table)
