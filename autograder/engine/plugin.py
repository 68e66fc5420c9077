"""The pytest plugin that turns a course's property suites into a grade: pytest's hooks, nothing else.

It runs in the trusted grader process. For each test it starts a sandbox session on the
submission (the ``student`` fixture, :mod:`autograder.engine.session`), imports the reference
(``reference``), loads the course's hypothesis profile, checks each test's points against
``course.yaml``, replays the examples of a property that passed before
(:mod:`autograder.engine.replay`), and records one :class:`~autograder.results.PropertyResult`
per test, with feedback fit for the test's visibility (:mod:`autograder.engine.feedback`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, is_hypothesis_test, settings

from .. import internals, suite_texts
from ..config import Course, Exercise
from ..errors import GraderError, SandboxFailure
from ..i18n import _
from ..isolation import Layout, Standby, WorkerLimits
from ..results import PropertyResult
from ..suite import TOGETHER, WORDING
from . import breadth
from .digest import course_digest
from .examples import Claim, claimed, run_examples
from .feedback import description, innermost, is_blocked, is_internal, is_timed_out, property_feedback
from .overruns import Overruns
from .replay import Example, Examples, Recorder, cache_folder, passes, replayable
from .session import FreshAnswers, Session, open_session
from .stubs import staged_stubs

PROFILE = "autograder"


@dataclass(frozen=True)
class Scope:
    """What one grading of a submission runs: the properties of ``exercises`` (default all); of those
    the public ones alone (``public_only``), or, given their results (``public_results``, graded
    before), the hidden ones, answering all of them. Its time budget counts from ``began``
    (``time.monotonic()``, default now): a submission graded in parts has one budget, not one a part.
    ``overruns`` (by exercise, and whether hidden) keep the calls that ran past their time,
    given where what grades the submission besides calls the same functions (``check``'s locked
    cases). ``first_failure`` stops at the first failing property, unshrunk, and runs no other:
    for :mod:`autograder.authoring.mutate`, which asks only whether a mutant is caught."""

    exercises: list[str] | None = None
    public_only: bool = False
    public_results: list[PropertyResult] | None = None
    began: float | None = None
    overruns: dict[tuple[str, bool], Overruns] | None = None
    first_failure: bool = False


EVERYTHING = Scope()  # every property of every exercise, the budget counted from now


class GradingPlugin:
    """Registered with ``pytest.main(plugins=[...])`` for one submission."""

    def __init__(self, course: Course, submission: Path, scope: Scope = EVERYTHING):
        self.course = course
        self.first_failure = scope.first_failure
        self.chosen = [e for e in course.exercises if scope.exercises is None or e.module in scope.exercises]
        self.submission = submission
        self.public_only = scope.public_only
        self.public_results = scope.public_results  # given: grade the hidden properties only, these are the others'
        self.results: list[PropertyResult] = []  # in the order they ran
        self.places: list[int] = []  # each result's place in the suites' order
        self.public_places: list[int] = []
        self.broken: str | None = None  # why a worker could not start: the grading fails, nobody gets a zero
        self.problems: list[str] = []
        self.spent = {e.module: 0.0 for e in course.exercises}
        self.started = time.monotonic() if scope.began is None else min(scope.began, time.monotonic())  # the budget's
        self.known: dict[str, FreshAnswers] = {}
        self.overruns = {} if scope.overruns is None else scope.overruns
        self.standbys: dict[tuple[WorkerLimits, bool], Standby] = {}
        self.suite_of = {course.path(e.suite): e.module for e in course.exercises}
        self.examples = Examples(cache_folder(), course_digest(course), course.hypothesis.seed)

    # --- configuration and collection -------------------------------------------------
    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "points(n): the points a property is worth")
        config.addinivalue_line("markers", "hidden: feedback shows only the property's name and a one-line reason")
        config.addinivalue_line("markers", "examples(*sources, check=None, using=None, given=None): the stub's "
                                           "docstring examples the property checks (autograder.engine.examples)")
        # The feedback is this plugin's own; pytest's long traceback of each failure is never
        # shown, and was a large part of the cost of grading a submission that fails everything.
        # A suite that cannot be loaded shows its traceback (plain Python's); a property's failure,
        # once collected, only its message (pytest_collection_finish).
        config.option.tbstyle = "native"
        # The parent is hypothesis's stock profile, never the one loaded: where the environment
        # names a CI service, hypothesis loads its "ci" profile, whose derandomize seeds each
        # property from its own source instead of the course's seed, so a CI machine would show
        # other examples and give other grades.
        settings.register_profile(
            PROFILE, parent=settings.get_profile("default"), derandomize=False,
            max_examples=self.course.hypothesis.max_examples, database=None, deadline=None,
            print_blob=False, report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
            # whether anything fails is all a mutation run asks: no shrinking the first failure
            phases=[Phase.explicit, Phase.generate] + ([] if self.first_failure else [Phase.shrink]),
        )
        settings.load_profile(PROFILE)
        internals.draw_from_the_seed_alone()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.problems.append(f"{report.nodeid}: the suite could not be loaded:\n{report.longreprtext}")

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        totals = dict.fromkeys(self.spent, 0)
        for item in items:
            module = self.suite_of.get(Path(item.path).resolve())
            marker = item.get_closest_marker("points")
            if module is None:
                self.problems.append(f"{item.nodeid}: not a suite named in {self.course.file.name}")
                continue
            if marker is None or len(marker.args) != 1 or type(marker.args[0]) is not int or marker.args[0] <= 0:
                self.problems.append(f"{item.nodeid}: needs @pytest.mark.points(n) with a positive whole number")
                continue
            item.stash[_EXERCISE] = module
            totals[module] += marker.args[0]
            self._check_claims(item, module)
        for exercise in self.chosen:
            total = totals[exercise.module]
            # a student release keeps only part of each suite, so its points may fall short
            if total != exercise.points and not (self.course.is_release and total < exercise.points):
                self.problems.append(f"{exercise.suite}: properties are worth {total} points, "
                                     f"{self.course.file.name} gives {exercise.module} {exercise.points}")
        # Every public property runs before any hidden one, and the results are put back in the
        # suites' order (docs/security.md): nothing a hidden property's inputs shape can reach the
        # feedback of a public property, whatever carries it, since that feedback is written before
        # the first hidden example is drawn.
        for place, item in enumerate(items):
            item.stash[_PLACE] = place
        self.public_places = [place for place, item in enumerate(items) if not _hidden(item)]
        items.sort(key=_hidden)
        if self.public_only or self.public_results is not None:
            items[:] = [item for item in items if _hidden(item) == (self.public_results is not None)]

    def _check_claims(self, item: pytest.Item, module: str) -> None:
        """The docstring examples ``item`` claims are examples of its exercise's stub."""
        claims = item.get_closest_marker("examples")
        if claims is not None:
            try:
                claimed(self.course, module, claims.args)
            except GraderError as error:
                self.problems.append(f"{item.nodeid}: {error}")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        session.config.option.tbstyle = "value"  # nothing reads a test's report but this plugin

    # --- fixtures -----------------------------------------------------------------------
    @pytest.fixture(name="course")
    def course_fixture(self) -> Course:
        return self.course

    @pytest.fixture
    def sandbox(self, request: pytest.FixtureRequest):
        exercise = self.course.exercise(request.node.stash[_EXERCISE])
        request.node.stash[_SESSION] = self._open(exercise, request.node)
        yield request.node.stash[_SESSION]
        self._close(request.node.stash[_SESSION], exercise)  # the one a replay that did not pass left

    def _open(self, exercise: Exercise, item: pytest.Item) -> Session:
        """A session for the property ``item`` of ``exercise``, with what is left of the time budgets."""
        limits = self.course.limits
        left = limits.exercise_seconds - self.spent[exercise.module]
        if left <= 0:
            raise SandboxFailure("budget", _("the time budget of {seconds:g} s for {exercise} is used up")
                                 .format(seconds=limits.exercise_seconds, exercise=exercise.module))
        if limits.submission_seconds is not None:  # wall time since grading began, the suites' own included
            overall = limits.submission_seconds - (time.monotonic() - self.started)
            if overall <= 0:
                raise SandboxFailure("budget", _("the time budget of {seconds:g} s for the whole submission is "
                                                 "used up").format(seconds=limits.submission_seconds))
            left = min(left, overall)
        hidden = _hidden(item)
        return open_session(self.course, self.submission, exercise, min(limits.property_seconds, left),
                            self._known(exercise), self._standby(exercise, hidden)).keeping(
            self.overruns.setdefault((exercise.module, hidden), Overruns()), item.name)

    def _close(self, session: Session, exercise: Exercise) -> None:
        session.close()
        self.spent[exercise.module] += session.spent

    def _standby(self, exercise: Exercise, hidden: bool) -> Standby:
        """The :class:`~autograder.isolation.Standby` of the public or the hidden properties of the
        exercises whose workers have ``exercise``'s limits (their workers see the same files, and a
        zygote's imports are those of the whole package, so the exercises need one zygote, not
        one each). Properties run one after another, the public ones first: the last standby is
        closed when another is needed, so that no worker idles. The hidden properties never share
        a zygote, nor a worker booted ahead, with the public ones."""
        limits = WorkerLimits.for_course(self.course.limits, exercise.call_seconds)
        key = (limits, hidden)
        if key not in self.standbys:
            self.close_standbys()
            self.standbys[key] = Standby(Layout.for_course(self.course, self.submission), limits,
                                         module=f"{self.course.package}.{exercise.module}")
        return self.standbys[key]

    def close_standbys(self) -> None:
        for standby in self.standbys.values():
            standby.close()
        self.standbys.clear()

    def _known(self, exercise: Exercise) -> FreshAnswers:
        """What this exercise's properties learn for the next ones (:class:`~.session.FreshAnswers`)."""
        if exercise.module not in self.known:  # the stubs staging read in its helper: never parsed here
            self.known[exercise.module] = FreshAnswers(f"{self.course.package}.{exercise.module}",
                                                       staged_stubs(self.submission, exercise.module))
        return self.known[exercise.module]

    @pytest.fixture
    def student(self, sandbox: Session, request: pytest.FixtureRequest):
        return sandbox.module(f"{self.course.package}.{request.node.stash[_EXERCISE]}")

    @pytest.fixture
    def reference(self, request: pytest.FixtureRequest):
        if self.course.is_release:
            raise GraderError(f"{request.node.nodeid} needs the reference solutions, which a student release lacks")
        return importlib.import_module(f"{self.course.solutions}.{request.node.stash[_EXERCISE]}")

    # --- replaying the examples of a property that passed (autograder.engine.replay) ----------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function):
        test = pyfuncitem.obj
        with contextlib.ExitStack() as undo:
            wording = WORDING.set((self.course.language,  # suite.say's words in the course's language
                                   suite_texts.messages(self.course, pyfuncitem.stash.get(_EXERCISE, ""))))
            undo.callback(WORDING.reset, wording)
            session = pyfuncitem.stash.get(_SESSION, None)
            if session is not None:  # suite.together's calls go to the worker side by side
                token = TOGETHER.set(functools.partial(breadth.together, session))
                undo.callback(TOGETHER.reset, token)
            claims = pyfuncitem.get_closest_marker("examples")
            if claims is not None:  # the docstring examples the property claims, before its own checks
                session = pyfuncitem.stash[_SESSION]
                exercise = pyfuncitem.stash[_EXERCISE]
                run_examples(self.course, exercise, Claim(claims.args, **claims.kwargs),
                             session.module(f"{self.course.package}.{exercise}"), session.module)
            if is_hypothesis_test(test):
                undo.enter_context(internals.calling(test, _printing_afresh(pyfuncitem, internals.inner_test(test))))
            if replayable(pyfuncitem) and set(pyfuncitem.fixturenames) <= _OWN_FIXTURES:
                pyfuncitem.obj = functools.wraps(test)(functools.partial(self._replay_or_run, pyfuncitem, test))
                undo.callback(setattr, pyfuncitem, "obj", test)
            yield

    def _replay_or_run(self, item: pytest.Function, test: Any, **fixtures: Any) -> None:
        """The hypothesis test ``test``: replayed on its recorded examples if it has them and
        they all pass; else run by hypothesis on a fresh session, recording its examples if it passes.

        A replay that fails is a failure whatever hypothesis finds next: an example that fails
        on replay is one hypothesis would have shown, so a submission that gives the same
        answers fails there too, and hypothesis's run only shrinks the example and words the
        feedback. One whose answers change from run to run (chance, time, which worker it is)
        must not get a second try that a grading without records would not give."""
        inner = internals.inner_test(test)
        examples = self.examples.load(item.nodeid, test)
        replayed = None if examples is None else self._replay(item, inner, fixtures, examples)
        if replayed:
            return
        replay_failed = replayed is False
        if replay_failed:
            fixtures = self._start_afresh(item, fixtures)
        recorder = Recorder(inner, set(fixtures))
        with internals.calling(test, recorder.test):
            test(**fixtures)
        if replay_failed:
            raise AssertionError(_("an example failed, and the same examples passed when run again on a fresh "
                                   "worker: the submission's answers change from one run to the next (chance, the "
                                   "time, or the worker it runs in), so the property fails"))
        if recorder.wires is not None:
            self.examples.save(item.nodeid, test, recorder.wires)

    def _replay(self, item: pytest.Function, inner: Any, fixtures: dict[str, Any], examples: list[Example]) -> bool:
        """Whether ``inner`` passes ``examples``: side by side (:mod:`.breadth`) where the property
        has a session, and, should that not tell, one after another on a fresh worker."""
        session = item.stash.get(_SESSION, None)
        if session is None:
            return passes(inner, fixtures, examples)
        outcome = breadth.replay(inner, fixtures, examples, session)
        if outcome != breadth.Outcome.UNDECIDED:
            return outcome == breadth.Outcome.PASSED
        return passes(inner, self._start_afresh(item, fixtures), examples)

    def _start_afresh(self, item: pytest.Function, fixtures: dict[str, Any]) -> dict[str, Any]:
        """``fixtures`` with the property's session replaced by a new one, as if the replay had not been.

        The exercise's budget is not charged for the replay, so that hypothesis's run meets the
        budget (and a hang the same time limit) as it would have; the submission's budget, wall
        time since grading began, still counts everything."""
        exercise = self.course.exercise(item.stash[_EXERCISE])
        item.stash[_SESSION].close()
        session = item.stash[_SESSION] = self._open(exercise, item)
        fixtures = dict(fixtures)
        if "sandbox" in fixtures:
            fixtures["sandbox"] = session
        if "student" in fixtures:
            fixtures["student"] = session.module(f"{self.course.package}.{exercise.module}")
        return fixtures

    # --- results ------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Function, call: pytest.CallInfo):
        outcome = yield
        report = outcome.get_result()
        if _EXERCISE not in item.stash or not (report.when == "call" or report.failed):
            return
        if item.stash.get(_RECORDED, False):
            return
        item.stash[_RECORDED] = True
        marker = item.get_closest_marker("points")  # every property has one: pytest_collection_modifyitems
        if marker is None:
            raise GraderError(f"{item.nodeid}: needs @pytest.mark.points(n)")
        points = marker.args[0]
        hidden = _hidden(item)
        session = item.stash.get(_SESSION, None)
        error = innermost(call.excinfo.value if call.excinfo else None)
        if error is not None and _is_broken_sandbox(error):
            self.broken = f"{item.nodeid}: {error}"
            item.session.shouldstop = "a worker did not start"
            return
        if is_internal(error):  # the course's fault (a reference that does not import, say): no grade at all
            self.problems.append(f"{item.nodeid}: the grader hit an internal error ({type(error).__name__}: {error})")
            item.session.shouldstop = "the grader hit an internal error"
            return
        output = "" if report.passed else property_feedback(self._summary(item), error, hidden,
                                                      self.course.limits.feedback_chars,
                                                      session.printed if session is not None else "")
        self.results.append(PropertyResult(
            exercise=item.stash[_EXERCISE], name=item.originalname, points=points,
            score=points if report.passed else 0, passed=report.passed, hidden=hidden, output=output,
            blocked=not report.passed and is_blocked(error), timed_out=not report.passed and is_timed_out(error),
        ))
        self.places.append(item.stash[_PLACE])

    def _summary(self, item: pytest.Function) -> str:
        """What the property checks, in the course's language (its name when it has no docstring)."""
        return suite_texts.description(self.course, item.stash[_EXERCISE], item.originalname,
                                       description(item.function) or item.originalname)

    def in_suite_order(self) -> list[PropertyResult]:
        """The results in the suites' order, the public part's merged in where it was graded apart."""
        ranked = list(zip(self.places, self.results, strict=True))
        if self.public_results is not None:
            if len(self.public_results) != len(self.public_places):
                raise GraderError(f"{len(self.public_results)} results of public properties were given, "
                                  f"the suites have {len(self.public_places)}")
            ranked += zip(self.public_places, self.public_results, strict=True)
        return [result for _, result in sorted(ranked, key=lambda pair: pair[0])]


def _printing_afresh(item: pytest.Function, inner: Any) -> Any:
    """The hypothesis test's inner function, emptying what the property's session kept of the
    student's prints before each example: the feedback shows the failing example's, the last run."""
    @functools.wraps(inner)
    def example(*args: Any, **kwargs: Any) -> Any:
        session = item.stash.get(_SESSION, None)
        if session is not None:
            session.printed = ""
        return inner(*args, **kwargs)
    return example


_EXERCISE = pytest.StashKey[str]()
_RECORDED = pytest.StashKey[bool]()
_PLACE = pytest.StashKey[int]()  # a property's place in the suites' order
_SESSION = pytest.StashKey[Session]()
_OWN_FIXTURES = {"course", "sandbox", "student", "reference", "request"}  # what a replay can start afresh


def _hidden(item: pytest.Item) -> bool:
    return item.get_closest_marker("hidden") is not None


def _is_broken_sandbox(error: BaseException | None) -> bool:
    """Whether ``error`` says a worker could not start or confine itself: before any student
    code runs in it, so the grader's machine failed, not the submission."""
    return isinstance(error, SandboxFailure) and error.kind == "sandbox"
