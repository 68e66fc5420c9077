"""``autograder new-exercise``, the course author's first step: on a copy of this course, a new
exercise made by the scaffold grades (the reference full marks, the stub none), the course
file keeps its comments and adds the exercise's points to ``total_points``, the texts a
Persian channel needs wait marked for a translator, and the course checks of the test suite
(``tests/config/test_course.py``) pass on the copy as they do here. What stands in its way stops it
with one line, before anything is written."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.scaffold import TO_TRANSLATE
from autograder.config import load_course
from tests.conftest import COURSE, ROOT, autograder

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow]

# what this course names: the course file, the package, solutions, suites, texts, samples, the
# course's helpers and data (copied, since the sandbox reads .cache/tiktoken from the course root)
COPIED = ("course.yaml", "exercises", "solutions", "suites", "translations", "tokcourse", "data", "samples",
          "requirements.lock", ".cache/data", ".cache/tiktoken")
ORIGINAL = load_course(COURSE)


def course_copy(folder: Path) -> Path:
    """A copy of this course in ``folder``; its course file."""
    for relative in COPIED:
        source, target = ROOT / relative, folder / relative
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return folder / "course.yaml"


def new_exercise(course_file: Path, *args: str):
    return autograder("new-exercise", *args, course=course_file, cwd=course_file.parent)


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory) -> Path:
    """The copy, with ``ex7_tally`` (12 points) added by the scaffold."""
    course_file = course_copy(tmp_path_factory.mktemp("new-exercise") / "course")
    run = new_exercise(course_file, "ex7_tally", "--title", "Tally the votes", "--points", "12")
    assert run.returncode == 0, run.stdout + run.stderr
    return course_file


def test_the_new_exercise_is_in_the_course_file_with_its_points_and_the_comments_kept(scaffolded):
    course = load_course(scaffolded)
    new = course.exercise("ex7_tally")
    assert (new.title, new.points, new.bonus, new.suite) == ("Tally the votes", 12, False, "suites/ex7_tally.py")
    assert [e.module for e in course.exercises] == [*(e.module for e in ORIGINAL.exercises), "ex7_tally"]
    assert course.total_points == course.max_score == ORIGINAL.max_score + 12
    before = [line for line in COURSE.read_text().splitlines() if "#" in line and "total_points" not in line]
    after = scaffolded.read_text().splitlines()
    assert all(line in after for line in before), "a comment of the course file was lost"


def test_the_reference_gets_full_marks_and_the_stub_none(scaffolded, tmp_path):
    course = load_course(scaffolded)
    run = autograder("grade", str(course.solutions_path()), str(course.path(course.package)), "--out",
                     str(tmp_path / "out"), "--exercise", "ex7_tally", "--jobs", "2", course=scaffolded)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {row["submission"]: row for row in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert (rows["solutions"]["ex7_tally"], rows["exercises"]["ex7_tally"]) == ("12", "0"), rows
    feedback = (tmp_path / "out" / "exercises" / "feedback.md").read_text(encoding="utf-8")
    assert "ex7_tally.solve is not implemented yet" in feedback, feedback


def test_the_texts_to_translate_are_marked_and_the_course_checks_pass(scaffolded):
    locale = scaffolded.parent / "translations" / "fa"
    for name in ("titles.yaml", "suites.yaml", "ex7_tally.yaml"):
        assert TO_TRANSLATE in (locale / name).read_text(encoding="utf-8"), name
    checks = subprocess.run([sys.executable, "-m", "pytest", "tests/config/test_course.py", "-q",
                             "-p", "no:cacheprovider", f"--course-file={scaffolded}"],
                            cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert checks.returncode == 0, checks.stdout[-5000:] + checks.stderr[-2000:]
    assert " passed" in checks.stdout and "skipped" not in checks.stdout, checks.stdout


def test_a_bonus_exercise_leaves_the_full_marks_as_they_were(tmp_path):
    course_file = course_copy(tmp_path / "course")
    assert new_exercise(course_file, "ex7_extra", "--points", "3", "--bonus").returncode == 0
    course = load_course(course_file)
    assert course.max_score == ORIGINAL.max_score and course.bonus_points == ORIGINAL.bonus_points + 3
    assert course.exercise("ex7_extra").title == "ex7 extra"


def test_what_stands_in_the_way_stops_it_with_one_line_and_writes_nothing(tmp_path):
    course_file = course_copy(tmp_path / "course")
    (tmp_path / "course" / "solutions" / "ex8_taken.py").write_text("")
    before = {path: path.read_bytes() for path in (tmp_path / "course").rglob("*") if path.is_file()}
    for args, said in ((["ex1_merge_tracing"], "has an exercise ex1_merge_tracing already"),
                       (["8ball"], "'8ball' is not a module name"),
                       (["ex8_taken"], "ex8_taken.py exists: choose another module name"),
                       (["ex8_free", "--points", "0"], "--points 0: an exercise is worth at least 1 point")):
        run = new_exercise(course_file, *args)
        assert run.returncode == 2 and said in " ".join(run.stderr.split()), run.stderr
        assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) <= 2, run.stderr
    after = {path: path.read_bytes() for path in (tmp_path / "course").rglob("*") if path.is_file()}
    assert after == before


def test_a_course_of_other_names_without_texts_gets_its_new_exercise_too(tmp_path):
    """The toy course: package ``toy``, solutions ``answers``, no texts in another language."""
    toy = tmp_path / "toy_course"
    shutil.copytree(ROOT / "tests" / "fixtures" / "toy_course", toy, ignore=shutil.ignore_patterns("__pycache__"))
    assert new_exercise(toy / "course.yaml", "ex_more", "--points", "1").returncode == 0
    assert (toy / "toy" / "ex_more.py").is_file() and (toy / "answers" / "ex_more.py").is_file()
    assert "expect_error" not in (toy / "suites" / "ex_more.py").read_text(), "one point: no hidden property"
    run = autograder("grade", str(toy / "answers"), str(toy / "toy"), "--out", str(tmp_path / "out"),
                     "--exercise", "ex_more", course=toy / "course.yaml")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {row["submission"]: row for row in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert (rows["answers"]["ex_more"], rows["toy"]["ex_more"]) == ("1", "0"), rows
