"""A submission graded in parts (``autograder/batch/parts.py``): each hidden part is given its
group's public results as its grader process answered them, and the grade is put together from
the parts' answers, not read back from their report files."""

import pytest

from autograder.batch.grader import Part
from autograder.batch.parts import GradingInParts
from autograder.batch.pipeline import BatchOptions, graders_kept_busy, groups_of_exercises
from autograder.config import load_course
from autograder.intake.staging import Staged
from autograder.results import Grade, PropertyResult
from tests.conftest import ROOT


def answering(asked: list[Part]):
    """A grader that answers each part one failed property per exercise, timed out (which a
    ``results.json`` does not say); a hidden part answers its public results too, first."""

    def grader(course, name, staged, folder, part: Part):
        asked.append(part)
        hidden = part.public_results is not None
        own = tuple(PropertyResult(module, "prop_hidden" if hidden else "prop_public", 1, 0, False, hidden,
                                   "why", timed_out=True) for module in part.exercises or ())
        return Grade((*(part.public_results or ()), *own), ("a note",), 1.0), 1.0, ""

    return grader


def test_hidden_parts_get_the_public_answers_and_the_grade_is_the_parts_answers(tmp_path):
    course = load_course(ROOT / "course.yaml")
    modules = [exercise.module for exercise in course.exercises]
    parts = GradingInParts(course, "alice", Staged("alice", tmp_path / "staged", "digest"), tmp_path / "alice",
                           None, groups=2)
    asked: list[Part] = []
    for index in parts.indices:  # the public parts first, as the batch hands them out
        parts.grade(index, answering(asked))
    grade, _seconds, problem = parts.joined()

    public, hidden = asked[:2], asked[2:]
    assert all(p.public_only for p in public) and all(p.public_results is not None for p in hidden)
    for group in range(2):
        assert hidden[group].public_results == tuple(
            PropertyResult(module, "prop_public", 1, 0, False, False, "why", timed_out=True)
            for module in public[group].exercises)
    assert problem == "" and grade is not None
    assert [(r.exercise, r.name) for r in grade.results] == [
        (module, name) for part in hidden for name in ("prop_public", "prop_hidden") for module in part.exercises]
    assert sorted({r.exercise for r in grade.results}) == sorted(modules)
    assert all(r.timed_out for r in grade.results), "read back from results.json, which does not say so"
    assert (tmp_path / "alice" / "results.json").is_file() and (tmp_path / "alice" / "feedback.md").is_file()


TOY = ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml"  # one exercise
COURSE = ROOT / "course.yaml"  # six


@pytest.mark.parametrize(("course_file", "submissions", "jobs", "exercises"), [
    (TOY, 1, 2, None), (TOY, 3, 2, None), (COURSE, 1, 2, None), (COURSE, 1, 8, None), (COURSE, 2, 3, None),
    (COURSE, 3, 8, None), (COURSE, 5, 1, None), (COURSE, 1, 2, ["ex1_merge_tracing"]),
    (COURSE, 1, 8, ["ex1_merge_tracing", "ex2_special_tokens"]),
])
def test_a_batch_starts_a_grader_for_each_part_it_grades_at_once(tmp_path, course_file, submissions, jobs, exercises):
    """A batch starts its grader processes before it stages anyone, as many as its parts keep busy at
    once: one submission of one exercise on two jobs starts one, not a second that would only start up."""
    course = load_course(course_file)
    groups = groups_of_exercises(jobs, submissions)
    at_once = sum(parts.public or 1 for parts in (
        GradingInParts(course, f"s{i}", Staged(f"s{i}", tmp_path / "staged", "digest"), tmp_path / f"s{i}",
                       exercises, groups) for i in range(submissions)))
    assert graders_kept_busy(course, submissions, BatchOptions(jobs, exercises=exercises)) == min(jobs, at_once)
