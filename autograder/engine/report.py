"""The two files a grading leaves in its report folder: ``results.json`` and ``feedback.md``.

``results.json`` is the :class:`~autograder.results.Grade` in Gradescope's schema
(:meth:`~autograder.results.Grade.to_gradescope`), which a batch reads back; ``feedback.md`` is
what the student reads. Every text a report shows is capped (``limits.feedback_chars`` per text,
``limits.report_chars`` per report), with a marker where it was cut: student code decides
how long its messages are.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..config import Course
from ..results import HIDDEN_REASON, Grade, PropertyResult, clip


def feedback_markdown(course: Course, name: str, grade: Grade) -> str:
    """A student's feedback: the score per exercise, then every failed property with its reason;
    the properties that one cause stopped (a function not written yet, a missing module) on
    one line, with that cause once."""
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
        for results in entries(r for r in grade.results if r.exercise == exercise.module):
            first = results[0]
            mark = f"{'passed' if first.passed else 'FAILED'} ({sum(r.score for r in results):g}/" \
                   f"{sum(r.points for r in results):g})"
            names = ", ".join(f"`{r.name}`" for r in results)
            text = cause(first) if first.blocked else first.output
            if first.blocked and "\n" not in text:  # one line: the cause, then what it stopped
                lines.append(f"- {mark} {'hidden, ' if first.hidden else ''}{text}: {names}")
                continue
            lines.append(f"- {mark} {names}")
            if not first.passed and text:
                lines += ["", "  ```text", *("  " + line for line in text.splitlines()), "  ```", ""]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


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
    property's reason (:func:`autograder.engine.feedback.property_feedback` writes them so)."""
    return result.output.rsplit(HIDDEN_REASON, 1)[-1].rstrip(".") if result.hidden else _without_summary(result.output)


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


def _without_summary(output: str) -> str:
    """A property's feedback without its first line (the property's own summary)."""
    return output.split("\n", 1)[-1].strip()
