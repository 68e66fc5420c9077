"""Student objects seen from the grader: remote proxies over a sandboxed worker.

A :class:`Session` is one property's view of one submission (:func:`open_session`):
``session.module(name)`` is a :class:`Remote`, whose attributes and calls are requests to the
worker, answered as plain data or as new ``Remote`` objects. It starts its worker on first use
(from the exercise's :class:`~autograder.isolation.Standby`), restarts it after a crash, enforces
the call limit and the property's budget, and turns every failure into a
:class:`~autograder.errors.StudentError` or :class:`~autograder.errors.SandboxFailure`.
:class:`FreshAnswers` and :class:`DeferredLookup` spare worker starts and round trips:
docs/architecture.md, "Calls that need no worker".
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Course, Exercise
from ..errors import ArgumentChanged, SandboxFailure, StudentError, TimedOut
from ..i18n import _
from ..isolation import Child, Layout, Standby, Worker, WorkerLimits, codec, fresh_worker
from .overruns import Overruns

PRINTED_CHARS = 4000  # of what an example's calls print, what a session keeps for the feedback
SHOWN_NAMES, SHOWN_NAME = 8, 80  # of the arguments a call changed, how many (and how much of each name) a failure shows
SHOWN_CHARS = 400  # of one argument as a failure shows it: a student pastes the call; beyond this, a marker


def shown_call(label: str, args: tuple, kwargs: dict) -> str:
    """A call as messages show it, as a student would write it: ``Tok.encode('the cat', add_eos=True)``.

    Each argument is written out whole (dicts in their real order, which can decide a
    student's tie-breaks; a student object by its name), unless it is longer than
    :data:`SHOWN_CHARS`: then it is cut where a marker says so, never shortened silently."""
    shown = [*map(_argument, args), *(f"{k}={_argument(v)}" for k, v in kwargs.items())]
    return f"{label}({', '.join(shown)})"


def _argument(value: Any) -> str:
    text = _written(value)
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}…[{len(text) - SHOWN_CHARS:,} more characters]"


def _written(value: Any) -> str:
    """``repr(value)``, but a student object (a support module's function, say) by its name."""
    match value:
        case Remote() | DeferredLookup():
            text = value._label
        case list() | tuple() if type(value) in (list, tuple):
            items = [_written(item) for item in value]
            text = (f"[{', '.join(items)}]" if type(value) is list
                    else f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})")
        case dict() if type(value) is dict:
            text = "{" + ", ".join(f"{_written(k)}: {_written(v)}" for k, v in value.items()) + "}"
        case set() | frozenset() if type(value) in (set, frozenset):
            text = _written_set(value)
        case _:
            text = repr(value)
    return text


def _written_set(value: set | frozenset) -> str:
    """A set in a fixed order: a set's own depends on the process's hashes."""
    members = ", ".join(sorted(map(_written, value)))
    if type(value) is set:
        return "{" + members + "}" if members else "set()"
    return "frozenset({" + members + "})" if members else "frozenset()"


class CallText:
    """A call as messages show it (:func:`shown_call`), written out only when a message is: it
    is costly next to a round trip, and almost every call succeeds. A message is
    written when the failure is raised, before the suite can change the arguments."""

    __slots__ = ("label", "args", "kwargs")

    def __init__(self, label: str, args: tuple, kwargs: dict):
        self.label, self.args, self.kwargs = label, args, kwargs

    def __str__(self) -> str:
        return shown_call(self.label, self.args, self.kwargs)


Call = str | CallText  # what a failure's message names: a lookup's label, or a call


def not_implemented(call: Call) -> SandboxFailure:
    """The failure of a call to code not written yet. It names the function, not the arguments:
    every property that calls it fails with the same words, which a report says once."""
    name = call.label if isinstance(call, CallText) else call
    return SandboxFailure("not_implemented", _("{name} is not implemented yet").format(name=name))


_PROBES = frozenset({"execute_example", "setup_example", "teardown_example"})


class MissingName(AttributeError):
    """A name the suite asked for does not exist in the student's code."""


class Remote:
    """An object that lives in the worker; every attribute and call is a request."""

    __slots__ = ("_session", "_number", "_generation", "_label")

    def __init__(self, session: Session, number: int, generation: int, label: str):
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_number", number)
        object.__setattr__(self, "_generation", generation)
        object.__setattr__(self, "_label", label)

    def __getattr__(self, name: str) -> Any:
        if name.startswith(("_", "hypothesis_internal")) or name in _PROBES:
            raise AttributeError(name)  # dunders and the probes of test tools never reach the student
        if self._session._calls_by_name(self, name):
            return DeferredLookup(self, name)
        return self._session._ask({"op": "getattr", "target": self, "name": name}, f"{self._label}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        message = {"op": "call", "target": self, "args": list(args), "kwargs": kwargs}
        return self._session._ask(message, CallText(self._label, args, kwargs))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("student objects are read through calls, not assignment")

    def __repr__(self) -> str:
        return f"<student {self._label}>"


class DeferredLookup:
    """``target.name`` not looked up yet: calling it asks the worker once, for the lookup and
    the call together, where a :class:`Remote` asks twice. Anything else done with it (an
    attribute, sending it to the worker) looks it up first, and goes on as with what it found.

    A session hands one out only for a name whose last lookup, on a like object, found a
    student object (``student.encode``, ``tok.train``), or for a sure stub of the exercise's
    module, which a lookup can only find; so it stands for a student object, whose every other
    use is one of those. Failures are those of the two requests, with one difference: if the
    name stopped naming anything since (student code deleted it), that failure comes at the
    call, or at the first use, rather than at the ``.name``, and it has the same words."""

    __slots__ = ("_target", "_name", "_label")

    def __init__(self, target: Remote, name: str):
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_label", f"{target._label}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target._session._call_member(self, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith(("_", "hypothesis_internal")) or name in _PROBES:
            raise AttributeError(name)
        return getattr(self._look_up(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("student objects are read through calls, not assignment")

    def __repr__(self) -> str:
        return f"<student {self._label}>"

    def _look_up(self) -> Any:
        return self._target._session._ask({"op": "getattr", "target": self._target, "name": self._name}, self._label)


@dataclass(frozen=True)
class LookupAnswer:
    """A :class:`DeferredLookup` call's answer that is not the call's: ``lookup_error`` or ``attr``."""

    kind: str
    value: Any


@dataclass
class FreshAnswers:
    """What the properties of one exercise learnt that holds for every fresh worker: the module
    the exercise imports, its sure stubs, and the answers to the lookups that begin a session
    (keyed by the requests so far, in order)."""

    module: str
    stubs: dict[str, inspect.Signature]
    answers: dict[tuple[bytes, ...], bytes] = field(default_factory=dict)


class Session:
    """The worker behind one property, with its time limits."""

    def __init__(self, layout: Layout, limits: WorkerLimits, budget_seconds: float,
                 clock: Callable[[], float] = time.monotonic, known: FreshAnswers | None = None,
                 standby: Standby | None = None):
        self.layout = layout
        self.overruns: Overruns | None = None  # what ran past its time in the exercise (:meth:`keeping`)
        self.place = ""  # the name of the property (or locked case) the session serves
        self.arguments_unchanged = False  # whether a call that changes its arguments fails (ArgumentChanged)
        self.limits = limits
        self.standby = standby
        self.budget = budget_seconds
        self.spent = 0.0
        self.took: dict[str, float] = {}  # seconds spent in the worker, by the function called
        self.overran: set[bytes] = set()  # the requests this session waited for until they ran past their time
        self.clock = clock
        self.worker: Worker | Child | None = None
        self.generation = 0
        self.known = known
        self.lookups: list[bytes] | None = [] if known is not None else None  # while only looking up
        self.members: set[tuple[str, str]] = set()  # (label, name): the lookups that found a student object
        self.exercise_modules: set[tuple[int, int]] = set()  # (number, generation): imports of the exercise's module
        self.printed = ""  # what the calls printed since the plugin last emptied it (each example): at most
        # PRINTED_CHARS, and one character more if more came
        # set while a replay runs a property's examples side by side (engine/breadth.py): it carries
        # each request to the worker in a batch with the other examples' requests, and returns its answer
        self.batcher: Callable[[bytes, float, Call], bytes] | None = None
        self.scheduler: Any = None  # the engine/breadth.py scheduler whose tasks use this session, if any

    def keeping(self, overruns: Overruns, place: str) -> Session:
        """This session, serving the property (or locked case) called ``place``, its time-outs
        kept in ``overruns``, its exercise's, where it finds those of the properties before."""
        self.overruns, self.place = overruns, place
        return self

    def module(self, name: str) -> Remote:
        """A module imported in the worker (the student's, or a course support module)."""
        return self._ask({"op": "import", "module": name}, f"import {name}")

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def _ask(self, message: dict, call: Call) -> Any:
        if message["op"] in ("call", "import") and self.overruns is not None:
            self.overruns.check(_function(call), self.place)
        self._left(call)
        if self.lookups is not None and self.worker is None:
            return self._ask_known(message, call)
        if self.worker is None:
            self.worker = self._new_worker()
            self.generation += 1
        return self._ask_worker(message, call, codec.dumps(message, self._handle_out))

    def _calls_by_name(self, target: Remote, name: str) -> bool:
        """Whether ``target.name`` is best handed out as a :class:`DeferredLookup`: ``target`` is the
        exercise's module (as imported, not an object of the student's that is labelled alike)
        and ``name`` one of its sure stubs, whose lookup can only find it, so a call that binds
        fails with no worker at all; or ``name`` found a student object on a like object before
        and the session has a worker and is past its first lookups (which :class:`FreshAnswers`
        answers without one)."""
        if self.known is not None and name in self.known.stubs \
                and (target._number, target._generation) in self.exercise_modules:
            return True
        return (target._label, name) in self.members and self.worker is not None and self.lookups is None

    def _call_member(self, member: DeferredLookup, args: tuple, kwargs: dict) -> Any:
        """``member(*args, **kwargs)`` in one request (the worker's ``call_member``)."""
        target, name = member._target, member._name
        message = {"op": "call", "target": target, "name": name, "args": list(args), "kwargs": kwargs}
        answer = self._ask(message, CallText(member._label, args, kwargs))
        if not isinstance(answer, LookupAnswer):
            return answer
        found: Any = answer.value if answer.kind == "attr" else None
        self._found(target._label, name, found)
        if answer.kind == "lookup_error":
            raise self._failure(member._label, answer.value, {"op": "getattr", "target": target, "name": name})
        # not callable: called here, as what a lookup would have found
        if isinstance(found, Remote):
            found = Remote(self, found._number, found._generation, member._label)
        return found(*args, **kwargs)

    def _new_worker(self) -> Worker | Child:
        """A fresh worker: from the exercise's :class:`~autograder.isolation.Standby`, if any."""
        return self.standby.take() if self.standby is not None else fresh_worker(self.layout, self.limits)

    def _ask_known(self, message: dict, call: Call) -> Any:
        """With no worker yet: answer from what earlier properties learnt; else start the worker,
        replay there the lookups answered so far, and ask it."""
        assert self.known is not None and self.lookups is not None
        self.generation = 1  # the first worker's, should one start
        payload = codec.dumps(message, self._handle_out)
        key = (*self.lookups, payload)
        if key in self.known.answers:
            self.lookups.append(payload)
            return self._reply(self.known.answers[key], message, call, payload, self.limits.call_seconds)
        if self._sure_stub(message):
            raise not_implemented(call)
        self.worker = self._new_worker()
        timeout = min(self.limits.call_seconds, self._left(call))
        answers = self._send(self.lookups, call, timeout) if self.lookups else []
        for done, answer in enumerate(answers, 1):
            if answer != self.known.answers[tuple(self.lookups[:done])]:
                self.close()
                raise SandboxFailure("protocol", _("{call}: two fresh workers answered the same lookup differently "
                                                   "(does importing the module depend on chance or time?)")
                                     .format(call=call))
        return self._ask_worker(message, call, payload)

    def _sure_stub(self, message: dict) -> bool:
        """A call, with arguments that bind, to a sure stub of the exercise's module (looked
        up before, or in the call: a :class:`DeferredLookup`'s)."""
        assert self.known is not None
        target = message.get("target")
        if message["op"] != "call" or not isinstance(target, Remote):
            return False
        module, _, name = (target._label, ".", message["name"]) if "name" in message else target._label.rpartition(".")
        signature = self.known.stubs.get(name)
        if signature is None or module != self.known.module.rpartition(".")[2]:
            return False
        try:
            signature.bind(*message["args"], **message["kwargs"])
        except TypeError:
            return False
        return True

    def _ask_worker(self, message: dict, call: Call, payload: bytes) -> Any:
        answer, timeout = self._exchange(payload, call)
        if self.lookups is not None and self.known is not None:  # still looking up: remember the answer
            if message["op"] in ("import", "getattr"):
                self.known.answers.setdefault((*self.lookups, payload), answer)
                self.lookups.append(payload)
            else:
                self.lookups = None
        return self._reply(answer, message, call, payload, timeout)

    def _exchange(self, payload: bytes, call: Call) -> tuple[bytes, float]:
        """The worker's answer to one request, and the call's time limit."""
        timeout = min(self.limits.call_seconds, self._left(call))
        if self.overruns is not None:
            if (failed := self.overruns.again(self.place, payload)) is not None:
                self._charge_again(call, payload, failed)
                raise failed
            timeout = self.overruns.limit(_function(call), self.place, timeout)
        if self.batcher is not None:  # the batch's time is charged once, by the batch
            return self.batcher(payload, timeout, call), timeout
        return self._send([payload], call, timeout)[0], timeout

    def _send(self, payloads: list[bytes], call: Call, timeout: float) -> list[bytes]:
        """The worker's answers to ``payloads``, sent in one frame, each within ``timeout``."""
        assert self.worker is not None
        try:
            return self.ask_many(self.worker, payloads, [timeout] * len(payloads), [call])
        except TimedOut as failure:
            self.worker = None
            raise self.timed_out(call, failure, payloads[failure.index]) from None
        except SandboxFailure as failure:
            self.worker = None
            raise SandboxFailure(failure.kind, f"{call}: {failure}") from None

    def ask_many(self, worker: Worker | Child, payloads: list[bytes], timeouts: list[float],
                 calls: list[Call]) -> list[bytes]:
        """``worker``'s answers to ``payloads``, sent in one frame, within what is left of the
        property's time budget, which is charged for them: the wall time they took, less what the
        worker waited for a CPU (:mod:`autograder.isolation.waiting`), which was its neighbours'.
        A request that runs past its time is charged at least the limit it met: one that met what
        was left of the budget uses it up, however long it waited for a CPU on the way."""
        started, met = self.clock(), 0.0
        try:
            return worker.request_many(payloads, timeouts, self.seconds_left())
        except TimedOut as failure:
            met = failure.seconds
            self.overran.add(payloads[failure.index])
            raise
        finally:
            self.charge(calls, max(met, self.clock() - started - worker.channel.waited))

    def charge(self, calls: list[Call], seconds: float) -> None:
        """Count ``seconds`` spent in the worker on ``calls`` (a batch's, shared evenly)."""
        self.spent += seconds
        for call in calls:
            function = _function(call)
            self.took[function] = self.took.get(function, 0.0) + seconds / len(calls)

    def _charge_again(self, call: Call, payload: bytes, failed: TimedOut) -> None:
        """A request that ran past its time before in this property fails at once, as it did; if
        this session did not wait for it (it ran past its time in a replay, whose session is gone:
        :mod:`~autograder.engine.replay`), its wait is charged here, so that a grading with
        records spends the budget as one without them does."""
        if payload not in self.overran:
            self.overran.add(payload)
            self.charge([call], self.seconds_left() if failed.budget else failed.seconds)

    def timed_out(self, call: Call, failure: TimedOut, payload: bytes) -> TimedOut:
        """The failure of ``call`` (the request ``payload``), which ran past its time, as a student
        reads it (:meth:`~autograder.engine.overruns.Overruns.timed_out`), kept."""
        overruns = self.overruns if self.overruns is not None else Overruns()
        return overruns.timed_out(str(call), _function(call), self.place, payload, failure, self.budget)

    def seconds_left(self) -> float:
        """What is left of the property's time budget."""
        return self.budget - self.spent

    def _left(self, call: Call) -> float:
        """What is left of the property's time budget; none left fails the call, in words that
        name the function the budget went on, which counts as having run past its time."""
        left = self.seconds_left()
        if left > 0:
            return left
        if not self.took:
            raise SandboxFailure("budget", _("{call}: the time budget of {seconds:g} s for this property is used up")
                                 .format(call=call, seconds=self.budget))
        function, seconds = max(self.took.items(), key=lambda item: item[1])
        if self.overruns is not None:
            self.overruns.used_up(function, self.place)
        raise SandboxFailure("budget", _("{call} was not called: this property's time budget of {budget:.3g} s is "
                                         "used up, {seconds:.3g} s of it by {function}")
                             .format(call=call, budget=self.budget, seconds=seconds, function=function))

    def _reply(self, answer: bytes, message: dict, call: Call, payload: bytes, timeout: float) -> Any:
        """The decoded answer: plain data, student objects, or the failure it reports. Decoding an
        answer, which came back in time, has the call's time limit again (ample for an answer
        within the size limit): longer, and the answer is too big, which is the student's."""
        started = self.clock()
        try:
            reply = codec.loads(answer, self._handle_in(self._label_for(message, call)),
                                deadline=time.monotonic() + timeout)
        except codec.CodecTimeout:
            self.close()
            self.overran.add(payload)
            raise self.timed_out(call, TimedOut("", timeout, budget=timeout < self.limits.call_seconds,
                                                answering=True), payload) from None
        except codec.CodecError as error:
            self.close()
            raise SandboxFailure("protocol", _("{call}: the worker's answer was not valid data ({error})")
                                 .format(call=call, error=error)) from None
        finally:
            self.charge([call], self.clock() - started)
        if type(reply) is dict and message["op"] == "call" and type(reply.get("printed", "")) is str:
            self.printed += reply.pop("printed", "")[:PRINTED_CHARS + 1 - len(self.printed)]
        changed = reply.pop("changed", None) if type(reply) is dict and message["op"] == "call" else None
        kinds = {"ok", "error"} | ({"lookup_error", "attr"} if "name" in message and message["op"] == "call" else set())
        if type(reply) is not dict or len(reply) != 1 or not (kinds & reply.keys()):
            self.close()
            raise SandboxFailure("protocol", _("{call}: the worker's answer had the wrong shape").format(call=call))
        (kind, value), = reply.items()
        if changed is not None and self.arguments_unchanged and kind != "lookup_error":
            raise self._changed(call, changed)
        if kind == "error":
            raise self._failure(call, value, message)
        if kind != "ok":
            return LookupAnswer(kind, value)
        if message["op"] == "getattr":
            self._found(message["target"]._label, message["name"], value)
        if message["op"] == "import" and self.known is not None and message["module"] == self.known.module \
                and isinstance(value, Remote):
            self.exercise_modules.add((value._number, value._generation))
        return value

    def _changed(self, call: Call, changed: Any) -> BaseException:
        """The failure of a call that changed its arguments: the worker's ``[[name, how], ...]``."""
        if type(changed) is not list or not changed or not all(
                type(item) is list and len(item) == 2 and all(type(part) is str for part in item) for item in changed):
            self.close()
            return SandboxFailure("protocol", _("{call}: the worker's answer had the wrong shape").format(call=call))
        return ArgumentChanged(str(call), [(name[:SHOWN_NAME], how) for name, how in changed[:SHOWN_NAMES]])

    def _found(self, label: str, name: str, value: Any) -> None:
        """Learn what a lookup of ``<label>.<name>`` found, for :meth:`_calls_by_name`."""
        if isinstance(value, Remote):
            self.members.add((label, name))
        else:
            self.members.discard((label, name))

    def _failure(self, shown: Call, info: Any, message: dict) -> BaseException:
        call = str(shown)  # spelt out once, for whichever message follows
        if type(info) is not dict:
            return SandboxFailure("protocol",
                                  _("{call}: the worker's error report had the wrong shape").format(call=call))
        error = StudentError(call, info)
        if message["op"] == "import":
            if error.is_a("ModuleNotFoundError") and f"'{message['module']}'" in error.message:
                return SandboxFailure("missing",
                                      _("{module} is missing from the submission").format(module=message["module"]))
            where = error.traceback.strip() or error.message
            failed = _("{call} failed with {error}: {message}").format(call=call, error=error.type_name,
                                                                        message=error.message)
            return SandboxFailure("import", f"{failed}\n{where}")
        if message["op"] == "getattr" and error.is_a("AttributeError"):
            return MissingName(_("{call} does not exist in the submission ({message})")
                               .format(call=call, message=error.message))
        if error.is_a("NotImplementedError"):
            return not_implemented(shown)
        return error

    def _handle_out(self, value: Any) -> Any:
        if isinstance(value, DeferredLookup) and value._target._session is self:  # sent as what it finds
            return codec.encode(value._look_up(), self._handle_out)
        if isinstance(value, Remote) and value._session is self:
            if value._generation != self.generation:
                raise SandboxFailure("protocol", _("{value} belonged to a worker that has since stopped")
                                     .format(value=repr(value)))
            return {"$handle": value._number}
        raise codec.CodecError(f"cannot send {type(value).__name__} to student code "
                               "(only plain data and student objects)")

    @staticmethod
    def _label_for(message: dict, call: Call) -> str | None:
        """How a returned object is named in messages: ``ex1.f``, ``Tok.train``; None: its type."""
        if message["op"] == "import":
            return message["module"].rsplit(".", 1)[-1]
        return str(call) if message["op"] == "getattr" else None

    def _handle_in(self, label: str | None) -> Callable[[Any], Remote]:
        def build(body: Any) -> Remote:
            if type(body) is not list or len(body) != 2 or type(body[0]) is not int or type(body[1]) is not str:
                raise codec.CodecError("malformed $handle")
            return Remote(self, body[0], self.generation, label or body[1])
        return build


def _function(call: Call) -> str:
    """What ``call`` calls, as messages name it: ``ex5_parity.ratio_curve``, ``import exercises.ex5_parity``."""
    return call.label if isinstance(call, CallText) else call


def open_session(course: Course, submission: Path, exercise: Exercise, budget_seconds: float,
                 known: FreshAnswers | None = None, standby: Standby | None = None) -> Session:
    """A session on a prepared submission, with the course's layout and limits for ``exercise``."""
    session = Session(Layout.for_course(course, submission),
                      WorkerLimits.for_course(course.limits, exercise.call_seconds), budget_seconds=budget_seconds,
                      known=known, standby=standby)
    session.arguments_unchanged = course.calls.arguments_unchanged
    return session
