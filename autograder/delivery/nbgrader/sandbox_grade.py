"""nbgrader's autograde step: a notebook graded by the course's engine, in its sandbox.

:class:`SandboxGrade` stands where nbgrader's ``Execute`` would: the notebook is never run. It
stages the notebook as a submission (its code cells become the exercise module), grades it in
the course's grader process, one for the whole run, and writes the feedback and the score as
the grade cell's outputs. Before its first notebook it checks the sandbox as ``grade`` does.
docs/nbgrader.md says how the steps of the generated ``nbgrader_config.py`` fit together.
"""

from __future__ import annotations

import atexit
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from ...batch.canary import run_canary
from ...batch.grader import GraderProcess, Part
from ...config import Course, load_course
from ...errors import GraderError
from ...i18n import in_course_language
from ...intake.staging import stage
from ...isolation import isolation_note, require_isolation
from ...results import Grade
from .feedback import feedback_text

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
        grade = grade_notebook(course, module, nbformat.writes(nb), student)
        cells[0].outputs = grade_outputs(course, module, grade)
        if course.exercise(module).bonus:
            resources[EXTRA_CREDIT] = {"grade_id": cells[0].metadata["nbgrader"]["grade_id"],
                                       "score": float(grade.score)}
        for note in grade.notes_text.splitlines()[1:]:  # the first says which sandbox, as logged above
            self.log.warning("%s: %s", student, note)
        self.log.info("%s: %s scored %g / %s", student, module, grade.score, course.exercise(module).points_text)
        return nb, resources


EXTRA_CREDIT = "autograder_extra_credit"  # SandboxGrade -> SaveExtraCredit, in the notebook's resources


def grade_notebook(course: Course, module: str, notebook: str, student: str) -> Grade:
    """Grade the notebook ``notebook`` (its JSON) as the student's module ``module``; return its grade."""
    with tempfile.TemporaryDirectory(prefix="nbgrader-grade-") as scratch:
        folder = Path(scratch) / "submission"
        (folder / course.package).mkdir(parents=True)
        (folder / course.package / f"{module}.ipynb").write_text(notebook, encoding="utf-8")
        staged = stage(course, folder)
        try:
            grade, _seconds, problem = _grader(course).grade(student, staged, Path(scratch) / "report", Part([module]))
        finally:
            staged.remove()
        if grade is None:
            log = Path(scratch) / "report" / "grader.log"
            details = log.read_text(encoding="utf-8", errors="replace")[-4000:] if log.is_file() else ""
            raise GraderError(f"grading {student}'s {module} failed: {problem}\n{details}")
    return grade


def _grader(course: Course) -> GraderProcess:
    """The course's grader process: one for every notebook this nbgrader run hands over, of
    one student or of the whole class, as a batch keeps one per grading thread (student code
    never runs in it, and each grading starts afresh: :class:`~autograder.batch.grader.GraderProcess`).
    ``nbgrader autograde ex1`` for a class so starts one grader, not one per student."""
    if course.file not in _GRADER:
        _close_graders()
        _GRADER[course.file] = GraderProcess(course)
    return _GRADER[course.file]


def _close_graders() -> None:
    for grader in _GRADER.values():
        grader.close()
    _GRADER.clear()


_GRADER: dict[Path, GraderProcess] = {}
atexit.register(_close_graders)


@in_course_language
def grade_outputs(course: Course, module: str, grade: Grade) -> list:
    """The grade cell's outputs: the feedback on stdout, in the course's language, then the score
    as the cell's result, which nbgrader records (0 for a bonus exercise, whose score is extra
    credit: :class:`~.save_extra_credit.SaveExtraCredit`)."""
    exercise = course.exercise(module)
    score = 0 if exercise.bonus else min(grade.score, exercise.points)
    return [new_output("stream", name="stdout", text=feedback_text(module, exercise.points_text, grade)),
            new_output("execute_result", data={"text/plain": f"{score:g}"}, execution_count=None)]
