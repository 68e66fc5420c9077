"""The pytest plugin that turns a course's property suites into a grade.

It runs in the trusted grader process. For each test it starts a sandbox session on the
submission (the ``student`` fixture), imports the reference (``reference``), loads the
course's hypothesis profile, checks each test's points against ``course.yaml``, and records
one :class:`~autograder.results.PropertyResult` per test with feedback fit for the test's
visibility.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

from .config import Course, Exercise
from .errors import GraderError, SandboxFailure, StudentError
from .grading import course_digest
from .i18n import N_, _, in_course_language
from .proxy import PRINTED_CHARS, Known, MissingName, Session
from .replay import Examples, Recorder, cache_folder, passes, replayable
from .results import NOT_WRITTEN, PropertyResult, clip
from .sandbox import Layout, Limits
from .standby import Standby
from .stubs import sure_stubs

PROFILE = "autograder"


class GradingPlugin:
    """Registered with ``pytest.main(plugins=[...])`` for one submission."""

    def __init__(self, course: Course, submission: Path, public_only: bool = False,
                 exercises: list[str] | None = None, first_failure: bool = False, began: float | None = None,
                 public_results: list[PropertyResult] | None = None):
        self.course = course
        self.first_failure = first_failure
        self.chosen = [e for e in course.exercises if exercises is None or e.module in exercises]
        self.submission = submission
        self.public_only = public_only
        self.public_results = public_results  # given: grade the hidden properties only, these are the others'
        self.results: list[PropertyResult] = []  # in the order they ran
        self.places: list[int] = []  # each result's place in the suites' order
        self.public_places: list[int] = []
        self.broken: str | None = None  # why a worker could not start: the grading fails, nobody gets a zero
        self.problems: list[str] = []
        self.spent = {e.module: 0.0 for e in course.exercises}
        self.started = time.monotonic() if began is None else min(began, time.monotonic())  # the budget's start
        self.known: dict[str, Known] = {}
        self.standbys: dict[tuple[str, bool], Standby] = {}
        self.suite_of = {course.path(e.suite): e.module for e in course.exercises}
        self.examples = Examples(cache_folder(), course_digest(course), course.hypothesis.seed)

    # --- configuration and collection -------------------------------------------------
    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "points(n): the points a property is worth")
        config.addinivalue_line("markers", "hidden: feedback shows only the property's name and a one-line reason")
        # The feedback is this plugin's own; pytest's long traceback of each failure (source lines
        # of every frame, hypothesis's included) is never shown, and cost half of a zero's grading.
        # A suite that cannot be loaded shows its traceback (plain Python's); a property's failure,
        # once collected, only its message (pytest_collection_finish).
        config.option.tbstyle = "native"
        settings.register_profile(
            PROFILE, max_examples=self.course.hypothesis.max_examples, database=None, deadline=None,
            print_blob=False, report_multiple_bugs=False, suppress_health_check=list(HealthCheck),
            # whether anything fails is all a mutation run asks: no shrinking the first failure
            phases=[Phase.explicit, Phase.generate] + ([] if self.first_failure else [Phase.shrink]),
        )
        settings.load_profile(PROFILE)
        draw_from_the_seed_alone()

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

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        session.config.option.tbstyle = "value"  # nothing reads a test's report but this plugin

    # --- fixtures -----------------------------------------------------------------------
    @pytest.fixture(name="course")
    def course_fixture(self) -> Course:
        return self.course

    @pytest.fixture
    def sandbox(self, request: pytest.FixtureRequest):
        exercise = self.course.exercise(request.node.stash[_EXERCISE])
        request.node.stash[_SESSION] = self._open(exercise, _hidden(request.node))
        yield request.node.stash[_SESSION]
        self._close(request.node.stash[_SESSION], exercise)  # the one a replay that did not pass left

    def _open(self, exercise: Exercise, hidden: bool) -> Session:
        """A session for one property of ``exercise``, with what is left of the time budgets."""
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
        return open_session(self.course, self.submission, exercise, min(limits.property_seconds, left),
                            self._known(exercise), self._standby(exercise, hidden))

    def _close(self, session: Session, exercise: Exercise) -> None:
        session.close()
        self.spent[exercise.module] += session.spent

    def _standby(self, exercise: Exercise, hidden: bool) -> Standby:
        """The :class:`~autograder.standby.Standby` of the exercise's public or hidden properties
        (those run one after another: the last one's is closed, so that no worker idles). The
        hidden ones never share a zygote, nor a worker booted ahead, with the public ones."""
        key = (exercise.module, hidden)
        if key not in self.standbys:
            self.close_standbys()
            self.standbys[key] = Standby(*worker_setup(self.course, self.submission, exercise),
                                         module=f"{self.course.package}.{exercise.module}")
        return self.standbys[key]

    def close_standbys(self) -> None:
        for standby in self.standbys.values():
            standby.close()
        self.standbys.clear()

    def _known(self, exercise: Exercise) -> Known:
        """What this exercise's properties learn for the next ones (:class:`~autograder.proxy.Known`)."""
        if exercise.module not in self.known:
            package = self.submission / self.course.package
            module, init = (path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
                            for path in (package / f"{exercise.module}.py", package / "__init__.py"))
            self.known[exercise.module] = Known(f"{self.course.package}.{exercise.module}", sure_stubs(module, init))
        return self.known[exercise.module]

    @pytest.fixture
    def student(self, sandbox: Session, request: pytest.FixtureRequest):
        return sandbox.module(f"{self.course.package}.{request.node.stash[_EXERCISE]}")

    @pytest.fixture
    def reference(self, request: pytest.FixtureRequest):
        if self.course.is_release:
            raise GraderError(f"{request.node.nodeid} needs the reference solutions, which a student release lacks")
        return importlib.import_module(f"{self.course.solutions}.{request.node.stash[_EXERCISE]}")

    # --- replaying the examples of a property that passed (autograder.replay) ----------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function):
        test = pyfuncitem.obj
        inner = test.hypothesis.inner_test if getattr(test, "is_hypothesis_test", False) else None
        if inner is not None:
            test.hypothesis.inner_test = _printing_afresh(pyfuncitem, inner)
        if replayable(pyfuncitem) and set(pyfuncitem.fixturenames) <= _OWN_FIXTURES:
            pyfuncitem.obj = functools.wraps(test)(functools.partial(self._replay_or_run, pyfuncitem, test))
        try:
            yield
        finally:
            pyfuncitem.obj = test
            if inner is not None:
                test.hypothesis.inner_test = inner

    def _replay_or_run(self, item: pytest.Function, test: Any, **fixtures: Any) -> None:
        """The hypothesis test ``test``: replayed on its recorded examples if it has them and
        they all pass; else run by hypothesis on a fresh session, recording its examples if it passes.

        A replay that fails is a failure whatever hypothesis finds next: an example that fails
        on replay is one hypothesis would have shown, so a submission that gives the same
        answers fails there too, and hypothesis's run only shrinks the example and words the
        feedback. One whose answers change from run to run (chance, time, which worker it is)
        must not get a second try that a grading without records would not give."""
        inner = test.hypothesis.inner_test
        examples = self.examples.load(item.nodeid, test)
        replayed = None if examples is None else passes(inner, fixtures, examples)
        if replayed:
            return
        replay_failed = replayed is False
        if replay_failed:
            fixtures = self._start_afresh(item, fixtures)
        recorder = Recorder(inner, set(fixtures))
        test.hypothesis.inner_test = recorder.test
        try:
            test(**fixtures)
        finally:
            test.hypothesis.inner_test = inner
        if replay_failed:
            raise AssertionError(_("an example failed, and the same examples passed when run again on a fresh "
                                   "worker: the submission's answers change from one run to the next (chance, the "
                                   "time, or the worker it runs in), so the property fails"))
        if recorder.wires is not None:
            self.examples.save(item.nodeid, test, recorder.wires)

    def _start_afresh(self, item: pytest.Function, fixtures: dict[str, Any]) -> dict[str, Any]:
        """``fixtures`` with the property's session replaced by a new one, as if the replay had not been.

        The exercise's budget is not charged for the replay, so that hypothesis's run meets the
        budget (and a hang the same time limit) as it would have; the submission's budget, wall
        time since grading began, still counts everything."""
        exercise = self.course.exercise(item.stash[_EXERCISE])
        item.stash[_SESSION].close()
        session = item.stash[_SESSION] = self._open(exercise, _hidden(item))
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
        error = _leaf(call.excinfo.value if call.excinfo else None)
        if error is not None and _is_broken_sandbox(error):
            self.broken = f"{item.nodeid}: {error}"
            item.session.shouldstop = "a worker did not start"
            return
        output = "" if report.passed else _feedback(item, error, hidden, self.course.limits.feedback_chars,
                                                      session.printed if session is not None else "")
        self.results.append(PropertyResult(
            exercise=item.stash[_EXERCISE], name=item.originalname, points=points,
            score=points if report.passed else 0, passed=report.passed, hidden=hidden, output=output,
            blocked=not report.passed and is_blocked(error),
        ))
        self.places.append(item.stash[_PLACE])

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


def draw_from_the_seed_alone() -> None:
    """Stop hypothesis from mixing literals of imported modules into its examples.

    Hypothesis sometimes draws a constant found in the source of any *local* module that
    happens to be imported (``hypothesis.internal.conjecture.providers``). A grader process
    imports different modules under ``check``, ``grade``, nbgrader or a long-lived test
    process, and editing a suite's messages changes its literals, so the same seed drew
    different examples and a submission could score differently. With this, the examples
    depend on the seed, the strategies and the submission's answers only. Hypothesis is
    pinned; ``tests/test_plugin.py`` fails if this hook stops working after an upgrade.
    """
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    if not hasattr(providers, "_get_local_constants"):
        raise GraderError("this hypothesis version draws constants differently; update draw_from_the_seed_alone")
    providers._get_local_constants = Constants  # a new, empty pool on every call
    providers.CONSTANTS_CACHE.cache.clear()


_EXERCISE = pytest.StashKey[str]()
_FIXTURE_LINE = re.compile(r"^\s+(student|reference|sandbox|course)=.*,$")
_RECORDED = pytest.StashKey[bool]()
_PLACE = pytest.StashKey[int]()  # a property's place in the suites' order
_SESSION = pytest.StashKey[Session]()
_OWN_FIXTURES = {"course", "sandbox", "student", "reference", "request"}  # what a replay can start afresh


def _feedback(item: pytest.Function, error: BaseException | None, hidden: bool, limit: int,
              printed: str = "") -> str:
    """What a student reads about a failed property, at most ``limit`` characters (and the cut's marker).

    A public failure shows the student's own exception message and traceback, and what the
    student's code ``printed`` during the failing example, which are as long as the student
    makes them: each part gets a share of the limit, so a huge message leaves room for the
    falsifying example below it. A hidden failure shows none of them.
    """
    error = _leaf(error)
    summary = description(item.function) or item.originalname
    if hidden:
        return f"{summary} — {_reason(error)}."
    share = limit // 3
    if is_blocked(error):  # the same words for every property it stops: no example, nothing printed
        return clip(f"{summary}\n\n{clip(str(error), share)}", limit)
    notes = "\n".join(line for note in getattr(error, "__notes__", []) for line in note.splitlines()
                      if not _FIXTURE_LINE.match(line))
    lines = [summary, "", clip(str(error), share) if error is not None else _("failed")]
    if isinstance(error, StudentError) and error.traceback.strip():
        lines += ["", _("Where it was raised:"), clip(error.traceback.rstrip(), share)]
    if not isinstance(error, (AssertionError, StudentError, SandboxFailure, MissingName)):
        lines[2] = clip(_("the grader hit an internal error ({error}: {message}); tell your instructor")
                        .format(error=type(error).__name__, message=error), share)
    if notes:
        lines += ["", clip(notes.strip(), share)]
    if printed.strip():
        lines += ["", _("What your code printed during this example:"),
                  clip(printed, min(share, PRINTED_CHARS)).rstrip()]
    return clip("\n".join(lines), limit)


def description(function: Any) -> str:
    """What a property checks, as feedback shows it: the first paragraph of its docstring, on one
    line (a docstring wraps its sentence over several lines; a student reads all of it)."""
    paragraph = (getattr(function, "__doc__", None) or "").strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def is_blocked(error: BaseException | None) -> bool:
    """Whether the student's code stopped the property before it could judge an answer
    (:attr:`~autograder.results.PropertyResult.blocked`)."""
    return isinstance(error, SandboxFailure) and error.kind in ("not_implemented", "import", "budget")


def _leaf(error: BaseException | None) -> BaseException | None:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _hidden(item: pytest.Item) -> bool:
    return item.get_closest_marker("hidden") is not None


def _is_broken_sandbox(error: BaseException | None) -> bool:
    """Whether ``error`` says a worker could not start or confine itself: before any student
    code runs in it, so the grader's machine failed, not the submission."""
    return isinstance(error, SandboxFailure) and error.kind == "sandbox"


_SANDBOX_REASONS = {"timeout": N_("timed out"), "crash": N_("crashed"), "protocol": N_("crashed"),
                    "import": N_("could not be imported"), "not_implemented": NOT_WRITTEN,
                    "budget": N_("time budget used up")}


def _reason(error: BaseException | None) -> str:
    """A hidden property's reason, from a closed set: nothing the student's code chose (an
    exception's name or message) may reach it, or it could spell out the hidden inputs."""
    if isinstance(error, SandboxFailure):
        return _(_SANDBOX_REASONS.get(error.kind, N_("failed")))
    if isinstance(error, StudentError):
        if _is_builtin_exception(error):
            return _("raised {error}").format(error=error.type_name)
        return _("raised a non-built-in exception")
    if isinstance(error, AssertionError):
        return _("wrong result")
    if isinstance(error, AttributeError):
        return _("a name is missing")
    return _("failed")


def _is_builtin_exception(error: StudentError) -> bool:
    """Whether the student's exception is one of Python's own, judged here from its class
    name and the names of its bases (the worker's word, so only a built-in's exact lineage counts)."""
    builtin = getattr(builtins, error.type_name, None)
    return (isinstance(builtin, type) and issubclass(builtin, BaseException)
            and error.mro == [cls.__name__ for cls in builtin.__mro__])


def open_session(course: Course, submission: Path, exercise: Exercise, budget_seconds: float,
                 known: Known | None = None, standby: Standby | None = None) -> Session:
    """A sandbox session on a prepared submission, with the course's limits for ``exercise``."""
    return Session(*worker_setup(course, submission, exercise), budget_seconds=budget_seconds, known=known,
                   standby=standby)


def worker_setup(course: Course, submission: Path, exercise: Exercise) -> tuple[Layout, Limits]:
    """What the workers of ``exercise`` see, and their limits."""
    limits = course.limits
    call_seconds = exercise.call_seconds or limits.call_seconds
    return (
        Layout(
            submission=submission,
            support_modules=tuple(course.path(m) for m in course.sandbox.support_modules),
            readonly_paths=tuple(course.path(p) for p in course.sandbox.readonly_paths),
            env={k: v.format(root=course.root) for k, v in course.sandbox.env.items()},
        ),
        Limits(call_seconds=call_seconds, cpu_seconds=int(limits.property_seconds + call_seconds) + 1,
               memory_mb=limits.memory_mb, processes=limits.processes, file_mb=limits.file_mb,
               open_files=limits.open_files, message_mb=limits.message_mb, disk_mb=limits.disk_mb),
    )


@in_course_language
def run_suites(course: Course, submission: Path, public_only: bool = False,
               exercises: list[str] | None = None, first_failure: bool = False,
               observers: tuple[object, ...] = (), began: float | None = None,
               public_results: list[PropertyResult] | None = None) -> tuple[list[PropertyResult], float]:
    """Grade one prepared submission in this process; returns the results, in the suites' order,
    and the seconds taken.

    ``first_failure`` stops at the first failing property, unshrunk (the other properties are
    not run): for :mod:`autograder.mutate`, which asks only whether a mutant is caught, and
    registers ``observers`` (more pytest plugins) beside the grading plugin to see how. The
    submission's time budget counts from ``began`` (``time.monotonic()``; default now): a
    submission graded in parts (:class:`autograder.grading.Parts`) has one budget, not one a part.
    With ``public_results`` (the results of the public properties, graded before), only the
    hidden properties run, and the results returned are all of them.

    A worker that cannot start fails the grading (:class:`GraderError`): the machine failed, so
    no property may count it against the submission."""
    plugin = GradingPlugin(course, submission, public_only, exercises, first_failure, began, public_results)
    args = [str(course.path(e.suite)) for e in plugin.chosen] + [
        "-c", str(Path(__file__).with_name("pytest.ini")), "--rootdir", str(course.root),
        "-p", "no:cacheprovider", "-p", "no:terminal", "-p", "no:warnings",
        # they only warn, of what student code (in the workers) cannot cause; unraisableexception
        # also collected the garbage five times at the end of every grading
        "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:faulthandler",
        # of the installed plugins only hypothesis's: loading the others (anyio's, platformdirs')
        # and rewriting their modules' asserts took a second of every grader process's first grading
        "--disable-plugin-autoload", "-p", "_hypothesis_pytestplugin",
        f"--hypothesis-seed={course.hypothesis.seed}", "--import-mode=importlib", "-o", "python_files=*.py",
    ] + (["-x"] if first_failure else [])
    started = time.monotonic()
    with on_path(course.root):
        try:
            code = pytest.main(args, plugins=[plugin, *observers])
        finally:
            plugin.close_standbys()
    if plugin.problems:
        raise GraderError("the course's suites are broken:\n" + "\n".join(plugin.problems))
    if plugin.broken is not None:
        raise GraderError(f"the sandbox failed, so this submission was not graded: {plugin.broken}")
    filtered = public_only or public_results is not None  # an exercise may have no property of that kind
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) \
            and not (filtered and code == pytest.ExitCode.NO_TESTS_COLLECTED):
        raise GraderError(f"pytest stopped with {pytest.ExitCode(code).name} while grading")
    return plugin.in_suite_order(), time.monotonic() - started


@contextlib.contextmanager
def on_path(root: Path) -> Iterator[None]:
    """Put the course root first on ``sys.path`` (for the solutions and suites) for a while,
    having forgotten the modules another course left imported under its names."""
    forget_other_courses(root)
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))


def forget_other_courses(root: Path) -> None:
    """Drop from ``sys.modules`` every module named as a folder or module at the top of ``root``
    (``suites``, the solutions, a support package) but loaded from elsewhere: a process that
    graded one course, or one version of it, then grades another by the other's own files.
    This engine and the standard library are never dropped."""
    root = root.resolve()
    names = {p.stem if p.suffix == ".py" else p.name for p in root.iterdir() if p.is_dir() or p.suffix == ".py"}
    names -= {__name__.split(".")[0], *sys.stdlib_module_names}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in names:
            continue
        file = getattr(module, "__file__", None)
        places = [file] if file else list(getattr(module, "__path__", []))
        if not places or not all(Path(place).resolve().is_relative_to(root) for place in places):
            del sys.modules[name]
