"""nbgrader's autograde step for notebooks of :mod:`autograder.delivery.nbgrader_course`.

:class:`SandboxGrade` stands where nbgrader's ``Execute`` would: the notebook is never run.
It stages the notebook as a submission, so that every code cell but the grade cell, in
order and with IPython's syntax made plain Python, becomes the exercise module
(:mod:`autograder.intake.notebook`); grades it in the course's grader process (a
:class:`~autograder.batch.grader.GraderProcess`, the sandboxed engine, only that exercise's suite;
one process serves every notebook of the run) and writes the outcome as the grade cell's
output: the feedback as text, the score as the cell's result, which nbgrader's
``SaveAutoGrades`` records as partial credit. Whatever a student writes in a cell, even code that redefines nbgrader's
or the engine's helpers, only ever runs in the sandbox, as the module under test.

Before its first notebook, the process checks the sandbox as ``grade`` does: it refuses
(:class:`~autograder.isolation.IsolationRefused`) where no layer holds or the canary gets
through, unless ``AUTOGRADER_UNSAFE_NO_SANDBOX=1``, and logs the isolation in force.

The feedback, in the course's language, names public properties and shows why they failed,
naming the notebook's cells; hidden properties are only counted, so the feedback HTML shows
nothing of them. It is all that nbgrader keeps of a grading besides the score:
:mod:`autograder.delivery.nbgrader_feedback` writes it and takes it apart again, in whichever
language it was written, for the class report.

A bonus exercise is extra credit as nbgrader keeps it: its grade cell is worth 0 points, and
:class:`SaveExtraCredit`, after nbgrader's ``SaveAutoGrades``, records the engine's score as
the cell's extra credit (``Grade.extra_credit``, the field the formgrader's "extra credit"
box sets). So ``nbgrader export`` gives the bonus assignment a ``max_score`` of 0 and a
``score`` of the points earned, and a student's scores add up to at most the course's full
marks plus the bonus.

More steps of the generated ``nbgrader_config.py``: :class:`SeparateCopies` stands where
nbgrader's ``DeduplicateIds`` would, so that a copied answer cell neither stops the autograde
nor goes unnamed in the feedback; :class:`SanitizeHTML` strips raw HTML and scripts from
student Markdown and HTML outputs (with ``nh3``) before nbconvert renders a page, and
:class:`FeedbackPage` shows the grade cell's feedback wrapped to the page, without the bare
score nbgrader reads from it (in a right-to-left course as HTML that reads right to left, its
code left to right, kept by :func:`clean`, the page's cleaner); :class:`QuietCopies` keeps
nbgrader's line per file copied (hundreds per notebook: the ``grader/`` folder beside it) off
the console.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import tempfile
import textwrap
from pathlib import Path

import nbformat
import nh3
from nbconvert.filters import markdown2html
from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from .. import bidi
from ..batch.canary import run_canary
from ..batch.grader import GraderProcess, Part
from ..config import Course, load_course
from ..errors import GraderError
from ..i18n import in_course_language
from ..intake.notebook import MARK
from ..intake.staging import stage
from ..isolation import isolation_note, require_isolation
from ..results import Grade
from .nbgrader_feedback import INDENT, LINES, feedback_text, read_line

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


class SaveExtraCredit(NbGraderPreprocessor):
    """The score of a bonus exercise as the extra credit of its grade cell (worth 0 points) in
    nbgrader's gradebook; it runs after ``SaveAutoGrades``, which made the cell's grade."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        extra = resources.get(EXTRA_CREDIT)
        if extra is None:
            return nb, resources
        names = resources["nbgrader"]
        with Gradebook(names["db_url"]) as gradebook:
            grade = gradebook.find_grade(extra["grade_id"], names["notebook"], names["assignment"], names["student"])
            grade.extra_credit = extra["score"]
            gradebook.db.commit()
        return nb, resources


EXTRA_CREDIT = "autograder_extra_credit"  # SandboxGrade -> SaveExtraCredit, in the notebook's resources


class QuietCopies(logging.Filter):
    """Leaves out nbgrader's "Copying SOURCE -> DESTINATION" lines, one per file of each notebook's
    folder; every other line of the log stays."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != "Copying %s -> %s"


class FeedbackPage(Preprocessor):
    """The grade cell as a page shows it (feedback, formgrader): the engine's feedback with every
    line longer than :data:`PAGE_COLUMNS` wrapped under its own indentation, and without the bare
    score that nbgrader reads from the cell's result (the page heads the cell with the score).
    In a right-to-left course the feedback is HTML that reads right to left, its code, calls,
    numbers and falsifying examples left to right (:func:`right_to_left`)."""

    course = Unicode("", help="the course.yaml of the grading copy, whose language the page speaks").tag(config=True)

    def preprocess(self, nb, resources):
        self.rtl = bool(self.course) and bidi.right_to_left(load_course(self.course).language)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if utils.is_grade(cell) and cell.cell_type == "code":
            shown = right_to_left if self.rtl else wrapped
            cell.outputs = [shown(output) for output in cell.outputs if output.get("output_type") != "execute_result"]
        return cell, resources


PAGE_COLUMNS = 100


def wrapped(output):
    """A stream output with its long lines wrapped at :data:`PAGE_COLUMNS`; any other output as it is."""
    if output.get("output_type") != "stream":
        return output
    lines = [part for line in output.get("text", "").split("\n") for part in _wrap(line)]
    return new_output("stream", name=output.get("name", "stdout"), text="\n".join(lines))


def _wrap(line: str) -> list[str]:
    """``line`` wrapped at :data:`PAGE_COLUMNS`, under its own indentation."""
    if len(line) <= PAGE_COLUMNS:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")))
    return textwrap.wrap(line, PAGE_COLUMNS, subsequent_indent=indent + INDENT, break_long_words=False,
                         break_on_hyphens=False)


def right_to_left(output):
    """A stream output as HTML that reads right to left: each line of the engine's own (the
    score, a property's result, the hidden ones' count) with its values in ``<bdi>``, each other
    line as :func:`autograder.bidi.failure_html` shows it (a line of code wrapped as
    :func:`wrapped` wraps it), each property's output in a ``<blockquote>`` under its line; any
    other output as it is."""
    if output.get("output_type") != "stream":
        return output
    parts = []
    # a paragraph of prose wraps on the page, a line of code is wrapped here
    lines = [part for line in output.get("text", "").split("\n") for part in
             ([line] if bidi.has_prose(line) else _wrap(line))]
    runs = itertools.groupby(lines, key=lambda line: line.startswith(INDENT) or not line)
    for indented, run in runs:
        text = "\n".join(line.removeprefix(INDENT) for line in run)
        if indented and text.strip():
            parts.append(f"<blockquote>{bidi.failure_html(text)}</blockquote>")
        elif not indented:
            parts += [_line_html(line) for line in text.split("\n")]
    return new_output("display_data", data={"text/html": '<div dir="rtl">' + "\n".join(parts) + "</div>"})


def _line_html(line: str) -> str:
    """A line of the feedback outside a property's output, as HTML."""
    for message in LINES:
        if found := read_line(message, line):
            return f"<p>{bidi.isolated(line, [found.span(field) for field in found.groupdict()])}</p>"
    return bidi.failure_html(line)


def clean(page: str) -> str:
    """HTML as a page may show it: nh3's safe tags and attributes, and ``dir`` on any tag, so that
    right-to-left text keeps its direction and the code in it its own. It is the page's
    ``clean_html`` filter too (nbgrader_config.py), in place of nbconvert's, which drops ``dir``.
    An image keeps only a ``data:`` source: one fetched from elsewhere would tell its server that,
    and when, the instructor read the student's page."""
    return nh3.clean(page, attributes={**nh3.ALLOWED_ATTRIBUTES, "*": {"dir"}},
                     url_schemes={*nh3.ALLOWED_URL_SCHEMES, "data"}, attribute_filter=_embedded_images_only)


def _embedded_images_only(tag: str, attribute: str, value: str) -> str | None:
    """A source only as an embedded image; a ``data:`` URL nowhere else."""
    embedded = value.startswith("data:image/")
    if attribute in ("src", "srcset"):
        return value if embedded else None
    return None if value.startswith("data:") else value


class SeparateCopies(NbGraderPreprocessor):
    """nbgrader's ``DeduplicateIds``, done so that autograding goes on (nbgrader#1083): of the
    cells that share an nbgrader id (a copied answer cell), the last keeps it; the others
    become plain code cells, marked so that :mod:`autograder.intake.notebook` still names them in the
    student's feedback. (``DeduplicateIds`` leaves them an empty ``nbgrader`` entry, which
    ``CheckCellMetadata`` then refuses as an old metadata format, stopping the autograde.)"""

    def preprocess(self, nb, resources):
        seen: set[str] = set()
        for cell in reversed(nb.cells):
            if utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell):
                grade_id = cell.metadata["nbgrader"]["grade_id"]
                if grade_id in seen:
                    self.log.warning("cell %r exists more than once: the copy is graded as a plain code cell",
                                     grade_id)
                    cell.metadata[MARK] = grade_id
                    del cell.metadata["nbgrader"]
                seen.add(grade_id)
        return nb, resources


class SanitizeHTML(Preprocessor):
    """Student Markdown rendered and cleaned by nh3 (no raw HTML, no scripts, no ``javascript:``
    links); HTML outputs cleaned the same way, and scripts among the outputs dropped."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            cell.source = clean(markdown2html(cell.source))
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for kind in [k for k in data if "javascript" in k or k == "text/markdown"]:
                del data[kind]
            if "text/html" in data:
                data["text/html"] = clean(data["text/html"])
        return cell, resources


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
    credit: :class:`SaveExtraCredit`)."""
    exercise = course.exercise(module)
    score = 0 if exercise.bonus else min(grade.score, exercise.points)
    return [new_output("stream", name="stdout", text=feedback_text(module, exercise.points_text, grade)),
            new_output("execute_result", data={"text/plain": f"{score:g}"}, execution_count=None)]
