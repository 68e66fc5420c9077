"""``nbgrader-autograde``: a small class autograded both ways, by nbgrader's own ``nbgrader autograde``
and by the command on two jobs, gives the same gradebook (read with nbgrader's API), the same
export and the same feedback pages; a broken notebook is its student's row; a second run leaves
what is autograded and unchanged, and autogrades a resubmission; a gradebook that another process
keeps busy for longer than SQLite's own wait fails nobody."""

import csv
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder.config import load_course
from tests.conftest import ROOT, autograder
from tests.delivery.test_nbgrader import FIRST, POINTS, SKIPPED, nbgrader, reference_answers, submit

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow, pytest.mark.xdist_group(__name__)]

COURSE = load_course(ROOT / "course.yaml")
BONUS = next(e.module for e in COURSE.exercises if e.bonus)  # its score is nbgrader's extra credit
ASSIGNMENTS = [FIRST, BONUS]
COURSE_ID = "how-language-model-tokenizers-work"


def make_class(folder: Path) -> None:
    """Four students' submissions of two assignments: one right, one partly, one the stubs as released,
    one whose first notebook is not a notebook at all (its other one is right); each with the time
    ``nbgrader collect`` records."""
    for module in ASSIGNMENTS:
        answers = reference_answers(folder, module)
        submit(folder, "correct", module, answers)
        submit(folder, "partly", module, {k: v for k, v in answers.items() if not k.endswith(SKIPPED)}
               if module == FIRST else {k: v for k, v in answers.items() if k.endswith("helpers")})
        submit(folder, "stubs", module, {})
        submit(folder, "broken", module, answers)
    for submitted in (folder / "submitted").glob("*/*"):
        (submitted / "timestamp.txt").write_text("2030-01-01 09:00:00.000000 UTC", encoding="utf-8")
    (folder / "submitted" / "broken" / FIRST / f"{FIRST}.ipynb").write_text('{"cells": [', encoding="utf-8")


@pytest.fixture(scope="module")
def courses(tmp_path_factory) -> tuple[Path, Path, str]:
    """The class autograded by ``nbgrader autograde`` and, in a copy, by ``nbgrader-autograde --jobs 2``,
    then feedback generated and grades exported in both; what the command printed."""
    base = tmp_path_factory.mktemp("nbgrader-class")
    theirs, ours = base / "theirs", base / "ours"
    run = autograder("nbgrader", "--out", str(theirs), course=None, timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    for module in ASSIGNMENTS:
        nbgrader(theirs, "generate_assignment", module)
    make_class(theirs)
    shutil.copytree(theirs, ours, symlinks=True)
    for spare in "busy", "stopped":  # for the tests of a busy gradebook and of a worker that stops
        shutil.copytree(theirs, base / spare, symlinks=True)
    nbgrader(theirs, "autograde", "*", status=1)  # the broken notebook fails nbgrader's run, as it should
    done = autograder("nbgrader-autograde", str(ours), "--jobs", "2")
    assert done.returncode == 2, done.stdout + done.stderr
    for folder in theirs, ours:
        nbgrader(folder, "generate_feedback", "*")
        nbgrader(folder, "export")
    return theirs, ours, done.stdout


def gradebook(folder: Path) -> dict[tuple, tuple]:
    """Every grade nbgrader's gradebook holds, and every submission's score and timestamp, by nbgrader's API."""
    from nbgrader.api import Gradebook  # here: importing nbgrader weighs on every collection

    found: dict[tuple, tuple] = {}
    with Gradebook(f"sqlite:///{folder}/gradebook.db", COURSE_ID) as book:
        for assignment in book.assignments:
            for submission in book.assignment_submissions(assignment.name):
                key = (assignment.name, submission.student_id)
                found[key] = (submission.score, submission.max_score, submission.timestamp)
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        found[(*key, notebook.name, grade.name)] = (
                            grade.auto_score, grade.manual_score, grade.extra_credit, grade.needs_manual_grade,
                            grade.max_score)
    return found


def scores(folder: Path) -> dict[tuple[str, str], float]:
    with open(folder / "grades.csv", newline="") as table:
        return {(row["student_id"], row["assignment"]): float(row["score"]) for row in csv.DictReader(table)}


def files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_the_gradebook_and_the_export_are_nbgrader_s_own(courses):
    theirs, ours, _ = courses
    assert gradebook(ours) == gradebook(theirs)
    assert scores(ours) == scores(theirs)
    found = scores(ours)
    assert found[("correct", FIRST)] == POINTS[FIRST] and found[("correct", BONUS)] == POINTS[BONUS]
    assert 0 < found[("partly", FIRST)] < POINTS[FIRST] and found[("stubs", FIRST)] == 0
    assert found[("broken", BONUS)] == POINTS[BONUS], "the broken notebook costs only its own assignment"


def test_the_autograded_notebooks_and_feedback_pages_are_nbgrader_s_own(courses):
    theirs, ours, _ = courses
    for folder in "autograded", "feedback":
        assert files(ours / folder) == files(theirs / folder), folder
    pages = files(ours / "feedback")
    assert len(pages) > len(ASSIGNMENTS) * 3 and f"broken/{BONUS}/{BONUS}.html" in pages
    assert not (ours / "autograded" / "broken" / FIRST).exists(), "nbgrader removes what it wrote of a failure"


def test_a_broken_notebook_is_its_student_s_row(courses):
    _, _, printed = courses
    assert f"broken: {FIRST} was not autograded: nbformat.reader.NotJSONError" in printed, printed
    assert "Autograded 7 submissions" in printed, printed
    assert "Student code ran in a sandbox" in printed


def test_a_second_run_leaves_what_is_unchanged_and_autogrades_a_resubmission(courses, tmp_path):
    _, ours, _ = courses
    folder = tmp_path / "again"
    shutil.copytree(ours, folder, symlinks=True)
    autograded = folder / "autograded" / "correct" / FIRST / f"{FIRST}.ipynb"
    before = autograded.stat().st_mtime_ns
    resubmitted = folder / "submitted" / "partly" / FIRST
    resubmitted.chmod(0o755)
    notebook = nbformat.read(resubmitted / f"{FIRST}.ipynb", as_version=4)
    answers = reference_answers(folder, FIRST)
    for cell in notebook.cells:
        cell.source = answers.get(cell.metadata["nbgrader"]["grade_id"], cell.source)
    nbformat.write(notebook, resubmitted / f"{FIRST}.ipynb")
    (resubmitted / "timestamp.txt").write_text("2030-01-02 09:00:00.000000 UTC", encoding="utf-8")
    done = autograder("nbgrader-autograde", str(folder), "--jobs", "2")
    assert done.returncode == 2, done.stdout + done.stderr  # the broken notebook is tried again, and fails again
    assert "Autograded 1 submissions" in done.stdout and "6 already autograded and unchanged" in done.stdout, \
        done.stdout
    assert autograded.stat().st_mtime_ns == before
    assert scores(ours)[("partly", FIRST)] < POINTS[FIRST]
    nbgrader(folder, "export")
    assert scores(folder)[("partly", FIRST)] == POINTS[FIRST]
    forced = autograder("nbgrader-autograde", str(folder), "--jobs", "2", "--assignment", BONUS, "--force")
    assert forced.returncode == 0 and "Autograded 4 submissions" in forced.stdout, forced.stdout + forced.stderr
    assert autograded.stat().st_mtime_ns == before, "--assignment autogrades that assignment only"


def test_a_gradebook_busy_for_longer_than_sqlite_waits_fails_nobody(courses):
    """Another process (formgrader saving a grade, an export) holds the gradebook for longer than the
    5 s SQLite waits by default: the workers wait for it, and every grade is nbgrader's."""
    theirs, _, _ = courses
    folder = theirs.parent / "busy"
    held = threading.Event()

    def hold() -> None:
        with sqlite3.connect(folder / "gradebook.db", isolation_level=None) as connection:
            connection.execute("BEGIN EXCLUSIVE")
            held.set()
            time.sleep(15)  # from before the first worker is up until well after its first read
            connection.execute("COMMIT")

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    done = autograder("nbgrader-autograde", str(folder), "--jobs", "2", "--assignment", BONUS)
    holder.join()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Autograded 4 submissions" in done.stdout, done.stdout
    assert {key: value for key, value in gradebook(folder).items() if key[0] == BONUS} == \
        {key: value for key, value in gradebook(theirs).items() if key[0] == BONUS}


def test_a_worker_that_stops_costs_one_submission_which_the_next_run_autogrades(courses):
    """A worker killed while the class is autograded: one submission fails, with nothing of it left
    to pass for autograded nor in the temporary folder, a fresh worker autogrades the rest, and the
    next run that submission."""
    theirs, _, _ = courses
    folder, temporary = theirs.parent / "stopped", theirs.parent / "stopped-temporary"
    temporary.mkdir()
    notebook = folder / "submitted" / "broken" / FIRST / f"{FIRST}.ipynb"  # mended: only the kill fails here
    notebook.write_bytes((folder / "submitted" / "correct" / FIRST / f"{FIRST}.ipynb").read_bytes())
    command = [sys.executable, "-m", "autograder", "--course", str(ROOT / "course.yaml"), "nbgrader-autograde",
               str(folder), "--jobs", "2"]
    run = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200",
                                                   "TMPDIR": str(temporary)},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not list((folder / "autograded").glob("*/*")) and run.poll() is None:
        time.sleep(0.1)  # until the workers are autograding
    os.kill(workers(run.pid)[0], signal.SIGKILL)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 2, out + err
    stopped = [line for line in out.splitlines() if "the autograde worker stopped" in line]
    assert len(stopped) == 1 and "Autograded 7 submissions" in out, out
    student, assignment = stopped[0].split(" was not autograded")[0].split(": ")
    assert not (folder / "autograded" / student / assignment).exists()
    assert {path.name for path in temporary.iterdir()} <= {"autograder-hypothesis"}
    again = autograder("nbgrader-autograde", str(folder), "--jobs", "2")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Autograded 1 submissions" in again.stdout and "7 already autograded" in again.stdout, again.stdout
    mended = [key for key in gradebook(folder) if key[:2] == (FIRST, "broken")]
    assert {k: v for k, v in gradebook(folder).items() if k not in mended} == \
        {k: v for k, v in gradebook(theirs).items() if k not in mended}


def workers(parent: int) -> list[int]:
    """The worker processes ``parent`` started."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == parent and b"autograde_worker.py" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found
