"""An autograded nbgrader course (:mod:`autograder.delivery.nbgrader.course`) read for the class report.

It reads nbgrader's ``gradebook.db`` (read-only, with nbgrader's own
:class:`nbgrader.api.Gradebook`) for the scores, the grade cells of ``autograded/`` for the
engine's feedback (:func:`~autograder.delivery.nbgrader.feedback.feedback_text`), and the
``submitted/`` notebooks (converted in the limited helper) for code similarity, with
``release/`` as boilerplate. Hidden properties are counts only, and there are no grading times:
docs/class-report.md, "From nbgrader".
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

from ...config import Course
from ...delivery.nbgrader.feedback import read_feedback
from ...errors import GraderError
from ...intake.converting import notebook_modules
from ...intake.notebook import NotebookError
from ...results import Grade, PropertyResult
from .load import Batch, Entry, boilerplate_sources

GRADEBOOK = "gradebook.db"  # where nbgrader_config.py (nbgrader's default) keeps it: the course folder
AUTOGRADED, RELEASE = "autograded", "release"  # nbgrader's default step folders
# An autograded notebook holds the student's cells, and is read here for its grade cell's
# feedback: at most this size, which nbformat reads within the helper's limits (docs/security.md)
AUTOGRADED_BYTES = 24 << 20


def nbgrader_batch(course: Course, folder: Path) -> Batch:
    """Every student of the autograded nbgrader course ``folder``, as the class report reads them."""
    exercises = {e.module for e in course.exercises}
    submissions = _submissions(folder / GRADEBOOK, exercises)
    entries = [_entry(folder, student, graded) for student, graded in sorted(submissions.items())]
    if not entries:
        raise GraderError(f"{folder / GRADEBOOK} records no submission of an exercise of {course.title!r} yet: "
                          "run `nbgrader autograde` first")
    return Batch(entries, "nbgrader", notebook_sources,
                 boilerplate_sources(course) + released_sources(folder, sorted(exercises)))


def _submissions(database: Path, exercises: set[str]) -> dict[str, dict[str, tuple[float, str, list[str]]]]:
    """``student -> exercise -> (score, submitted at, notes)`` from nbgrader's gradebook, read only."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SQLAlchemyError

    found: dict[str, dict[str, tuple[float, str, list[str]]]] = {}
    try:
        # course_id "": nbgrader adds no course row (a read-only connection could not write one)
        gradebook = Gradebook(f"sqlite:///file:{quote(str(database.resolve()))}?mode=ro&uri=true", course_id="")
    except SQLAlchemyError as error:
        raise _unreadable(database, error) from None
    try:
        for assignment in gradebook.assignments:
            if assignment.name not in exercises:
                continue  # an assignment of the nbgrader course that is no exercise of this course
            for submission in assignment.submissions:
                notes = []
                if submission.needs_manual_grade:
                    notes.append(f"{assignment.name}: needs manual grading")
                if submission.late_submission_penalty:
                    notes.append(f"{assignment.name}: late, penalty {submission.late_submission_penalty:g} "
                                 "(not taken off the score, as nbgrader export reports it)")
                when = submission.timestamp.isoformat(sep=" ") if submission.timestamp else ""
                found.setdefault(submission.student_id, {})[assignment.name] = (float(submission.score), when, notes)
    except SQLAlchemyError as error:
        raise _unreadable(database, error) from None
    finally:
        gradebook.close()
    return found


def _unreadable(database: Path, error: Exception) -> GraderError:
    # nbgrader makes its tables where they are missing: on a read-only connection that fails as a write
    return GraderError(f"{database} cannot be read as nbgrader's gradebook (an empty file, another database, or "
                       f"another nbgrader version's?): {error.__class__.__name__}: {str(error).splitlines()[0]}")


def _entry(folder: Path, student: str, graded: dict[str, tuple[float, str, list[str]]]) -> Entry:
    """One student: the gradebook's scores, and what each autograded notebook's feedback says."""
    import nbformat
    from nbgrader import utils

    results: list[PropertyResult] = []
    hidden: dict[str, tuple[int, int]] = {}
    notes = [note for _, _, found in graded.values() for note in found]
    for module in graded:
        path = folder / AUTOGRADED / student / module / f"{module}.ipynb"
        try:
            if path.stat().st_size > AUTOGRADED_BYTES:
                notes.append(f"{module}: the autograded notebook is over {AUTOGRADED_BYTES >> 20} MB: not read")
                continue
            notebook = nbformat.read(path, as_version=4)
        except (OSError, ValueError, RecursionError) as error:
            notes.append(f"{module}: no autograded notebook to read ({error.__class__.__name__})")
            continue
        outputs = [output for cell in notebook.cells if utils.is_grade(cell) for output in cell.get("outputs", [])
                   if output.get("output_type") == "stream"]
        feedback = read_feedback(module, "".join(o.get("text", "") for o in outputs[:1]))
        if feedback is None:
            notes.append(f"{module}: the autograded notebook holds no feedback of the engine")
            continue
        if feedback.cut:
            notes.append(f"{module}: nbgrader cut the feedback (LimitOutput), so properties after the cut are missing")
        results += feedback.public
        hidden[module] = (feedback.hidden_passed, feedback.hidden_total)
    scores = {module: score for module, (score, _, _) in graded.items()}
    when = max(at for _, at, _ in graded.values())
    grade = Grade(tuple(results), tuple(notes), None)
    return Entry(student, sum(scores.values()), None, when, "; ".join(notes), grade, graded=True,
                 exercise_scores=scores, hidden=hidden)


def notebook_sources(paths: list[Path], modules: list[str]) -> dict[str, dict[str, str]]:
    """``student -> module -> source`` from students' folders as nbgrader lays them out
    (``submitted/<student>/<module>/<module>.ipynb``): the module each notebook's code cells make."""
    def converted(path: Path) -> dict[str, str]:
        handed_in = [module for module in modules if (path / module / f"{module}.ipynb").is_file()]
        made = notebook_modules([path / module / f"{module}.ipynb" for module in handed_in])
        # one that is not a notebook, or that went past the helper's limits: nothing to compare
        return {module: result.source for module, result in zip(handed_in, made, strict=True)
                if not isinstance(result, NotebookError)}

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:  # a helper per student, a few at once
        return dict(zip((path.name for path in paths), pool.map(converted, paths), strict=True))


def released_sources(folder: Path, modules: list[str]) -> list[tuple[str, str]]:
    """The modules the notebooks handed out make (given code, signatures, docstrings): boilerplate."""
    found = notebook_sources([folder / RELEASE], modules).get(RELEASE, {})
    return [(f"{RELEASE}/{module}", source) for module, source in sorted(found.items())]
