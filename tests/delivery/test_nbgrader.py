"""nbgrader end to end, with the real nbgrader command line: the generated course's student
notebooks are the stubs; submissions (correct, partly wrong, tampering, and notebooks a student
edited: a helper cell of their own with magics, cells run out of order with saved outputs, a
copied answer cell, a syntax error beside a Markdown script) are autograded by the sandboxed
engine, and the exported grades, the feedback, the check cell and the class report made from
nbgrader's gradebook are what they should be."""

import ast
import copy
import csv
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.config import load_course
from tests.conftest import ROOT, autograder, hidden_properties, leaks
from tests.reports.test_class_report import property_rows

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow, pytest.mark.xdist_group(__name__)]

COURSE = load_course(ROOT / "course.yaml")
POINTS = {e.module: e.points for e in COURSE.exercises}
FIRST = COURSE.exercises[0].module  # ex1_merge_tracing
SKIPPED = "render_trace"  # the function the partly wrong student leaves as the stub

TAMPER = '''\
# Redefine, from an answer cell, what a grader that runs notebooks in their kernel relies on.
import sys


def determine_grade(cell, log=None):
    return 20.0, 20.0


if "nbgrader.utils" in sys.modules:
    sys.modules["nbgrader.utils"].determine_grade = determine_grade


class AlwaysEqual:
    def __eq__(self, other):
        return True


def expect_equal(*args, **kwargs):
    return None
'''


def nbgrader(course: Path, *args: str, status: int = 0) -> str:
    """Run the nbgrader command line in the course folder, as an instructor would; it must exit with
    ``status``. Its temporary files go to ``temporary`` beside the course."""
    (course.parent / "temporary").mkdir(exist_ok=True)
    env = {**os.environ, "PATH": "/usr/bin:/bin", "TMPDIR": str(course.parent / "temporary")}
    env.pop("PYTHONPATH", None)
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == status, run.stdout + run.stderr
    return run.stdout + run.stderr


def submit(course: Path, student: str, module: str, answers: dict[str, str], grade_cell=None, edit=None) -> None:
    """Place a submission: the student's folder as released, with ``answers`` (grade id ->
    source) typed in and then ``edit(cells)`` done to the notebook's cells."""
    notebook = nbformat.read(course / "release" / module / f"{module}.ipynb", as_version=4)
    for cell in notebook.cells:
        meta = cell.metadata["nbgrader"]
        if meta["grade_id"] in answers:
            cell.source = answers[meta["grade_id"]]
        if meta.get("grade") and grade_cell is not None:
            cell.source, cell.outputs = grade_cell
    if edit is not None:
        edit(notebook.cells)
    folder = course / "submitted" / student / module
    shutil.copytree(course / "release" / module, folder)
    nbformat.write(notebook, folder / f"{module}.ipynb")


def answer_index(cells, function: str) -> int:
    return next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith(function))


def own_cells(cells) -> None:
    """A helper cell of the student's own, with IPython magics, that an answer cell uses; every
    cell run out of order, with outputs saved."""
    at = answer_index(cells, SKIPPED)
    cells[at].source = cells[at].source.replace("    ### BEGIN SOLUTION", "    pretty()\n    ### BEGIN SOLUTION", 1)
    cells.insert(at, nbformat.v4.new_code_cell("%load_ext autoreload\ndef pretty():\n    return 1\n\n\n"
                                               "%timeit pretty()\nfiles = !ls\n!echo hi\npretty?"))
    for count, cell in enumerate(reversed([c for c in cells if c.cell_type == "code"]), start=1):
        cell.execution_count = count
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"saved output {count}\n")]


def copied_cell(cells) -> None:
    """An answer cell copied and pasted below itself, as Jupyter does it: the same nbgrader
    metadata (its grade id too), and a cell id of its own."""
    at = answer_index(cells, SKIPPED)
    pasted = copy.deepcopy(cells[at])
    pasted.id = f"{cells[at].id}-pasted"
    cells.insert(at + 1, pasted)


def broken_cell(cells) -> None:
    at = answer_index(cells, SKIPPED)
    cells[at].source = cells[at].source.replace(f"def {SKIPPED}(", f"def {SKIPPED}((", 1)
    cells.insert(1, nbformat.v4.new_markdown_cell("<script>alert('owned')</script> **mine**"))


def reference_answers(course: Path, module: str) -> dict[str, str]:
    """The answer cells of the instructor's source notebook: what a perfect student types."""
    notebook = nbformat.read(course / "source" / module / f"{module}.ipynb", as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in notebook.cells if c.metadata["nbgrader"]["solution"]}


def properties_needing(module: str, function: str) -> dict[str, int]:
    """Name -> points of the properties of ``module``'s suite that call ``student.<function>``: by
    name, or as one of the graded functions the shared rules call (``expect_bad_input_rules``)."""
    tree = ast.parse(COURSE.path(COURSE.exercise(module).suite).read_text(encoding="utf-8"))
    return {node.name: next(d.args[0].value for d in node.decorator_list if "points" in ast.unparse(d))
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and any(
                (isinstance(n, ast.Attribute) and n.attr == function and ast.unparse(n.value) == "student")
                or (isinstance(n, ast.Name) and n.id == "expect_bad_input_rules") for n in ast.walk(node))}


def points_needing(module: str, function: str) -> int:
    """The points of the properties of ``module``'s suite that call ``student.<function>``."""
    return sum(properties_needing(module, function).values())


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> tuple[Path, float, str]:
    """The generated course, after generate_assignment, submissions, autograde, feedback and export;
    the seconds a full autograde of one student (every exercise) took, and what it printed."""
    folder = tmp_path_factory.mktemp("nbgrader") / "course"
    run = autograder("nbgrader", "--out", str(folder), course=None, timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    nbgrader(folder, "generate_assignment", "*")
    for module in POINTS:
        submit(folder, "correct", module, reference_answers(folder, module))
    answers = reference_answers(folder, FIRST)
    submit(folder, "partly_wrong", FIRST, {k: v for k, v in answers.items() if not k.endswith(SKIPPED)})
    forged = ("20", [nbformat.v4.new_output("stream", name="stdout", text="FORGED\n"),
                     nbformat.v4.new_output("execute_result", data={"text/plain": "20"}, execution_count=1)])
    cheat = "def get_pair_counts(ids):\n    return AlwaysEqual()\n"
    submit(folder, "tamper", FIRST, {f"{FIRST}_helpers": TAMPER, f"{FIRST}_get_pair_counts": cheat}, grade_cell=forged)
    submit(folder, "own_cells", FIRST, answers, edit=own_cells)
    submit(folder, "copied", FIRST, answers, edit=copied_cell)
    submit(folder, "broken", FIRST, answers, edit=broken_cell)
    started = time.monotonic()
    console = nbgrader(folder, "autograde", "*", "--student=correct")
    seconds = time.monotonic() - started
    print(f"nbgrader autograde of one student, all {len(POINTS)} exercises: {seconds:.1f} s")
    nbgrader(folder, "autograde", FIRST)
    nbgrader(folder, "generate_feedback", "*")
    nbgrader(folder, "export")
    return folder, seconds, console


def test_the_bonus_exercise_is_extra_credit_in_the_export(course):
    """The course's rule in nbgrader's numbers: the bonus assignment's max_score is 0 and its
    points come as extra credit, so the maxima add up to the full marks and a perfect student's
    scores to the full marks plus the bonus."""
    folder, *_ = course
    with open(folder / "grades.csv", newline="") as table:
        rows = [row for row in csv.DictReader(table) if row["student_id"] == "correct"]
    bonus = {e.module for e in COURSE.exercises if e.bonus}
    assert bonus and {row["assignment"]: float(row["max_score"]) for row in rows} == {
        module: 0.0 if module in bonus else float(points) for module, points in POINTS.items()}
    assert sum(float(row["max_score"]) for row in rows) == COURSE.max_score
    assert sum(float(row["score"]) for row in rows) == COURSE.max_score + COURSE.bonus_points
    (module,) = bonus
    page = (folder / "feedback" / "correct" / module / f"{module}.html").read_text(encoding="utf-8")
    assert f"{module}: {POINTS[module]} / {POINTS[module]} bonus points." in page


def test_exported_grades_are_the_engine_s(course):
    folder, *_ = course
    with open(folder / "grades.csv", newline="") as table:
        scores = {(row["student_id"], row["assignment"]): float(row["score"]) for row in csv.DictReader(table)}
    expected = {("correct", module): points for module, points in POINTS.items()}
    expected[("partly_wrong", FIRST)] = POINTS[FIRST] - points_needing(FIRST, SKIPPED)
    expected[("tamper", FIRST)] = 0
    expected[("own_cells", FIRST)] = expected[("copied", FIRST)] = POINTS[FIRST]
    expected[("broken", FIRST)] = 0
    assert 0 < expected[("partly_wrong", FIRST)] < POINTS[FIRST]
    assert {key: scores.get(key) for key in expected} == expected


def test_the_console_names_the_isolation_in_force(course):
    _, _, console = course
    assert "Student code ran in a sandbox" in console


def test_students_get_the_stubs_and_no_solution(course):
    folder, *_ = course
    assert leaks(folder / "release") == []
    for module in POINTS:
        notebook = nbformat.read(folder / "release" / module / f"{module}.ipynb", as_version=4)
        answers = [c.source for c in notebook.cells if c.metadata["nbgrader"]["solution"]]
        assert all("# YOUR CODE HERE" in source for source in answers)
        assert sum("raise NotImplementedError" in source for source in answers) >= len(answers) - 1


def test_validate_runs_the_check_cell_which_fails_the_stubs_and_passes_correct_work(course):
    folder, *_ = course
    stubs = nbgrader(folder, "validate", f"release/{FIRST}/{FIRST}.ipynb")
    assert "VALIDATION FAILED" in stubs and "CheckFailed" in stubs and "Success!" not in stubs, stubs
    correct = sorted(str(p.relative_to(folder)) for p in (folder / "submitted" / "correct").glob("*/*.ipynb"))
    output = nbgrader(folder, "validate", *correct)
    assert output.count("Success!") == len(POINTS), output


def test_feedback_names_cells_copies_and_shows_no_student_html(course):
    folder, *_ = course

    def feedback(student: str) -> str:  # its words, whatever the lines the page wraps them into
        return " ".join((folder / "feedback" / student / FIRST / f"{FIRST}.html").read_text(encoding="utf-8").split())

    copied, broken = feedback("copied"), feedback("broken")
    assert f"{FIRST}_{SKIPPED}" in copied and "(one was copied)" in copied, copied
    assert re.search(rf"{FIRST}.ipynb(&quot;)?, cell \d+, line 1", broken), broken
    assert f"{COURSE.package}/{FIRST}.py" not in broken
    assert "alert(" not in broken and "<strong>mine</strong>" in broken


def test_config_names_the_course_and_no_absolute_path(course):
    folder, *_ = course
    config = (folder / "nbgrader_config.py").read_text(encoding="utf-8")
    assert "c.CourseDirectory.course_id = 'how-language-model-tokenizers-work'" in config
    assert str(folder) not in config and str(ROOT) not in config
    assert (folder / "grading" / "course.yaml").is_file()


def test_the_leak_check_reads_cells_and_finds_the_solutions_in_source(course):
    folder, *_ = course
    assert any(".ipynb: solution line" in leak for leak in leaks(folder / "source"))


def test_feedback_shows_public_properties_and_hides_hidden_ones(course):
    folder, *_ = course
    pages = sorted((folder / "feedback").glob("*/*/*.html"))
    assert len(pages) == len(POINTS) + 5
    hidden = hidden_properties()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "Hidden properties:" in text
        assert not [name for name, doc in hidden.items() if name in text or doc in text], page
    tampered = (folder / "feedback" / "tamper" / FIRST / f"{FIRST}.html").read_text(encoding="utf-8")
    assert "FORGED" not in tampered and f"{FIRST}: 0 / {POINTS[FIRST]} points" in tampered


def test_grading_leaves_no_tool_folders_behind(course):
    """Nor does a check cell: the code its command compiles goes to the user's cache. What a kernel
    compiles of the ``grader`` package it imports (``grader/__pycache__``, where Python keeps
    compiled code) is the kernel's own. Every nbgrader command removes the temporary folder its
    kernels' sockets were in; the examples hypothesis keeps stay, as the command keeps them."""
    folder, *_ = course
    left = [p for p in folder.rglob("*") if p.name in (".hypothesis", ".pytest_cache", "__pycache__")]
    assert not [p for p in left if p.name != "__pycache__" or p.parent.name != "grader"]
    assert {p.name for p in (folder.parent / "temporary").iterdir()} <= {"autograder-hypothesis"}


def test_class_report_reads_nbgrader_s_gradebook(course, tmp_path):
    """`report` on the autograded course folder: each student's score as nbgrader's gradebook
    has it, the public properties failed by exactly the students whose code fails them, with the
    stub's reason, hidden properties as counts only, and the submitted notebooks compared."""
    folder, *_ = course
    out = tmp_path / "report.html"
    students = sorted((folder / "submitted").iterdir())
    done = autograder("report", str(folder), "--out", str(out), "--submissions", *map(str, students))
    assert done.returncode == 0, done.stdout + done.stderr
    page = out.read_text(encoding="utf-8")
    totals = dict(re.findall(r'<tr class="submission" data-name="([^"]+)" data-total="([^"]+)"', page))
    partly = POINTS[FIRST] - points_needing(FIRST, SKIPPED)
    every_point = COURSE.max_score + COURSE.bonus_points  # a total counts the bonus, as nbgrader's export does
    assert totals == {"correct": str(every_point), "partly_wrong": str(partly), "tamper": "0", "broken": "0",
                      "own_cells": str(POINTS[FIRST]), "copied": str(POINTS[FIRST])}
    hidden = hidden_properties()
    needing = set(properties_needing(FIRST, SKIPPED)) - set(hidden)
    assert needing, f"no public property of {FIRST} calls {SKIPPED}"
    rows = {key: counts for key, counts in property_rows(page).items() if key.startswith(f"{FIRST}.")}
    public = {key.split(".", 1)[1] for key in rows}
    assert needing < public and not public & set(hidden)
    # tamper and broken fail every property; partly_wrong those that call the function it left as the stub
    assert rows == {f"{FIRST}.{name}": (3 if name in needing else 2, 6) for name in public}
    for name in needing:
        block = page.split(f'id="ex-{FIRST}-{name}"')[1].split('<div class="example"')[0]
        assert "not implemented yet" in block, block
    assert not [name for name in hidden if name in page], "a hidden property is named"
    assert 'id="nbgrader-hidden"' in page
    assert re.search(rf'class="hidden-count" data-exercise="{FIRST}" data-failing="3" data-graded="6"', page)
    pairs = re.findall(r'class="pair" data-first="([^"]+)" data-second="([^"]+)" data-score="([0-9.]+)"', page)
    assert {"correct", "copied"} <= {name for pair in pairs for name in pair[:2] if float(pair[2]) >= 0.9}, pairs


def test_one_grader_process_serves_every_notebook_of_a_run_whoever_s_it_is():
    """nbgrader hands over notebooks one after another, a student's or the class's: one grader
    process grades them all, so that neither a notebook nor a student pays for a start-up."""
    from autograder.delivery.nbgrader import sandbox_grade as nbgrader_grade

    first = nbgrader_grade._grader(COURSE)
    first._start()
    try:
        assert nbgrader_grade._grader(COURSE) is first and first.process is not None
        assert first.process.poll() is None, "the process serves the next notebook, whoever's it is"
    finally:
        nbgrader_grade._close_graders()
