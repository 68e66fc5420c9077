"""Requests of one property that can go to its worker together, sent in batches.

Each piece of work runs in a greenlet of its own (a *task*), with its own state of hypothesis's
random generators and its own printed text: the recorded examples of a replayed property
(:func:`replay`) and the independent calls a suite hands to :func:`together`. When every task
still running waits on the worker, their requests go to it as one frame, in the tasks' order
(``answer_batch`` in :mod:`autograder.isolation.inside.worker`), and each task goes on with its
answer. What a frame may carry, and what a failed batch does: docs/architecture.md, "Side by
side: one round trip for many calls".
"""

from __future__ import annotations

import contextvars
import functools
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from greenlet import greenlet

from .. import internals
from ..errors import SandboxFailure, TimedOut
from . import randoms
from .replay import Example, example_passes

if TYPE_CHECKING:
    from .session import Call, Session


class Outcome:
    """What a replay side by side found: every example passed, one failed as it would have one
    example after another, or it could not tell (the caller replays one example after another)."""

    PASSED, FAILED, UNDECIDED = "passed", "failed", "undecided"


def replay(inner: Callable[..., Any], fixtures: dict[str, Any], examples: list[Example], session: Session) -> str:
    """Replay ``examples`` of a property whose calls go to ``session``: the first alone, as a
    replay one example after another starts, then the rest side by side. A submission that fails a
    property mostly fails its first example, which then costs no call of the examples after it.

    Until the property's worker has started, the session answers the first lookups, and a call to a
    sure stub, itself: so a failure before any batch of its group, every example before it done, is
    the one a replay one example after another meets."""
    with internals.seeded_randoms():
        for group in filter(None, (examples[:1], examples[1:])):
            outcome = _side_by_side(inner, fixtures, group, session)
            if outcome != Outcome.PASSED:
                return outcome
    return Outcome.PASSED


def _side_by_side(inner: Callable[..., Any], fixtures: dict[str, Any], examples: list[Example],
                  session: Session) -> str:
    """Replay ``examples`` side by side, after every example before them passed."""
    scheduler = Scheduler(session)
    failed_alone: list[bool] = []  # an example that failed as it would have one example after another

    def failed(task: Task) -> bool:
        if task.value is True:
            return False
        earlier = tasks[:tasks.index(task)]  # alone: no other example's call reached the worker before it failed
        failed_alone.append((len(tasks) == 1 or scheduler.batches == 0) and all(other.done for other in earlier))
        return True

    tasks = [scheduler.task(functools.partial(example_passes, inner, fixtures, example)) for example in examples]
    if scheduler.run(tasks, stop_at=failed):
        return Outcome.PASSED
    return Outcome.FAILED if failed_alone == [True] or scheduler.timed_out else Outcome.UNDECIDED


def together(session: Session, calls: Sequence[Callable[[], Any]]) -> list[Any]:
    """What each of ``calls`` returns, its requests sent side by side with the others'; the first
    exception, in the calls' order, is raised, as calling them one after another would raise it
    (calls after it are made, and their answers dropped). Inside a replay side by side, the calls
    join its batches; elsewhere they get batches of their own, and are made again one after
    another if a batch fails."""
    scheduler = session.scheduler
    if isinstance(scheduler, Scheduler) and scheduler.current is not None:
        outcomes = scheduler.join([scheduler.task(call, scheduler.current) for call in calls])
    else:
        scheduler = Scheduler(session)
        tasks = [scheduler.task(call) for call in calls]
        if not scheduler.run(tasks):
            return [call() for call in calls]
        outcomes = tasks
    for task in outcomes:
        if task.error is not None:
            raise task.error
    return [task.value for task in outcomes]


class Ask(NamedTuple):
    """A task's request, waiting for the next batch."""

    payload: bytes
    timeout: float
    call: Call  # what a failure's message names


class Stop(BaseException):
    """The tasks have stopped (a batch failed): a waiting task unwinds from its request."""


@dataclass(eq=False)
class Task:
    """One piece of work in a greenlet: what it returned or raised, its random generators' states
    (None: seeded as hypothesis seeds them before an example) and what its calls printed."""

    body: greenlet = field(repr=False)
    randoms: list[randoms.State] | None = field(default=None, repr=False)
    printed: str = ""
    joiner: Task | None = field(default=None, repr=False)  # the task waiting for this one (:func:`together`)
    waiting_for: int = 0  # the tasks this one waits for, still running
    joined: list[Task] = field(default_factory=list, repr=False)
    done: bool = False
    value: Any = None
    error: BaseException | None = None


class Scheduler:
    """The tasks of one session, run by the greenlet that made it (the *hub*)."""

    def __init__(self, session: Session):
        self.session = session
        self.hub = greenlet.getcurrent()
        self.ready: deque[tuple[Task, Any]] = deque()  # tasks to resume, with what to resume them with
        self.asking: list[tuple[Task, Ask]] = []
        self.current: Task | None = None
        self.live: list[randoms.State] | None = None  # the random states after the last turn, while no other code ran
        self.stopped = False
        self.batches = 0
        self.timed_out = False  # a batch's call ran past its time

    def task(self, work: Callable[[], Any], parent: Task | None = None) -> Task:
        """A task that will do ``work``; a child of ``parent`` starts with its random states."""
        task: Task = Task(greenlet(lambda: self._body(task, work), parent=self.hub))
        task.body.gr_context = contextvars.copy_context()  # a greenlet starts with an empty one
        if parent is not None:
            task.randoms = randoms.read()
        return task

    def run(self, tasks: list[Task], stop_at: Callable[[Task], bool] | None = None) -> bool:
        """Run ``tasks`` to their end; False if a batch failed, or one of ``tasks`` ended as
        ``stop_at`` says (every task still running is then stopped)."""
        self.ready.extend((task, None) for task in tasks)
        self.session.scheduler, self.session.batcher = self, self.ask
        self.live = None  # the property's code ran since the last run
        try:
            while self.ready or self.asking:
                while self.ready:
                    task = self._resume(*self.ready.popleft())
                    if stop_at is not None and task.done and task.joiner is None and stop_at(task):
                        return False
                if self.asking and not self._batch():
                    return False
            return True
        finally:
            self.session.scheduler = self.session.batcher = None
            self._stop(tasks)

    # --- what tasks call, in their greenlets ------------------------------------------------
    def ask(self, payload: bytes, timeout: float, call: Call) -> bytes:
        """A task's request (the session's ``batcher``): wait for the batch that carries it."""
        if self.stopped or self.current is None:
            raise Stop
        self.asking.append((self.current, Ask(payload, timeout, call)))
        return self.hub.switch()

    def join(self, children: list[Task]) -> list[Task]:
        """Run ``children`` side by side with everything else; return them once all have ended."""
        parent = self.current
        if parent is None or self.stopped:
            raise Stop
        parent.joined, parent.waiting_for = children, len(children)
        for child in children:
            child.joiner = child.joiner or parent
        self.ready.extend((child, None) for child in children)
        if not children:
            return []
        return self.hub.switch()

    # --- the hub ----------------------------------------------------------------------------------
    def _body(self, task: Task, work: Callable[[], Any]) -> None:
        try:
            task.value = work()
        except Stop:
            raise
        except BaseException as error:  # handed to whoever reads the task (a SandboxFailure included)
            task.error = error
        task.done = True

    def _resume(self, task: Task, answer: Any) -> Task:
        """Run ``task`` until it asks, waits for its children, or ends; return it."""
        if task.randoms is None:
            internals.reseed_randoms()
        else:
            randoms.put_back(task.randoms, self.live)
        self.session.printed, self.current = task.printed, task
        try:
            task.body.switch(answer) if task.body else task.body.switch()  # not started: no answer yet
        finally:
            self.current = None
            task.randoms, task.printed = randoms.read(task.randoms), self.session.printed
            self.live = task.randoms
        if task.done and task.joiner is not None:
            self._child_ended(task)
        return task

    def _child_ended(self, child: Task) -> None:
        parent = child.joiner
        assert parent is not None
        parent.waiting_for -= 1
        if parent.waiting_for == 0:  # what the children printed is the parent's, in their order
            parent.printed += "".join(c.printed for c in parent.joined)
            self.ready.append((parent, parent.joined))

    def _batch(self) -> bool:
        """Send the waiting requests as one frame, within what is left of the property's time
        budget, and queue each task with its answer; False if the worker did not answer them all."""
        asking, self.asking = self.asking, []
        worker = self.session.worker
        if worker is None:
            return False
        asks = [ask for _, ask in asking]
        try:
            answers = self.session.ask_many(worker, [ask.payload for ask in asks], [ask.timeout for ask in asks],
                                            [ask.call for ask in asks])
        except TimedOut as failure:  # kept by the session: the same call fails again at once
            self.session.close()
            late = asks[failure.index]
            self.session.timed_out(late.call, failure, late.payload)
            self.timed_out = True
            return False
        except SandboxFailure:
            self.session.close()
            return False
        self.batches += 1
        self.ready.extend((task, answer) for (task, _), answer in zip(asking, answers, strict=True))
        return True

    def _stop(self, tasks: list[Task]) -> None:
        """End every task still waiting: each unwinds from its request."""
        self.stopped = True
        pending = list(tasks)
        while pending:
            task = pending.pop()
            pending.extend(task.joined)
            if task.body:  # started and not ended
                try:
                    task.body.throw(Stop)
                except Stop:
                    pass
