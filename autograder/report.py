"""Reports of a grade: ``results.json``, ``feedback.md`` and the console's tables.

``results.json`` is the :class:`~autograder.results.Grade` in Gradescope's schema
(:meth:`~autograder.results.Grade.to_gradescope`); ``feedback.md`` is what the student
reads. Every text a report shows is capped (``limits.feedback_chars`` per text,
``limits.report_chars`` per report), with a marker where it was cut: student code decides
how long its messages are.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .config import Course
from .results import Grade, PropertyResult, clip


def feedback_markdown(course: Course, name: str, grade: Grade) -> str:
    """A student's feedback: the score per exercise, then every failed property with its reason."""
    grade = grade.capped(course.limits)
    by_exercise = grade.by_exercise(course)
    lines = [f"# {course.title}: feedback for {name}", "",
             f"**Score: {grade.score:g} / {course.full_marks_text(by_exercise)}**", ""]
    if len(by_exercise) < len(course.exercises):
        lines += [f"Only {', '.join(by_exercise)} {'was' if len(by_exercise) == 1 else 'were'} graded this time.", ""]
    if grade.notes_text:
        lines += [grade.notes_text, ""]
    for exercise in (e for e in course.exercises if e.module in by_exercise):
        score, _ = by_exercise[exercise.module]
        lines += [f"## {exercise.module}: {exercise.title} ({score:g} / {exercise.points_text})", ""]
        for result in grade.results:
            if result.exercise != exercise.module:
                continue
            mark = "passed" if result.passed else "FAILED"
            lines.append(f"- {mark} ({result.score:g}/{result.points:g}) `{result.name}`")
            if not result.passed and result.output:
                lines += ["", "  ```text", *("  " + line for line in result.output.splitlines()), "  ```", ""]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


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


def print_check(console: Console, course: Course, grade: Grade) -> None:
    """The self-check screen: a table per exercise, then each failed property's feedback.

    The table says what it counts: points come from the properties alone (a locked case is
    worth none), while the passed and failed columns count the locked cases too, if any ran.
    """
    grade = grade.capped(course.limits)
    what = "properties and locked cases" if any(map(_is_locked, grade.results)) else "properties"
    table = Table(title=f"{course.title}: self-check (public {what})",
                  caption=f"points out of {course.max_score_text}")
    for column in ("exercise", "points", f"{what} passed", f"failed {what}"):
        table.add_column(column)
    by_exercise = grade.by_exercise(course)
    for exercise in course.exercises:
        results = [r for r in grade.results if r.exercise == exercise.module]
        if not results:  # not checked (check --exercise)
            continue
        failed = [r.name for r in results if not r.passed]
        score, maximum = by_exercise[exercise.module]
        passed = len(results) - len(failed)
        style = "green" if not failed else ("red" if passed == 0 else "yellow")
        bonus = " bonus" if exercise.bonus else ""
        table.add_row(exercise.module, f"{score:g} / {maximum:g}{bonus}", f"[{style}]{passed} / {len(results)}[/]",
                      "\n".join(failed[:6]) + (f"\n… {len(failed) - 6} more" if len(failed) > 6 else ""))
    console.print(table)
    failures: dict[str, list[PropertyResult]] = {}
    for result in grade.results:
        if not result.passed:
            failures.setdefault(_without_summary(result.output), []).append(result)
    for results in failures.values():
        names = results[0].title if len(results) == 1 else f"{len(results)} properties of {results[0].exercise}"
        console.rule(f"[red]{names}")
        console.print(results[0].output if len(results) == 1 else _without_summary(results[0].output),
                      markup=False, highlight=False)
    if grade.notes_text:
        console.print(grade.notes_text, markup=False, highlight=False)


def _is_locked(result: PropertyResult) -> bool:
    """Whether a result is a locked known-answer case (:func:`autograder.locked.check_locked` names them so)."""
    return result.name.startswith("locked case: ")


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
