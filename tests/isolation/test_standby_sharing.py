"""The exercises of a grading share their zygotes (``autograder/engine/plugin.py``'s ``_standby``): one
for the public properties and one for the hidden ones where the exercises' workers have the same
limits, never one for both, and the grades are those of a zygote per exercise."""

from __future__ import annotations

import dataclasses

import pytest

from autograder.config import load_course
from autograder.engine import plugin
from autograder.engine.plugin import Scope
from autograder.engine.run import grade_staged
from autograder.intake.staging import stage
from autograder.isolation import detect, standby, zygote
from tests.conftest import COURSE

pytestmark = pytest.mark.sandbox

EXERCISES = ["ex1_merge_tracing", "ex3_wordpiece"]  # quick ones, with the course's default limits


@pytest.fixture
def zygotes(monkeypatch, tmp_path):
    """The zygotes a grading starts, each with the visibility of every property forked from it."""
    if not zygote.forks(detect.isolation()):
        pytest.skip(f"no zygotes with {detect.isolation().describe()}: every worker is a fresh process")
    monkeypatch.setenv("AUTOGRADER_RECORDS", str(tmp_path / "records"))
    started: list[zygote.Zygote] = []
    starting = zygote.Zygote.__init__

    def start(self, *args, **kwargs):
        starting(self, *args, **kwargs)
        started.append(self)

    monkeypatch.setattr(zygote.Zygote, "__init__", start)
    return started


@pytest.mark.slow
def test_the_exercises_share_a_public_and_a_hidden_zygote(zygotes, monkeypatch):
    course = load_course(COURSE)
    served: dict[int, set[bool]] = {}  # a zygote's id: the visibilities of the properties forked from it
    choosing, taking = plugin.GradingPlugin._standby, standby.Standby.take

    def choose(self, exercise, hidden):
        chosen = choosing(self, exercise, hidden)
        chosen.serves_hidden = hidden
        return chosen

    def take(self):
        worker = taking(self)
        if isinstance(worker, zygote.Child):
            served.setdefault(id(worker.zygote), set()).add(self.serves_hidden)
        return worker

    monkeypatch.setattr(plugin.GradingPlugin, "_standby", choose)
    monkeypatch.setattr(standby.Standby, "take", take)
    staged = stage(course, course.solutions_path())
    try:
        grade = grade_staged(course, staged.root, staged.notes, Scope(exercises=EXERCISES))
    finally:
        staged.remove()
    assert all(result.passed for result in grade.results)
    assert len(zygotes) == 2  # a zygote per exercise and visibility would be four
    assert sorted(map(sorted, served.values())) == [[False], [True]]  # neither serves both


@pytest.mark.slow
def test_grades_are_those_of_a_zygote_per_exercise(zygotes):
    course = load_course(COURSE)
    staged = stage(course, course.solutions_path())
    try:
        together = grade_staged(course, staged.root, staged.notes, Scope(exercises=EXERCISES))
        apart = [r for exercise in EXERCISES
                 for r in grade_staged(course, staged.root, staged.notes, Scope(exercises=[exercise])).results]
    finally:
        staged.remove()
    assert [dataclasses.asdict(r) for r in together.results] == [dataclasses.asdict(r) for r in apart]
