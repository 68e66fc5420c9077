"""Bonus exercises, as the engine sees them: ``bonus: true`` on an exercise of any course puts
its points on top of the full marks. Shown on the toy course with a bonus exercise added, so
nothing here depends on the tokenizer course: reports say "10 + 5 bonus", grades.csv has the
bonus exercise's column, and Gradescope's score may pass the full marks (extra credit)."""

import csv
import json

import pytest
import yaml
from rich.console import Console

from autograder.batch.gradebook import Gradebook
from autograder.config import load_course
from autograder.engine.report_files import feedback_markdown, write_reports
from autograder.reports.terminal import grades_table, print_check
from autograder.results import Grade, PropertyResult
from tests.conftest import ROOT

TOY = ROOT / "tests" / "fixtures" / "toy_course"


@pytest.fixture
def course(tmp_path):
    """The toy course with a second exercise, ``ex_extra``, worth 5 bonus points."""
    raw = yaml.safe_load((TOY / "course.yaml").read_text())
    raw["exercises"].append({"module": "ex_extra", "title": "An extra", "points": 5, "suite": "suites/ex_sum.py",
                             "bonus": True})
    for name in ("toy", "answers", "suites"):
        (tmp_path / name).symlink_to(TOY / name)
    (tmp_path / "course.yaml").write_text(yaml.safe_dump(raw | {"samples": []}))
    return load_course(tmp_path / "course.yaml")


def full_marks(course) -> Grade:
    return Grade(tuple(PropertyResult(exercise=e.module, name="p", points=e.points, score=e.points, passed=True,
                                      hidden=False, output="") for e in course.exercises), (), 1.0)


def test_the_bonus_counts_on_top_of_total_points(course):
    assert course.max_score == 10 and course.bonus_points == 5 and course.max_score_text == "10 + 5 bonus"


def test_reports_show_the_bonus_beside_the_full_marks(course, tmp_path):
    grade = full_marks(course)
    text = feedback_markdown(course, "alice", grade)
    assert "**Score: 15 / 10 + 5 bonus**" in text and "## ex_extra: An extra (5 / 5 bonus)" in text
    columns = [" ".join(str(column.header).split()) for column in grades_table(course, [("alice", grade, "")]).columns]
    assert "ex_extra /5 bonus" in columns and "total /10 +5 bonus" in columns and "no bonus /10" in columns, columns
    console = Console(record=True, width=250)
    print_check(console, course, grade)
    screen = console.export_text()
    assert "ex_extra │ 5 bonus" in screen
    assert "Full marks are 10 + 5 bonus: a bonus exercise's points come on top." in screen


def test_gradescope_score_may_pass_the_full_marks_and_grades_csv_has_the_bonus_column(course, tmp_path):
    grade = full_marks(course)
    write_reports(course, tmp_path / "alice", "alice", grade)
    document = json.loads((tmp_path / "alice" / "results.json").read_text())
    assert document["score"] == 15 and all(t["score"] <= t["max_score"] for t in document["tests"])
    book = Gradebook(tmp_path)
    key = {"digest": "d", "course_digest": "c", "seed": 1, "engine_version": "v", "isolation": "none",
           "max_score": course.max_score}
    book.record("alice", key, grade, 1.0)
    book.write_csv(course, tmp_path / "grades.csv")
    book.close()
    (row,) = csv.DictReader((tmp_path / "grades.csv").open())
    assert row["score"] == "15" and row["max_score"] == "10" and row["ex_extra"] == "5" and row["ex_sum"] == "10"
    assert row["score_without_bonus"] == "10"
