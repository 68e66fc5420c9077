"""Submission names: made safe as folder names, kept inside ``--out``, never shared by two
submissions, and never run as a formula from ``grades.csv``."""

import csv
import shutil
import zipfile
from pathlib import Path

import pytest

from autograder.batch.gradebook import Gradebook
from autograder.batch.pipeline import report_folder, safe_names
from autograder.config import load_course
from autograder.errors import GraderError
from autograder.intake.staging import submission_name
from autograder.results import Grade
from tests.conftest import ROOT, autograder


@pytest.mark.parametrize("file, name", [
    ("...zip", "_.."), ("..zip", "_."), (".zip", "_.zip"), ("alice.zip", "alice"), ("a b/c.zip", "c"),
    ("=HYPERLINK(x).zip", "_HYPERLINK_x_"), ("-2+3.zip", "-2_3"), ("grades.csv.zip", "_grades.csv"),
    ("..%2F..%2Fetc.zip", "_.._2F.._2Fetc"), (".hidden.zip", "_.hidden"),
])
def test_names_are_made_safe_and_stay_inside_out(tmp_path, file, name):
    [(safe, _)] = safe_names([(submission_name(Path(file)), Path(file))])
    assert safe == name
    assert report_folder(tmp_path, safe).parent == tmp_path


@pytest.mark.parametrize("name", ["../x", "..", "a/../../b", "/etc", "", "."])
def test_a_report_folder_outside_out_is_refused(tmp_path, name):
    if name not in ("", "."):  # these two are out itself
        with pytest.raises(GraderError, match="outside"):
            report_folder(tmp_path, name)
    assert report_folder(tmp_path, safe_names([(name, Path("x"))])[0][0]).parent == tmp_path


def test_two_submissions_under_one_name_are_refused_naming_both():
    with pytest.raises(GraderError) as caught:
        safe_names([("alice", Path("alice.zip")), ("bob", Path("bob")), ("alice", Path("alice"))])
    assert "'alice'" in str(caught.value) and "alice.zip and alice;" in str(caught.value)
    with pytest.raises(GraderError, match="a_b"):
        safe_names([("a b", Path("a b")), ("a_b", Path("a_b"))])


def test_csv_cells_never_start_a_formula(tmp_path):
    course = load_course(ROOT / "course.yaml")
    book = Gradebook(tmp_path)
    key = {"digest": "d", "course_digest": "c", "seed": 1, "engine_version": "0", "isolation": "none",
           "max_score": course.max_score}
    for name in ('=HYPERLINK("http://evil","x")', "+1", "-1", "@SUM(A1)", "plain"):
        book.record(name, key, Grade((), (), 0.0), 0.0)
    book.write_csv(course, tmp_path / "grades.csv")
    book.close()
    names = [row["submission"] for row in csv.DictReader((tmp_path / "grades.csv").open())]
    assert sorted(names) == ["'+1", "'-1", "'=HYPERLINK(\"http://evil\",\"x\")", "'@SUM(A1)", "plain"]


def zipped(folder: Path, path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for file in folder.glob("*.py"):
            archive.write(file, file.name)
    return path


@pytest.mark.sandbox
@pytest.mark.data
@pytest.mark.slow
def test_hostile_file_names_are_graded_inside_out(tmp_path):
    """``...zip`` once wrote its reports beside ``--out``; ``-2+3.zip`` was a formula in grades.csv."""
    stubs = ROOT / "exercises"
    (tmp_path / "work").mkdir()
    dots, formula = zipped(stubs, tmp_path / "work" / "...zip"), zipped(stubs, tmp_path / "work" / "-2+3.zip")
    run = autograder("grade", str(dots), str(formula), "--out", "out", "--exercise", "ex1_merge_tracing",
                     cwd=tmp_path / "work")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = tmp_path / "work" / "out"
    assert sorted(p.name for p in out.iterdir()) == ["-2_3", "_..", "gradebook.sqlite", "grades.csv"]
    assert (out / "_.." / "feedback.md").is_file()
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["-2+3.zip", "...zip", "out"]
    rows = [row["submission"] for row in csv.DictReader((out / "grades.csv").open())]
    assert sorted(rows) == ["'-2_3", "_.."]


@pytest.mark.data  # the course is checked whole, its data files included, before the names
def test_a_name_collision_stops_the_batch_before_grading(tmp_path):
    alice = shutil.copytree(ROOT / "exercises", tmp_path / "alice", ignore=shutil.ignore_patterns("__pycache__"))
    archive = zipped(alice, tmp_path / "alice.zip")
    run = autograder("grade", str(archive), str(alice), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 2
    said = " ".join(run.stderr.split())
    assert f"two submissions would be filed under the name 'alice': {archive} and {alice}; rename one" in said
    assert "Traceback" not in run.stderr and not (tmp_path / "out" / "alice").exists()
