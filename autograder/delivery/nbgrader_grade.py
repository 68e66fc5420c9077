"""nbgrader's autograde step for notebooks of :mod:`autograder.delivery.nbgrader_course`.

:class:`SandboxGrade` stands where nbgrader's ``Execute`` would: the notebook is never run.
It takes the exercise module out of the notebook (the answer cells and the read-only code,
:func:`~autograder.delivery.nbgrader_course.module_source`), stages it as a submission,
grades it in a fresh grader process (:func:`~autograder.grading.grade_in_child`, the
sandboxed engine, only that exercise's suite) and writes the outcome as the grade cell's
output: the feedback as text, the score as the cell's result, which nbgrader's
``SaveAutoGrades`` records as partial credit. Whatever a student writes in a cell, even code that redefines nbgrader's
or the engine's helpers, only ever runs in the sandbox, as the module under test.

Before its first notebook, the process checks the sandbox as ``grade`` does: it refuses
(:class:`~autograder.sandbox.IsolationRefused`) where no layer holds or the canary gets
through, unless ``AUTOGRADER_UNSAFE_NO_SANDBOX=1``, and logs the isolation in force.

The feedback names public properties and shows why they failed; hidden properties are only
counted, so the feedback HTML shows nothing of them.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from ..canary import run_canary
from ..config import Course, load_course
from ..errors import GraderError
from ..grading import grade_in_child
from ..results import Grade
from ..sandbox import isolation_note, require_isolation
from ..submission import stage
from .nbgrader_course import module_source

_CHECKED: set[Path] = set()  # the courses whose sandbox this process has checked


class SandboxGrade(NbGraderPreprocessor):
    """Grade a notebook's exercise module with the course's engine, in its sandbox."""

    course = Unicode(help="the course.yaml of the course whose engine, suites and solutions grade").tag(config=True)

    def preprocess(self, nb, resources):
        course = load_course(self.course)
        if course.root not in _CHECKED:
            if require_isolation().holds:
                run_canary(course)
            self.log.info("%s", isolation_note())
            _CHECKED.add(course.root)
        module = resources["nbgrader"]["notebook"]
        if module not in {e.module for e in course.exercises}:
            raise GraderError(f"{module}.ipynb is not the notebook of an exercise of {course.title!r}")
        cells = [cell for cell in nb.cells if utils.is_grade(cell)]
        if len(cells) != 1:
            raise GraderError(f"{module}.ipynb should have one grade cell, it has {len(cells)}")
        student = resources["nbgrader"]["student"]
        grade = grade_notebook(course, module, module_source(nb), student)
        cells[0].outputs = grade_outputs(course, module, grade)
        self.log.info("%s: %s scored %g / %d", student, module, grade.score, course.exercise(module).points)
        return nb, resources


def grade_notebook(course: Course, module: str, source: str, student: str) -> Grade:
    """Grade ``source`` as the student's module ``module``; return its grade."""
    with tempfile.TemporaryDirectory(prefix="nbgrader-grade-") as scratch:
        folder = Path(scratch) / "submission"
        (folder / course.package).mkdir(parents=True)
        (folder / course.package / f"{module}.py").write_text(source, encoding="utf-8")
        staged = stage(course, folder)
        try:
            grade, _seconds, problem = grade_in_child(course, student, staged, Path(scratch) / "report", [module])
        finally:
            staged.remove()
        if grade is None:
            log = Path(scratch) / "report" / "grader.log"
            details = log.read_text(encoding="utf-8", errors="replace")[-4000:] if log.is_file() else ""
            raise GraderError(f"grading {student}'s {module} failed: {problem}\n{details}")
    return grade


def grade_outputs(course: Course, module: str, grade: Grade) -> list:
    """The grade cell's outputs: the feedback on stdout, then the score as the cell's result."""
    points = course.exercise(module).points
    score = min(grade.score, points)
    return [new_output("stream", name="stdout", text=feedback_text(module, points, grade)),
            new_output("execute_result", data={"text/plain": f"{score:g}"}, execution_count=None)]


def feedback_text(module: str, points: int, grade: Grade) -> str:
    """What the student reads under the grade cell."""
    results = [r for r in grade.results if r.exercise == module]
    public = [r for r in results if not r.hidden]
    hidden = replace(grade, results=tuple(r for r in results if r.hidden))
    lines = [f"{module}: {grade.score:g} / {points} points. Your answer cells were graded as a module, "
             "in a sandbox, by the course's property suites.", grade.notes_text, ""]
    for result in public:
        mark = "passed" if result.passed else "FAILED"
        lines.append(f"{mark}  {result.name} ({result.score:g}/{result.points:g})")
        if not result.passed and result.output:
            lines += ["    " + line for line in result.output.splitlines()] + [""]
    if hidden.results:
        passed = [r for r in hidden.results if r.passed]
        lines.append(f"Hidden properties: {len(passed)} of {len(hidden.results)} passed "
                     f"({hidden.score:g} / {hidden.max_score:g} points).")
    return "\n".join(lines).rstrip() + "\n"
