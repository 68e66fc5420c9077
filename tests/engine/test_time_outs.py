"""A function that hangs costs its exercise one wait, not one a property; and the words say which
function ran past which limit, and whether the time went on the call or on its answer.

The channel's side is tried on pipes with nothing behind them; the engine's on a copy of the toy
course with a short call limit and more properties, graded in this process with a submission
whose ``add_all`` never returns, by counting the requests that ran past their time and the
seconds each was allowed (never by timing the grading).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from autograder.config import load_course
from autograder.engine import overruns
from autograder.engine.overruns import Overruns
from autograder.engine.run import EVERYTHING, Scope, run_suites
from autograder.engine.session import Session
from autograder.errors import SandboxFailure, TimedOut
from autograder.intake.staging import stage
from autograder.isolation import Layout, Standby, channel, waiting
from autograder.isolation.inside.frames import HEADER
from autograder.isolation.limits import WorkerLimits
from tests.conftest import ROOT

TOY = ROOT / "tests" / "fixtures" / "toy_course"
CALL_SECONDS = 4  # above overruns.AFTER_SECONDS, so that the second wait is the shorter one


# --- the channel: which request, which limit, and whether its answer had begun to come ---------

class _Owner:
    killed: set[int] = set()

    def close(self) -> None:
        pass

    def exit_code(self) -> int | None:
        return None

    def greeted(self) -> None:
        pass


class _Strays:
    def at_hello(self) -> None:
        pass

    def kill(self) -> set[int]:
        return set()


def _frame(body: bytes) -> bytes:
    return HEADER.pack(len(body)) + body


@pytest.fixture
def pipes():
    """A channel whose worker said hello, and the worker's end of its answers' pipe."""
    to_read, to_worker = os.pipe()
    from_worker, to_write = os.pipe()
    os.write(to_write, _frame(b'{"ready": true}'))
    talk = channel.Channel(os.fdopen(to_worker, "wb"), os.fdopen(from_worker, "rb"), WorkerLimits(call_seconds=0.2),
                           _Strays(), _Owner())  # type: ignore[arg-type]
    yield talk, to_write
    talk.close()
    for fd in (to_read, to_write):
        os.close(fd)


def test_a_request_that_never_answers_ran_past_its_own_limit(pipes):
    talk, _ = pipes
    with pytest.raises(TimedOut) as caught:
        talk.request_many([b"1", b"2"], [0.2, 5])
    assert (caught.value.index, caught.value.seconds, caught.value.budget, caught.value.answering) == (0, 0.2, False,
                                                                                                       False)


def test_the_second_request_of_a_batch_is_named_and_its_half_sent_answer_says_so(pipes):
    talk, worker = pipes
    os.write(worker, _frame(b'"first"') + HEADER.pack(100) + b'"half')
    with pytest.raises(TimedOut) as caught:
        talk.request_many([b"1", b"2"], [0.2, 0.2])
    assert (caught.value.index, caught.value.answering, caught.value.budget) == (1, True, False)
    assert caught.value.kind == "timeout"


def test_a_batch_has_what_is_left_of_the_budget_all_its_requests_together(pipes):
    talk, worker = pipes
    os.write(worker, _frame(b'"first"'))
    with pytest.raises(TimedOut) as caught:
        talk.request_many([b"1", b"2"], [5, 5], within=0.3)
    assert (caught.value.index, caught.value.seconds, caught.value.budget, caught.value.answering) == (1, 0.3, True,
                                                                                                       False)


# --- the words --------------------------------------------------------------------------------

def _failure(seconds: float, budget: bool = False, answering: bool = False) -> TimedOut:
    return TimedOut("", seconds, budget=budget, answering=answering)


def test_the_words_name_the_call_the_limit_and_where_the_time_went():
    kept = Overruns()
    ran = kept.timed_out("m.f(1)", "m.f", "test_a", b"1", _failure(60), budget=60)
    assert str(ran) == "m.f(1) did not return within the time limit of 60 s per call"
    sent = kept.timed_out("m.g(1)", "m.g", "test_a", b"2", _failure(29.8, budget=True, answering=True), budget=60)
    assert str(sent) == ("m.g(1) returned, but its answer was too big to send back within the 29.8 s left of its "
                         "property's time budget of 60 s")
    assert kept.limit("m.f", "test_a", 60) == 60 and kept.limit("m.f", "test_b", 60) == overruns.AFTER_SECONDS
    kept.check("m.f", "test_b")  # not out yet: called, with the shorter limit
    again = kept.timed_out("m.f(2)", "m.f", "test_b", b"3", _failure(overruns.AFTER_SECONDS), budget=60)
    assert str(again) == ("m.f(2) did not return within the 2 s each call to it has in the other properties of this "
                          "exercise, since it ran past its time in test_a")
    with pytest.raises(SandboxFailure) as out:
        kept.check("m.f", "test_c")
    assert out.value.kind == "overran"
    assert str(out.value) == ("m.f was not called: it ran past its time in test_a, and again in test_b, so the other "
                              "properties of this exercise do not wait for it")
    assert str(kept.again("test_a", b"1")) == str(ran) and kept.again("test_c", b"1") is None


# --- the toy course: a hanging add_all --------------------------------------------------------

SUITE_MORE = '''

@points(1)
@given(values=numbers)
def test_add_all_of_a_list_and_its_copy_agree(student, values):
    """add_all gives a list and its copy the same sum."""
    expect_equal(student.add_all(list(values)), student.add_all(values), f"add_all({values!r})")


@points(1)
@given(values=numbers)
def test_add_all_of_one_number_is_that_number(student, values):
    """add_all([n]) is n."""
    expect_equal(student.add_all(values[:1]), sum(values[:1]), f"add_all({values[:1]!r})")


@points(1)
@given(values=numbers)
def test_count_counts(student, values):
    """count(values) is how many numbers the list holds."""
    expect_equal(student.count(values), len(values), f"count({values!r})")
'''
SOLVED_MORE = '''

def count(numbers):
    return len(numbers)
'''
HANGING = '''import time


def add_all(numbers):
    time.sleep(600)


def count(numbers):
    return len(numbers)
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy course with three more public properties (two call ``add_all``, one does not) and
    a call limit of :data:`CALL_SECONDS`; its records in a folder of the test's own."""
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (course / "suites" / "ex_sum.py").write_text((course / "suites" / "ex_sum.py").read_text() + SUITE_MORE)
    for folder in ("answers", "toy"):
        (course / folder / "ex_sum.py").write_text((course / folder / "ex_sum.py").read_text() + SOLVED_MORE)
    settings = (course / "course.yaml").read_text()
    settings = settings.replace("call_seconds: 5", f"call_seconds: {CALL_SECONDS}")
    settings = settings.replace("total_points: 10", "total_points: 13").replace("points: 10", "points: 13")
    (course / "course.yaml").write_text(settings)
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    hanging = tmp_path / "hanging" / "toy"
    hanging.mkdir(parents=True)
    (hanging / "ex_sum.py").write_text(HANGING)
    return load_course(course / "course.yaml"), hanging.parent


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The seconds each request that ran past its time was allowed, from now on."""
    seen: list[float] = []
    original = channel.Channel.request_many

    def counted(self, payloads, timeouts, within=None):
        try:
            return original(self, payloads, timeouts, within)
        except TimedOut as failure:
            seen.append(failure.seconds)
            raise

    monkeypatch.setattr(channel.Channel, "request_many", counted)
    return seen


def _graded(course, submission, scope: Scope = EVERYTHING) -> dict[str, dict]:
    staged = stage(course, submission)
    try:
        results, _ = run_suites(course, staged.root, scope)
    finally:
        staged.remove()
    return {result.name: dataclasses.asdict(result) for result in results}


def _bound(course) -> float:
    """What one exercise half may wait in all: one call limit, then the shorter one once."""
    return course.limits.call_seconds + overruns.AFTER_SECONDS


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_hanging_function_costs_one_limit_and_the_shorter_one_then_is_not_called(toy, waits):
    course, hanging = toy
    public = _graded(course, hanging, Scope(public_only=True))
    assert waits == [CALL_SECONDS, overruns.AFTER_SECONDS] and sum(waits) <= _bound(course)
    first, second, third = (public[name]["output"] for name in (
        "test_add_all_adds_every_number", "test_add_all_of_a_list_and_its_copy_agree",
        "test_add_all_of_one_number_is_that_number"))
    assert f"ex_sum.add_all([]) did not return within the time limit of {CALL_SECONDS} s per call" in first
    assert "Falsifying explicit example" in first  # hypothesis's own feedback, for the one example it ran
    assert ("did not return within the 2 s each call to it has in the other properties of this exercise, since it "
            "ran past its time in test_add_all_adds_every_number") in second
    assert ("ex_sum.add_all was not called: it ran past its time in test_add_all_adds_every_number, and again in "
            "test_add_all_of_a_list_and_its_copy_agree") in third and public[
        "test_add_all_of_one_number_is_that_number"]["blocked"]
    assert public["test_count_counts"]["passed"]  # it never calls add_all: graded as ever


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_replay_meets_the_hang_once_and_words_it_as_a_grading_without_records(toy, tmp_path, waits, monkeypatch):
    course, hanging = toy
    with monkeypatch.context() as never:
        never.setattr("autograder.engine.plugin.cache_folder", lambda: None)
        fresh = _graded(course, hanging)
    waits.clear()
    _graded(course, course.solutions_path())  # records every property's examples
    assert len(list((tmp_path / "hypothesis").glob("autograder-examples-*/*.json"))) == 5 and not waits
    replayed = _graded(course, hanging)
    assert replayed == fresh
    public, hidden = waits[:2], waits[2:]  # each half learns on its own: the hidden one waits once too
    assert sum(public) <= _bound(course) and sum(hidden) <= _bound(course) and len(waits) == 3


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_check_shows_which_property_runs_while_it_waits(toy):
    from autograder.commands import check
    course, hanging = toy
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200)
    args = type("Args", (), {"path": str(hanging), "exercise": None, "unsafe": False, "lang": None})()
    assert check.run(course, args, console) == 1
    shown = out.getvalue()
    assert "ex_sum: test_add_all_adds_every_number" in shown and "ex_sum: test_count_counts" in shown
    assert shown.index("ex_sum: test_count_counts") < shown.index("self-check")


# --- a call's time is its own: what it waited for a CPU was its neighbours' -------------------

PACE = '''\
import time
from pathlib import Path


def spin(seconds):
    """Run on the CPU for ``seconds`` of its own CPU time."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return True


def nap(seconds):
    time.sleep(seconds)
    return True
'''


@pytest.fixture
def crowded(tmp_path):
    """A submission whose calls spin or sleep, and one core kept busy by four spinning
    processes, on which this process (and so every worker it starts) runs too."""
    package = tmp_path / "sub" / "exercises"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "pace.py").write_text(PACE)
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    mine = os.sched_getaffinity(0)
    core = min(mine)
    os.sched_setaffinity(0, {core})
    # each in a session of its own, as a worker is: the scheduler shares a core between sessions first
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(4)]
    try:
        yield tmp_path / "sub"
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        os.sched_setaffinity(0, mine)


@pytest.mark.sandbox
@pytest.mark.parametrize("forked", [  # some 4 s each: the quick loop keeps the fresh workers' run
    pytest.param(False, id="fresh"), pytest.param(True, id="forked", marks=pytest.mark.slow)])
def test_a_call_kept_from_the_cpu_by_its_neighbours_is_charged_its_own_time(crowded, forked):
    """Beside four spinners on its core, a call of 0.4 s of CPU takes some 2 s on the wall clock,
    twice its limit of 1 s: it passes, and the property's budget is charged about its own time.
    A call that sleeps past its limit still runs past it: sleeping is the call's own time."""
    layout = Layout(crowded)
    limits = WorkerLimits(call_seconds=1, cpu_seconds=30, memory_mb=512, processes=16, file_mb=8, message_mb=2)
    standby = Standby(layout, limits, module="exercises.pace") if forked else None
    session = Session(layout, limits, budget_seconds=30, standby=standby)
    try:
        pace = session.module("exercises.pace")
        assert pace.spin(0.01)  # the worker is up: its start-up is not what is measured
        started, charged = time.monotonic(), session.spent
        assert pace.spin(0.4) is True
        took, charged = time.monotonic() - started, session.spent - charged
        assert took > 1, f"the core was not crowded ({took:.2f} s): the test shows nothing"
        assert charged < 1, f"charged {charged:.2f} s of a {took:.2f} s call that ran 0.4 s"
        with pytest.raises(TimedOut) as late:
            pace.nap(2.5)
        assert late.value.seconds == 1 and not late.value.budget
    finally:
        session.close()
        if standby is not None:
            standby.close()


def test_a_request_is_not_excused_what_its_worker_waited_before_it(monkeypatch):
    """The run delay a worker gathered before a request (booting, or idle between requests) is
    no request's: only what it waited after the sending is taken off the request's time."""
    delay = waiting.RunDelay()
    delay.watch(os.getpid())
    assert delay.handle is not None, "this kernel says no run delay: the test shows nothing"
    readings = iter([0.0, 5.0, 5.25])  # watched; 5 s waited before the request; 0.25 s during it
    monkeypatch.setattr(waiting.RunDelay, "_seconds", lambda self: next(readings))
    try:
        delay.watch(os.getpid())
        delay.begin(1.0)
        delay.lap()
        assert delay.waited == 0.25
    finally:
        delay.close()


class _LateWorker:
    """A worker whose request runs past what was left of the budget, having waited long for a CPU."""

    class channel:
        waited = 0.6

    @staticmethod
    def request_many(payloads, timeouts, within):
        time.sleep(0.05)
        raise TimedOut("took longer", within, budget=True)


def test_a_request_that_meets_the_budget_uses_it_up(tmp_path):
    """A request cut off by what was left of the property's budget is charged all of it, however
    long it waited for a CPU: the next call finds the budget used up, on every machine."""
    limits = WorkerLimits(call_seconds=1, cpu_seconds=30, memory_mb=512, processes=16, file_mb=8, message_mb=2)
    session = Session(Layout(tmp_path), limits, budget_seconds=1.0)
    session.spent = 0.4
    with pytest.raises(TimedOut):
        session.ask_many(_LateWorker, [b"{}"], [0.6], [])
    assert session.seconds_left() <= 0


# --- a whole batch: a student's grade never depends on who is graded beside them -----------------

UNHURRIED = '''
import time
from pathlib import Path


def add_all(numbers):
    """Right, after 0.3 s of CPU a call: well inside a limit of 1 s, unless a neighbour's
    processes take its core."""
    start = time.process_time()
    while time.process_time() - start < 0.3:
        pass
    if not isinstance(numbers, list):
        raise TypeError("numbers must be a list")
    return sum(numbers)
'''

CROWDER = '''
import os, time


def add_all(numbers):
    """Starts 31 processes, each trying for a session of its own and every core, that spin
    until they are killed."""
    for _ in range(31):
        try:
            if os.fork() == 0:
                for widen in (os.setsid, lambda: os.sched_setaffinity(0, range(os.cpu_count()))):
                    try:
                        widen()
                    except OSError:
                        pass
                while True:
                    pass
        except OSError:
            break
    time.sleep(0.5)
    return sum(numbers) if isinstance(numbers, list) else 0
'''


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists()
                    or len(os.sched_getaffinity(0)) < 2, reason="needs root, a cgroup v1 cpu hierarchy and two cores")
def test_an_unhurried_student_gets_the_same_grade_beside_a_crowder(tmp_path):
    """A student whose calls each take 0.3 s of CPU against a 1 s limit gets the same grade, test
    by test, graded alone and graded at ``--jobs 2`` beside a submission whose calls fill the
    machine with spinning processes in sessions of their own that ask for every core."""
    from tests.conftest import autograder

    shutil.copytree(TOY, tmp_path / "course", ignore=shutil.ignore_patterns("__pycache__"))
    course = tmp_path / "course" / "course.yaml"
    text = course.read_text().replace("max_examples: 20", "max_examples: 5").replace("call_seconds: 5",
                                                                                     "call_seconds: 1")
    course.write_text(text)
    for name, code in (("unhurried", UNHURRIED), ("crowder", CROWDER)):
        (tmp_path / name / "toy").mkdir(parents=True)
        (tmp_path / name / "toy" / "__init__.py").write_text("")
        (tmp_path / name / "toy" / "ex_sum.py").write_text(code)
    grades = {}
    for label, names, jobs in (("alone", ["unhurried"], "1"), ("beside", ["crowder", "unhurried"], "2")):
        run = autograder("grade", *(str(tmp_path / name) for name in names), "--out", str(tmp_path / label),
                         "--jobs", jobs, course=course, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        results = json.loads((tmp_path / label / "unhurried" / "results.json").read_text())
        grades[label] = [(test["name"], test["score"], test["max_score"]) for test in results["tests"]]
    assert grades["alone"] == grades["beside"]
    assert sum(score for _, score, _ in grades["alone"]) == 10, grades["alone"]
