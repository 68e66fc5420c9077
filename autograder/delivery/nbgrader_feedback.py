"""The feedback under an nbgrader grade cell: written for the student, and read back for the
class report (:mod:`autograder.reports.class_report.nbgrader`). Plain text, so that reading it
needs none of nbgrader's packages."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..results import Grade, PropertyResult


def feedback_text(module: str, points: str | int, grade: Grade) -> str:
    """What the student reads under the grade cell (``points``: the exercise's, as ``20`` or ``10 bonus``)."""
    results = [r for r in grade.results if r.exercise == module]
    public = [r for r in results if not r.hidden]
    hidden = replace(grade, results=tuple(r for r in results if r.hidden))
    lines = [f"{module}: {grade.score:g} / {points} points.", _HEADER, grade.notes_text, ""]
    for result in public:
        mark = PASSED if result.passed else FAILED
        lines.append(f"{mark}  {result.name} ({result.score:g}/{result.points:g})")
        if not result.passed and result.output:
            lines += [INDENT + line for line in result.output.splitlines()] + [""]
    if hidden.results:
        passed = [r for r in hidden.results if r.passed]
        lines.append(f"{HIDDEN} {len(passed)} of {len(hidden.results)} passed "
                     f"({hidden.score:g} / {hidden.max_score:g} points).")
    return "\n".join(lines).rstrip() + "\n"


PASSED, FAILED, INDENT, HIDDEN = "passed", "FAILED", "    ", "Hidden properties:"
_HEADER = "Your code cells were graded top to bottom, as one module, in a sandbox, by the course's properties."
_RESULT = re.compile(rf"^({PASSED}|{FAILED})  (\w+) \((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?)\)$")
_HIDDEN = re.compile(rf"^{HIDDEN} (\d+) of (\d+) passed \(")
_CUT = "... Output truncated ..."  # what nbgrader's LimitOutput puts where it cut a cell's output


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
    """The grade cell's feedback on ``module`` taken apart; None if ``text`` is not the engine's."""
    lines = text.splitlines()
    if len(lines) < 2 or not (lines[0].startswith(f"{module}: ") and lines[1] == _HEADER):
        return None
    public: list[PropertyResult] = []
    hidden = (0, 0)
    at = 2
    while at < len(lines):
        found = _RESULT.match(lines[at])
        at += 1
        if found:
            output = []
            while at < len(lines) and lines[at].startswith(INDENT):
                output.append(lines[at][len(INDENT):])
                at += 1
            score, points = _whole(found[3]), _whole(found[4])
            public.append(PropertyResult(module, found[2], points, score, found[1] == PASSED, False,
                                         "\n".join(output).rstrip()))
        elif counted := _HIDDEN.match(lines[at - 1]):
            hidden = (int(counted[1]), int(counted[2]))
    return Feedback(tuple(public), *hidden, cut=_CUT in lines)


def _whole(number: str) -> int:
    """Points as :func:`feedback_text` printed them (``%g``); a property's points are whole."""
    return round(float(number))
