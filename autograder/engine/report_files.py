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

from .. import bidi, suite_texts
from ..config import Course
from ..i18n import _, in_course_language, ngettext
from ..results import HIDDEN_REASON, LOCKED_PREFIX, Grade, PropertyResult, clip


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
                           len(by_exercise)).format(exercises=_(", ").join(by_exercise)), ""]
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
            names = _(", ").join(shown_name(course, r, code=True) for r in results)
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


def shown_name(course: Course, result: PropertyResult, code: bool = False) -> str:
    """A result's name as a student reads it (``code``: a name that is code in a Markdown code
    span): a property's own, a locked case's in the course's language, after words in it."""
    if not is_locked(result):
        return f"`{result.name}`" if code else result.name
    name = suite_texts.case_name(course, result.exercise, result.name.removeprefix(LOCKED_PREFIX))
    return _("locked case: {name}").format(name=f"`{name}`" if code and not bidi.has_prose(name) else name)


def is_locked(result: PropertyResult) -> bool:
    """Whether a result is a locked known-answer case (``check_locked`` names them so)."""
    return result.name.startswith(LOCKED_PREFIX)
