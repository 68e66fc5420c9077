"""Replaying a passing property's examples (``autograder/engine/replay.py``) changes no grade.

The toy course (``tests/fixtures/toy_course``) is graded here in this process, each test with
its own empty record folder: the first grading records, the later ones replay, and every
result must equal a grading that never replays.
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import random
import shutil
from collections import Counter, namedtuple
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, register_random, settings
from hypothesis import strategies as st
from hypothesis.internal.entropy import deterministic_PRNG

from autograder.config import load_course
from autograder.engine import breadth, replay
from autograder.engine.run import run_suites
from autograder.intake.staging import stage
from tests.conftest import ROOT

TOY = ROOT / "tests" / "fixtures" / "toy_course"
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc")

# Right for its first calls in a worker, wrong from the sixth on: a replay that failed and went
# on in the same worker would show hypothesis a different student than a fresh grading does.
TIRING = '''CALLS = []


def add_all(values):
    if not isinstance(values, list):
        raise TypeError("add_all takes a list")
    CALLS.append(1)
    return sum(values) + (len(CALLS) > 5)
'''
OFF_BY_ONE_ON_LONG = '''def add_all(values):
    if not isinstance(values, list):
        raise TypeError("add_all takes a list")
    return sum(values) + (len(values) > 3)
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A copy of the toy course, and an empty folder for hypothesis's files and the records."""
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=SKIPPED)
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    return load_course(course / "course.yaml")


def grade(course, submission: Path) -> list[dict]:
    staged = stage(course, submission)
    try:
        results, _ = run_suites(course, staged.root)
    finally:
        staged.remove()
    return [dataclasses.asdict(result) for result in results]


def submission(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / name / "toy"
    folder.mkdir(parents=True)
    (folder / "ex_sum.py").write_text(source)
    return folder.parent


def records(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "hypothesis").glob("autograder-examples-*/*.json"))


@pytest.mark.sandbox
def test_a_passing_grading_records_and_the_next_replays_to_the_same_results(toy, tmp_path, monkeypatch):
    replays = []
    original = breadth.replay
    monkeypatch.setattr(breadth, "replay", lambda *a: replays.append(original(*a)) or replays[-1])
    first = grade(toy, toy.solutions_path())
    assert len(records(tmp_path)) == 2 and not replays  # both properties passed, so both were recorded
    again = grade(toy, toy.solutions_path())
    assert again == first and replays == [breadth.Outcome.PASSED] * 2
    assert all(result["passed"] for result in again)


@pytest.mark.sandbox
@pytest.mark.parametrize("source", [TIRING, OFF_BY_ONE_ON_LONG], ids=["tiring", "off_by_one_on_long"])
def test_a_failing_replay_gives_hypothesis_s_own_grade_and_feedback(toy, tmp_path, monkeypatch, source):
    wrong = submission(tmp_path, "wrong", source)
    with monkeypatch.context() as never:
        never.setattr("autograder.engine.plugin.cache_folder", lambda: None)
        fresh = grade(load_course(toy.file), wrong)
    grade(toy, toy.solutions_path())  # records
    assert len(records(tmp_path)) == 2
    replayed = grade(toy, wrong)
    assert replayed == fresh
    failed = [result for result in replayed if not result["passed"]]
    assert failed and "Falsifying example" in failed[0]["output"]


@pytest.mark.sandbox
def test_a_corrupt_or_foreign_record_is_not_used(toy, tmp_path):
    first = grade(toy, toy.solutions_path())
    for record in records(tmp_path):
        record.write_text('{"not": "a list"}')
    assert grade(toy, toy.solutions_path()) == first
    assert all(record.read_text().startswith("[") for record in records(tmp_path))  # recorded again
    folder = replay.cache_folder()
    assert folder is not None and folder.parent == tmp_path / "hypothesis"
    for writable in (folder, folder.parent):  # others could write records: whoever writes one picks the examples
        writable.chmod(0o777)
        assert replay.cache_folder() is None
        writable.chmod(0o700)
        assert replay.cache_folder() == folder


@pytest.mark.sandbox
def test_records_can_be_kept_elsewhere_or_not_at_all(toy, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRADER_RECORDS", "off")
    grade(toy, toy.solutions_path())
    assert replay.cache_folder() is None and not records(tmp_path)
    monkeypatch.setenv("AUTOGRADER_RECORDS", str(tmp_path / "elsewhere"))
    grade(toy, toy.solutions_path())
    assert len(list((tmp_path / "elsewhere").glob("*.json"))) == 2 and not records(tmp_path)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_ci_machine_shows_the_same_examples(toy, tmp_path, monkeypatch):
    """Where the environment names a CI service (``CI=true``), hypothesis loads its "ci" profile
    on import, whose ``derandomize`` would seed each property from its source instead of the
    course's seed. Each grading runs in a fresh process, as a grader process does."""
    spawn = multiprocessing.get_context("spawn")
    for folder, ci in (("here", None), ("on-ci", "true")):
        monkeypatch.setenv("AUTOGRADER_RECORDS", str(tmp_path / folder))
        if ci is not None:
            monkeypatch.setenv("CI", ci)
        else:
            monkeypatch.delenv("CI", raising=False)
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
            pool.submit(grade, toy, toy.solutions_path()).result()
    here, on_ci = ({p.name: p.read_bytes() for p in (tmp_path / name).glob("*.json")} for name in ("here", "on-ci"))
    assert len(here) == 2 and here == on_ci


Point = namedtuple("Point", "x y")


@pytest.mark.parametrize("value", [
    {"ids": [1, 2], "pair": (1, 2), "text": "t\udc80", "raw": b"\x00", "none": None, "flag": True, "big": 2**70},
    {"zero": -0.0, "nan": math.nan, "inf": -math.inf, "dict": {3: "c", 1: "a"}, "nested": [[()], {(1,): [2.5]}]},
    {"items": frozenset({1}), "set": {"a"}},
])
def test_exact_values_are_recorded(value):
    assert replay.exact_wire(value) is not None


@pytest.mark.parametrize("value", [
    {"counts": Counter("aab")},  # would come back a plain dict
    {"point": Point(1, 2)},  # would come back another class
    {"strategy": object()},  # not plain data (st.data(), st.randoms())
    {"shared": [[0]] * 2},  # one list in two places
], ids=["subclass", "named_tuple", "object", "aliased"])
def test_values_that_would_not_come_back_exactly_are_not_recorded(value):
    assert replay.exact_wire(value) is None


def test_each_replayed_example_sees_the_generators_seeded_as_hypothesis_seeds_them():
    own = random.Random(5)
    register_random(own)  # a generator hypothesis manages besides the global one
    with deterministic_PRNG():
        expected = (random.random(), own.random())
    seen = []

    def body(value):
        seen.append((random.random(), own.random()))
        random.random()  # what an example draws leaves nothing to the next

    before = random.getstate(), own.getstate()
    assert replay.passes(body, {}, [{"value": 1}, {"value": 2}, {"value": 3}])
    assert seen == [expected] * 3
    assert (random.getstate(), own.getstate()) == before, "the states from before the replay, as hypothesis leaves them"


def recorded_and_seen(prop, seen: list) -> tuple[list, list]:
    """Run the hypothesis test ``prop`` under a Recorder: its records (as a file keeps them) and
    what its body saw."""
    inner = prop.hypothesis.inner_test
    recorder = replay.Recorder(inner, set())
    prop.hypothesis.inner_test = recorder.test
    try:
        prop()
    finally:
        prop.hypothesis.inner_test = inner
    assert recorder.wires is not None
    shown = list(seen)
    seen.clear()
    return [replay._example(json.loads(json.dumps(wire))) for wire in recorder.wires], shown


def test_a_data_argument_is_recorded_and_replayed_draw_for_draw():
    seen = []

    @settings(max_examples=25, database=None, derandomize=True)
    @given(size=st.integers(0, 4), data=st.data())
    def prop(size, data):
        drawn = data.draw(st.lists(st.integers(), max_size=size), label="xs")
        seen.append((size, drawn, data.draw(st.text(max_size=size))))
        drawn.append("changed")  # what a test does to a value it drew reaches no other example

    examples, shown = recorded_and_seen(prop, seen)
    stopped = [example for example in examples if example["data"].stopped]  # ended by hypothesis at a draw
    assert len(examples) - len(stopped) == len(shown) > 10 and stopped
    assert replay.passes(prop.hypothesis.inner_test, {}, examples)
    assert seen == shown

    seen.clear()
    examples, _ = recorded_and_seen(prop, seen)

    def draws_otherwise(size, data):
        data.draw(st.lists(st.integers(), max_size=size + 1), label="xs")

    def draws_less(size, data):
        data.draw(st.lists(st.integers(), max_size=size), label="xs")

    assert not replay.passes(draws_otherwise, {}, examples)
    assert not replay.passes(draws_less, {}, examples)


def test_an_example_hypothesis_ended_at_a_draw_ends_there_in_the_replay():
    record = {"args": {"$dict": []}, "draws": {"data": {"made": [], "stopped": True}}}

    def draws(data):
        data.draw(st.integers())

    def draws_nothing(data):
        pass

    assert replay.passes(draws, {}, [replay._example(record)])
    assert not replay.passes(draws_nothing, {}, [replay._example(record)])
    record["draws"]["data"]["stopped"] = False
    assert not replay.passes(draws, {}, [replay._example(record)])


@pytest.mark.sandbox
def test_a_failed_replay_fails_the_property_though_hypothesis_passes_it_afterwards(toy, tmp_path, monkeypatch):
    """A submission whose answers change from run to run gets no second try from the records:
    here every replay fails, as a submission right only on alternate workers would, and the
    property fails although hypothesis's run after it passes."""
    assert all(result["passed"] for result in grade(toy, toy.solutions_path()))  # records both properties
    monkeypatch.setattr(breadth, "replay", lambda *args: breadth.Outcome.FAILED)
    results = grade(toy, toy.solutions_path())
    assert len(results) == 2 and not any(r["passed"] or r["score"] for r in results)
    assert all("change from one run to the next" in r["output"] for r in results if not r["hidden"])  # hidden: less
