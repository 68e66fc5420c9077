"""Reports: Gradescope's ``results.json``, a Markdown ``feedback.md``, and console tables.

``results.json`` follows Gradescope's autograder schema: a top-level ``score`` and
``tests``, each test with ``name``, ``score``, ``max_score``, ``status``, ``visibility``
(``visible`` for public properties, ``after_published`` for hidden ones), ``output`` and
``extra_data``. The ``tests`` array holds nothing that changes between runs (no times), so
grading the same submission twice gives the same bytes. Every text a report shows is capped
(``limits.feedback_chars`` per text, ``limits.report_chars`` per report), with a marker where
it was cut: student code decides how long its messages are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from rich.console import Console
from rich.table import Table

from .config import Course, Limits
from .plugin import PropertyResult, clip


def gradescope_results(course: Course, results: list[PropertyResult], notes: Iterable[str], seconds: float) -> dict:
    """The Gradescope ``results.json`` document for one graded submission."""
    tests = [{
        "name": f"{r.exercise}: {r.name}",
        "score": r.score,
        "max_score": r.points,
        "status": "passed" if r.passed else "failed",
        "visibility": "after_published" if r.hidden else "visible",
        "output": r.output,
        "extra_data": {"exercise": r.exercise, "property": r.name, "hidden": r.hidden},
    } for r in results]
    return {
        "score": sum(r.score for r in results),
        "execution_time": round(seconds, 3),
        "output": "\n".join(notes),
        "visibility": "visible",
        "tests": tests,
    }


def unreadable_results(course: Course, message: str) -> dict:
    """``results.json`` for a submission that could not be read: zero on every exercise, and why."""
    return {
        "score": 0,
        "output": message,
        "visibility": "visible",
        "tests": [{
            "name": f"{e.module}: submission", "score": 0, "max_score": e.points, "status": "failed",
            "visibility": "visible", "output": message, "extra_data": {"exercise": e.module},
        } for e in course.exercises],
    }


def exercise_scores(course: Course, document: dict) -> dict[str, tuple[float, int]]:
    """Score and maximum per exercise module, from a ``results.json`` document."""
    scores = {e.module: [0.0, 0] for e in course.exercises}
    for test in document["tests"]:
        entry = scores.setdefault(test["extra_data"]["exercise"], [0.0, 0])
        entry[0] += test["score"]
        entry[1] += test["max_score"]
    return {module: (score, maximum) for module, (score, maximum) in scores.items()}


def feedback_markdown(course: Course, name: str, document: dict) -> str:
    """A student's feedback: the score per exercise, then every failed property with its reason."""
    total = sum(e.points for e in course.exercises)
    lines = [f"# {course.title}: feedback for {name}", "", f"**Score: {document['score']:g} / {total}**", ""]
    if document.get("output"):
        lines += [document["output"], ""]
    by_exercise = exercise_scores(course, document)
    for exercise in course.exercises:
        score, _ = by_exercise[exercise.module]
        lines += [f"## {exercise.module}: {exercise.title} ({score:g} / {exercise.points})", ""]
        for test in document["tests"]:
            if test["extra_data"]["exercise"] != exercise.module:
                continue
            mark = "passed" if test["status"] == "passed" else "FAILED"
            lines.append(f"- {mark} ({test['score']:g}/{test['max_score']:g}) `{test['name'].split(': ', 1)[-1]}`")
            if test["status"] != "passed" and test["output"]:
                lines += ["", "  ```text", *("  " + line for line in test["output"].splitlines()), "  ```", ""]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_reports(course: Course, folder: Path, name: str, document: dict) -> None:
    """Write ``results.json`` and ``feedback.md`` for one submission, both within the caps."""
    document = capped(course.limits, document)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    markdown = clip(feedback_markdown(course, name, document), course.limits.report_chars)
    (folder / "feedback.md").write_text(markdown.rstrip() + "\n", encoding="utf-8")


def capped(limits: Limits, document: dict) -> dict:
    """``document`` with each ``output`` cut to ``limits.feedback_chars``, and all of them
    together to ``limits.report_chars``: the later ones get what the earlier ones left."""
    left = limits.report_chars
    outputs = []
    for text in [document.get("output", ""), *(test["output"] for test in document["tests"])]:
        text = clip(text, min(limits.feedback_chars, max(left, 0)))
        left -= len(text)
        outputs.append(text)
    tests = [{**test, "output": output} for test, output in zip(document["tests"], outputs[1:])]
    return {**document, "output": outputs[0], "tests": tests}


def print_check(console: Console, course: Course, document: dict) -> None:
    """The self-check screen: a table per exercise, then each failed property's feedback.

    The table says what it counts: points come from the properties alone (a locked case is
    worth none), while the passed and failed columns count the locked cases too, if any ran.
    """
    document = capped(course.limits, document)
    what = "properties and locked cases" if any(map(_is_locked, document["tests"])) else "properties"
    table = Table(title=f"{course.title}: self-check (public {what})")
    for column in ("exercise", "points", f"{what} passed", f"failed {what}"):
        table.add_column(column)
    for exercise in course.exercises:
        tests = [t for t in document["tests"] if t["extra_data"]["exercise"] == exercise.module]
        failed = [t["extra_data"].get("property", t["name"]) for t in tests if t["status"] != "passed"]
        score = sum(t["score"] for t in tests)
        maximum = sum(t["max_score"] for t in tests)
        passed = len(tests) - len(failed)
        style = "green" if not failed else ("red" if passed == 0 else "yellow")
        table.add_row(exercise.module, f"{score:g} / {maximum:g}", f"[{style}]{passed} / {len(tests)}[/]",
                      "\n".join(failed[:6]) + (f"\n… {len(failed) - 6} more" if len(failed) > 6 else ""))
    console.print(table)
    failures: dict[str, list[str]] = {}
    for test in document["tests"]:
        if test["status"] != "passed":
            failures.setdefault(_without_summary(test["output"]), []).append(test)
    for tests in failures.values():
        names = tests[0]["name"] if len(tests) == 1 else f"{len(tests)} properties of {tests[0]['extra_data']['exercise']}"
        console.rule(f"[red]{names}")
        console.print(tests[0]["output"] if len(tests) == 1 else _without_summary(tests[0]["output"]),
                      markup=False, highlight=False)
    if document.get("output"):
        console.print(document["output"], markup=False, highlight=False)


def _is_locked(test: dict) -> bool:
    """Whether a test is a locked known-answer case (:func:`autograder.locked.check_locked` names them so)."""
    return test["extra_data"].get("property", "").startswith("locked case: ")


def _without_summary(output: str) -> str:
    """A property's feedback without its first line (the property's own summary)."""
    return output.split("\n", 1)[-1].strip()


def print_grades(console: Console, course: Course, rows: list[tuple[str, dict | None, str]]) -> None:
    """The batch summary: one row per submission, one column per exercise."""
    table = Table(title=f"{course.title}: grades")
    table.add_column("submission", no_wrap=True)
    labels = [e.module.split("_")[0] for e in course.exercises]
    if len(set(labels)) < len(labels):
        labels = [e.module for e in course.exercises]
    for label, exercise in zip(labels, course.exercises):
        table.add_column(f"{label}\n/{exercise.points}", justify="right")
    table.add_column(f"total\n/{course.max_score}", justify="right")
    table.add_column("note")
    for name, document, note in rows:
        if document is None:
            table.add_row(name, *[""] * len(course.exercises), "", f"[red]{note}")
            continue
        scores = exercise_scores(course, document)
        table.add_row(name, *(f"{scores[e.module][0]:g}" for e in course.exercises), f"{document['score']:g}", note)
    console.print(table)
