"""Requests sent side by side (``autograder/engine/breadth.py``) change no grade, only the count
of round trips.

The scheduler is tried first on a stand-in session whose worker answers from a function and
keeps the frames it got, then on the toy course graded in this process (its records in a
folder of the test's own), with submissions that a batch could treat otherwise than one call
after another: one whose answers depend on how many calls came before, and one that hangs.
"""

from __future__ import annotations

import json
import random
import shutil

import pytest

from autograder import internals
from autograder.config import load_course
from autograder.engine import breadth
from autograder.errors import SandboxFailure
from autograder.isolation import channel
from autograder.suite import together
from tests.conftest import ROOT
from tests.engine.test_replay import grade, records, submission

TOY = ROOT / "tests" / "fixtures" / "toy_course"


class FakeWorker:
    """Answers each request with ``answer(request)``; keeps every frame it was sent."""

    def __init__(self, answer):
        self.answer = answer
        self.frames: list[list[bytes]] = []

    def request_many(self, payloads: list[bytes], timeouts: list[float], within: float | None = None) -> list[bytes]:
        requests = [json.loads(payload) for payload in payloads]
        assert len(requests) == len(timeouts)
        self.frames.append(requests)
        return [json.dumps(self.answer(request)).encode() for request in requests]


class FakeSession:
    """What the scheduler asks of a :class:`~autograder.engine.session.Session`."""

    def __init__(self, worker):
        self.worker, self.lookups = worker, None
        self.batcher = self.scheduler = None
        self.printed = ""
        self.closed = False

    def ask(self, request) -> object:
        """A request as a session makes it: through the batcher while one is set."""
        payload = json.dumps(request).encode()
        if self.batcher is not None:
            return json.loads(self.batcher(payload, 5.0, f"ask({request!r})"))
        return json.loads(self.worker.request_many([payload], [5.0])[0])

    def ask_many(self, worker, payloads, timeouts, calls) -> list[bytes]:
        return worker.request_many(payloads, timeouts, 60.0)

    def close(self) -> None:
        self.closed = True


def chain(session: FakeSession, start: int, length: int) -> int:
    """``length`` requests, each made from the answer to the one before."""
    value = start
    for _ in range(length):
        value = session.ask(value)
    return value


def test_the_first_example_runs_alone_then_the_rest_cost_a_frame_per_step_of_the_longest_chain():
    worker = FakeWorker(lambda n: n + 1)
    session = FakeSession(worker)
    ends = []
    outcome = breadth.replay(lambda start, length: ends.append(chain(session, start, length)), {},
                             [{"start": 100 * i, "length": i} for i in range(1, 6)], session)
    assert outcome == breadth.Outcome.PASSED
    assert sorted(ends) == [101, 202, 303, 404, 505]
    assert [len(frame) for frame in worker.frames] == [1, 4, 4, 3, 2, 1]  # 15 requests, 6 round trips
    assert session.batcher is None and session.scheduler is None


def test_each_example_sees_the_generators_seeded_as_hypothesis_seeds_them():
    with internals.seeded_randoms():
        internals.reseed_randoms()
        expected = [random.random() for _ in range(3)]
    worker = FakeWorker(lambda n: n)
    session = FakeSession(worker)
    seen: dict[int, list[float]] = {}

    def body(number):  # each draw is followed by a request, so the examples interleave
        seen[number] = []
        for _ in range(3):
            seen[number].append(random.random())
            session.ask(number)

    before = random.getstate()
    assert breadth.replay(body, {}, [{"number": n} for n in range(4)], session) == breadth.Outcome.PASSED
    assert len(worker.frames) == 6 and seen == {n: expected for n in range(4)}  # the first alone, then the rest
    assert random.getstate() == before



def test_a_run_puts_back_a_task_s_random_states_whatever_ran_between_runs():
    """A task made in one run and resumed in the next gets the states it was made with, though
    the code between the runs (the property's, in the hub) drew from the generators."""
    scheduler = breadth.Scheduler(FakeSession(FakeWorker(lambda n: n)))
    before = random.getstate()
    try:
        random.seed(7)
        expected = random.Random(7).random()
        made = scheduler.task(lambda: None, parent=object())  # a child: made with the states of now
        later = scheduler.task(random.random, parent=object())
        assert scheduler.run([made])
        random.random()  # the hub draws between the runs
        assert scheduler.run([later]) and later.value == expected
    finally:
        random.setstate(before)

def test_a_failure_alone_or_before_any_batch_is_a_failed_replay_and_after_one_an_undecided_one():
    worker = FakeWorker(lambda n: n)
    session = FakeSession(worker)

    def body(number):
        if number == 1:
            raise AssertionError("wrong")  # before asking anything: as it would fail alone
        session.ask(number)
        if number == 3:
            raise AssertionError("wrong")  # after asking: alone only if no other example asked too

    assert breadth.replay(body, {}, [{"number": n} for n in (0, 2, 1)], session) == breadth.Outcome.UNDECIDED
    assert breadth.replay(body, {}, [{"number": n} for n in (0, 1, 2)], session) == breadth.Outcome.FAILED
    assert breadth.replay(body, {}, [{"number": n} for n in (2, 3, 0)], session) == breadth.Outcome.UNDECIDED
    worker.frames.clear()
    assert breadth.replay(body, {}, [{"number": n} for n in (3, 0, 2)], session) == breadth.Outcome.FAILED
    assert worker.frames == [[3]]  # the first example failed alone: no call of the others was made


class Dying(FakeWorker):
    """Answers a frame of at most ``survives`` requests; dies on a bigger one."""

    def __init__(self, survives: int):
        super().__init__(lambda n: n)
        self.survives = survives

    def request_many(self, payloads, timeouts, within=None):
        if len(payloads) > self.survives:
            raise SandboxFailure("crash", "the worker process was killed by SIGKILL")
        return super().request_many(payloads, timeouts, within)


@pytest.mark.parametrize(("survives", "unwinding"), [(1, [1, 2, 3]), (0, [])],
                         ids=["the others' batch", "the first example's call"])
def test_a_batch_the_worker_fails_stops_every_example_and_decides_nothing(survives, unwinding):
    session = FakeSession(Dying(survives))
    unwound = []

    def body(number):
        try:
            session.ask(number)
        finally:
            unwound.append(number)

    assert breadth.replay(body, {}, [{"number": n} for n in range(4)], session) == breadth.Outcome.UNDECIDED
    assert unwound[0] == 0 and sorted(unwound[1:]) == unwinding and session.closed  # none started after


def test_calls_together_answer_in_order_and_raise_the_first_failure_in_order():
    worker = FakeWorker(lambda n: n * 2)
    session = FakeSession(worker)
    assert breadth.together(session, [lambda n=n: session.ask(n) for n in range(6)]) == [0, 2, 4, 6, 8, 10]
    assert [len(frame) for frame in worker.frames] == [6]

    def failing(n):
        answer = session.ask(n)
        if n in (2, 4):
            raise ValueError(f"call {n}")
        return answer

    with pytest.raises(ValueError, match="call 2"):
        breadth.together(session, [lambda n=n: failing(n) for n in range(6)])
    assert together([lambda: 1, lambda: 2]) == [1, 2]  # outside a grading: one after another


def test_calls_together_inside_examples_join_the_examples_batches():
    worker = FakeWorker(lambda n: n + 1)
    session = FakeSession(worker)
    found = []

    def body(number):
        first = session.ask(number)  # one request, then three side by side
        found.append(breadth.together(session, [lambda k=k: session.ask(first * 10 + k) for k in range(3)]))

    assert breadth.replay(body, {}, [{"number": n} for n in (1, 2)], session) == breadth.Outcome.PASSED
    assert sorted(found) == [[21, 22, 23], [31, 32, 33]]
    assert [len(frame) for frame in worker.frames] == [1, 3, 1, 3]  # the first example alone, then the other


# --- the toy course, graded -------------------------------------------------------------------

COUNTING = '''CALLS = []


def add_all(values):
    if not isinstance(values, list):
        raise TypeError("add_all takes a list")
    CALLS.append(len(values))
    return sum(values) + (len(CALLS) % 7 == 0 and len(CALLS) > 20)
'''
HANGING = '''import time


def add_all(values):
    if not isinstance(values, list):
        raise TypeError("add_all takes a list")
    if len(values) == 3:
        time.sleep(600)
    return sum(values)
'''


@pytest.fixture
def frames(monkeypatch) -> list[int]:
    """The number of requests in each frame the grader sends a worker, from now on."""
    sent: list[int] = []
    original = channel.Channel.request_many

    def counted(self, payloads, timeouts, within=None):
        sent.append(len(timeouts))
        return original(self, payloads, timeouts, within)

    monkeypatch.setattr(channel.Channel, "request_many", counted)
    return sent


@pytest.fixture
def toy(tmp_path, monkeypatch):
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    return course


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_submission_whose_answers_depend_on_the_order_of_calls_gets_one_grade(toy, tmp_path, frames):
    course = load_course(toy / "course.yaml")
    grade(course, course.solutions_path())  # records
    assert len(records(tmp_path)) == 2
    recording = len(frames)
    frames.clear()
    grade(course, course.solutions_path())
    assert max(frames) > 1 and len(frames) < recording  # the reference's replay batched its examples
    counting = submission(tmp_path, "counting", COUNTING)
    graded = [grade(course, counting) for _ in range(3)]
    assert graded[0] == graded[1] == graded[2]
    assert not all(result["passed"] for result in graded[0])


@pytest.mark.sandbox
def test_a_hanging_call_inside_a_batch_costs_only_its_property(toy, tmp_path, frames):
    suite = toy / "suites" / "ex_sum.py"  # the hidden property's lists cut to two numbers: never the hang's length
    suite.write_text(suite.read_text().replace("add_all(values), reference.add_all(values), f\"add_all({values!r})\"",
                                               "add_all(values[:2]), reference.add_all(values[:2]), \"add_all\""))
    (toy / "course.yaml").write_text((toy / "course.yaml").read_text().replace("call_seconds: 5", "call_seconds: 1"))
    course = load_course(toy / "course.yaml")
    grade(course, course.solutions_path())  # records
    frames.clear()
    results = {result["name"]: result for result in grade(course, submission(tmp_path, "hanging", HANGING))}
    assert max(frames) > 1  # the hang was met in a batch
    public, hidden = (results["test_add_all_adds_every_number"],
                      results["test_add_all_matches_reference_and_rejects_non_lists"])
    assert not public["passed"] and "1 s" in public["output"]
    assert hidden["passed"]
