"""The feedback under an nbgrader grade cell: written for the student, in the language spoken
(the course's, at grading), and read back for the class report
(:mod:`autograder.reports.class_report.nbgrader`) in whichever language it was written: its own
lines are read against their message in every catalog (:func:`autograder.i18n.read_back`).
Plain text, so that reading it needs none of nbgrader's packages."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...i18n import N_, _, every_language, read_back
from ...results import Grade, PropertyResult


def feedback_text(module: str, points: str | int, grade: Grade) -> str:
    """What the student reads under the grade cell (``points``: the exercise's, as ``20`` or
    ``10 bonus``), in the language spoken now."""
    results = [r for r in grade.results if r.exercise == module]
    public = [r for r in results if not r.hidden]
    hidden = replace(grade, results=tuple(r for r in results if r.hidden))
    lines = [_(SCORE).format(module=module, score=grade.score, points=points), _(HEADER), grade.notes_text, ""]
    for result in public:
        said = _(PASSED if result.passed else FAILED)
        lines.append(said.format(name=result.name, score=result.score, points=result.points))
        if not result.passed and result.output:
            lines += [INDENT + line for line in result.output.splitlines()] + [""]
    if hidden.results:
        lines.append(_(HIDDEN).format(passed=sum(r.passed for r in hidden.results), total=len(hidden.results),
                                      score=hidden.score, points=hidden.max_score))
    return "\n".join(lines).rstrip() + "\n"


SCORE = N_("{module}: {score:g} / {points} points.")
HEADER = N_("Your code cells were graded top to bottom, as one module, in a sandbox, by the course's properties.")
PASSED = N_("passed  {name} ({score:g}/{points:g})")
FAILED = N_("FAILED  {name} ({score:g}/{points:g})")
HIDDEN = N_("Hidden properties: {passed} of {total} passed ({score:g} / {points:g} points).")
LINES = (SCORE, PASSED, FAILED, HIDDEN)  # the lines of the engine's own, which read_feedback reads back
INDENT = "    "
_NUMBER = r"\d+(?:\.\d+)?"
_FIELDS = {"module": r"\w+", "name": r"\w+", "score": _NUMBER, "passed": r"\d+", "total": r"\d+"}
_CUT = "... Output truncated ..."  # what nbgrader's LimitOutput puts where it cut a cell's output


def read_line(message: str, line: str) -> re.Match | None:
    """``line`` read back as ``message`` in any language (an exercise's points are text: ``10 bonus``)."""
    return read_back(message, line, **_FIELDS, points=".+" if message == SCORE else _NUMBER)


@dataclass(frozen=True)
class Feedback:
    """What :func:`feedback_text` wrote, read back: each public property's result (its
    output, with the counterexample, where it failed) and how many hidden properties passed.
    Which hidden property failed is not in it: the feedback counts them only."""

    public: tuple[PropertyResult, ...]
    hidden_passed: int
    hidden_total: int
    cut: bool  # nbgrader's LimitOutput cut the text, so properties after the cut are missing


def read_feedback(module: str, text: str) -> Feedback | None:
    """The grade cell's feedback on ``module`` taken apart, in whichever language it was written;
    None if ``text`` is not the engine's."""
    lines = text.splitlines()
    score = read_line(SCORE, lines[0]) if lines else None
    if len(lines) < 2 or not (score and score["module"] == module and lines[1] in every_language(HEADER)):
        return None
    public: list[PropertyResult] = []
    hidden = (0, 0)
    at = 2
    while at < len(lines):
        found, passed = _result(lines[at])
        at += 1
        if found:
            output = []
            while at < len(lines) and lines[at].startswith(INDENT):
                output.append(lines[at][len(INDENT):])
                at += 1
            public.append(PropertyResult(module, found["name"], _whole(found["points"]), _whole(found["score"]),
                                         passed, False, "\n".join(output).rstrip()))
        elif counted := read_line(HIDDEN, lines[at - 1]):
            hidden = (int(counted["passed"]), int(counted["total"]))
    return Feedback(tuple(public), *hidden, cut=_CUT in lines)


def _result(line: str) -> tuple[re.Match | None, bool]:
    """A public property's line of the feedback read back, and whether it passed."""
    passed = read_line(PASSED, line)
    return passed or read_line(FAILED, line), passed is not None


def _whole(number: str) -> int:
    """Points as :func:`feedback_text` printed them (``%g``); a property's points are whole."""
    return round(float(number))
