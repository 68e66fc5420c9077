"""The course as data, whatever its exercises: what a course must hold for the engine to grade
it and for the channels to ship it.

Every test reads the course file, never this course's counts (six exercises, 100 points and a
bonus of 10), so a course with an exercise added by ``autograder new-exercise`` passes them as
this one does: ``--course-file`` names another course (``tests/authoring/test_new_exercise.py`` runs this
module on such a copy). What this course's exercises say (their rules, their translations'
wording, their mutants and locked cases) is checked by the tests named after them.
"""

from __future__ import annotations

import ast
import csv

import pytest

from autograder import suite_texts
from autograder.config import LANGUAGES, load_course
from autograder.delivery.release import suite_points
from autograder.locked.cases import load_cases
from autograder.translation import module_source, title
from tests.conftest import autograder


@pytest.fixture(scope="module")
def course(course_file):
    return load_course(course_file)


def test_the_full_marks_are_the_points_of_the_exercises_that_are_not_bonus(course):
    regular = sum(e.points for e in course.exercises if not e.bonus)
    bonus = sum(e.points for e in course.exercises if e.bonus)
    assert regular and course.max_score == regular and course.total_points in (None, regular)
    assert course.bonus_points == bonus
    assert course.max_score_text == (f"{regular} + {bonus} bonus" if bonus else f"{regular}")


def test_every_exercise_has_its_stub_its_reference_and_a_suite_worth_its_points(course):
    for exercise in course.exercises:
        stub = course.path(f"{course.package}/{exercise.module}.py")
        reference = course.solutions_path() / f"{exercise.module}.py"
        suite = course.path(exercise.suite)
        assert stub.is_file() and reference.is_file() and suite.is_file(), exercise.module
        assert ast.get_docstring(ast.parse(stub.read_text(encoding="utf-8"))), f"{stub}: no task stated"
        assert suite_points(suite.read_text(encoding="utf-8")) == exercise.points, exercise.suite


def languages(course) -> list[str]:
    """The languages besides English the course has any text in."""
    folder = course.path(course.delivery.translations) if course.delivery.translations else None
    return [language for language in LANGUAGES[1:]
            if language in course.suite_texts or (folder is not None and (folder / language).is_dir())]


def test_every_exercise_has_its_texts_in_each_language_the_course_speaks(course):
    """Its title, its module's docstrings and its properties' and locked cases' names: a
    channel in that language would stop, naming what is missing (the texts' wording is the
    translation tests' to check)."""
    for language in languages(course):
        speaking = course.model_copy(update={"language": language})
        assert title(speaking) and all(title(speaking, e) for e in course.exercises)
        for path in sorted(course.path(course.package).rglob("*.py")):
            module_source(speaking, path)  # a GraderError names a missing or drifting text
        properties = {e.module: [node.name for node in ast.parse(course.path(e.suite).read_text()).body
                                 if isinstance(node, ast.FunctionDef) and node.name.startswith("test")]
                      for e in course.exercises}
        cases: dict[str, list[str]] = {}
        for case in load_cases(course):
            cases.setdefault(case.exercise, []).append(case.name)
        suite_texts.kept(speaking, properties, cases)


@pytest.mark.sandbox
@pytest.mark.data
def test_the_reference_gets_full_marks_and_the_stubs_none(course, course_file, tmp_path):
    run = autograder("grade", str(course.solutions_path()), str(course.path(course.package)),
                     "--out", str(tmp_path / "out"), "--jobs", "2", course=course_file)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {row["submission"]: row for row in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    reference, stubs = rows[course.solutions_path().name], rows[course.path(course.package).name]
    assert (reference["score"], reference["score_without_bonus"], reference["max_score"]) == (
        f"{course.max_score + course.bonus_points}", f"{course.max_score}", f"{course.max_score}")
    assert all(reference[e.module] == f"{e.points}" for e in course.exercises), reference
    assert stubs["score"] == "0" and all(stubs[e.module] == "0" for e in course.exercises), stubs
