"""nbgrader end to end, with the real nbgrader command line: the generated course's student
notebooks are the stubs, three submissions (correct, partly wrong, tampering) are autograded
by the sandboxed engine, and the exported grades and the feedback are what they should be."""

import ast
import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.config import load_course
from tests.conftest import ROOT, autograder, hidden_properties, leaks

pytestmark = pytest.mark.slow

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


def nbgrader(course: Path, *args: str) -> str:
    """Run the nbgrader command line in the course folder, as an instructor would."""
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    env.pop("PYTHONPATH", None)
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout + run.stderr


def submit(course: Path, student: str, module: str, answers: dict[str, str], grade_cell=None) -> None:
    """Place a submission: the student's notebook with ``answers`` (grade id -> source) typed in."""
    notebook = nbformat.read(course / "release" / module / f"{module}.ipynb", as_version=4)
    for cell in notebook.cells:
        meta = cell.metadata["nbgrader"]
        if meta["grade_id"] in answers:
            cell.source = answers[meta["grade_id"]]
        if meta.get("grade") and grade_cell is not None:
            cell.source, cell.outputs = grade_cell
    folder = course / "submitted" / student / module
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{module}.ipynb")


def reference_answers(course: Path, module: str) -> dict[str, str]:
    """The answer cells of the instructor's source notebook: what a perfect student types."""
    notebook = nbformat.read(course / "source" / module / f"{module}.ipynb", as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in notebook.cells if c.metadata["nbgrader"]["solution"]}


def points_needing(module: str, function: str) -> int:
    """The points of the properties of ``module``'s suite that call ``student.<function>``."""
    tree = ast.parse(COURSE.path(COURSE.exercise(module).suite).read_text(encoding="utf-8"))
    total = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
                isinstance(n, ast.Attribute) and n.attr == function and ast.unparse(n.value) == "student"
                for n in ast.walk(node)):
            total += next(d.args[0].value for d in node.decorator_list if "points" in ast.unparse(d))
    return total


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
    started = time.monotonic()
    console = nbgrader(folder, "autograde", "*", "--student=correct")
    seconds = time.monotonic() - started
    print(f"nbgrader autograde of one student, all {len(POINTS)} exercises: {seconds:.1f} s")
    nbgrader(folder, "autograde", FIRST)
    nbgrader(folder, "generate_feedback", "*")
    nbgrader(folder, "export")
    return folder, seconds, console


def test_exported_grades_are_the_engine_s(course):
    folder, *_ = course
    with open(folder / "grades.csv", newline="") as table:
        scores = {(row["student_id"], row["assignment"]): float(row["score"]) for row in csv.DictReader(table)}
    expected = {("correct", module): points for module, points in POINTS.items()}
    expected[("partly_wrong", FIRST)] = POINTS[FIRST] - points_needing(FIRST, SKIPPED)
    expected[("tamper", FIRST)] = 0
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


def test_student_notebooks_run_top_to_bottom_in_a_kernel(course):
    folder, *_ = course
    notebooks = sorted(str(p.relative_to(folder)) for p in (folder / "release").glob("*/*.ipynb"))
    output = nbgrader(folder, "validate", *notebooks)
    assert output.count("Success!") == len(POINTS), output


def test_feedback_shows_public_properties_and_hides_hidden_ones(course):
    folder, *_ = course
    pages = sorted((folder / "feedback").glob("*/*/*.html"))
    assert len(pages) == len(POINTS) + 2
    hidden = hidden_properties()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "Hidden properties:" in text
        assert not [name for name, doc in hidden.items() if name in text or doc in text], page
    tampered = (folder / "feedback" / "tamper" / FIRST / f"{FIRST}.html").read_text(encoding="utf-8")
    assert "FORGED" not in tampered and f"{FIRST}: 0 / {POINTS[FIRST]} points" in tampered


def test_grading_leaves_no_tool_folders_behind(course):
    folder, *_ = course
    assert not [p for p in folder.rglob("*") if p.name in (".hypothesis", ".pytest_cache", "__pycache__")]
