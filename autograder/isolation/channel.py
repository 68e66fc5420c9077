"""The grader's end of one worker's pipes: the worker's hello, then one request and its answer at a time.

Frames are a length and a body (:mod:`autograder.isolation.inside.frames`, the worker's side).
Every write and read has a deadline; a worker that answers late, closes its pipe or sends an
answer larger than its limit ends the call with a :class:`~autograder.errors.SandboxFailure`
saying so, and is closed. What started the worker, and what ends it, is its owner's: a fresh
process (:class:`~autograder.isolation.process.Worker`) or a zygote's child
(:class:`~autograder.isolation.zygote.Child`), each of which talks over a channel of its own.
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
import time
from typing import IO, Protocol

from ..errors import SandboxFailure, TimedOut
from ..i18n import _
from .inside.frames import HEADER
from .limits import WorkerLimits
from .reaping import Strays
from .waiting import RunDelay


class Owner(Protocol):
    """What a channel asks of the worker it talks to."""

    killed: set[int]  # processes killed, to be collected when the worker closes

    def close(self) -> None: ...

    def exit_code(self) -> int | None:
        """How the worker ended (a negative signal number, or its exit status), closing it."""

    def greeted(self) -> None:
        """The worker said hello: it could confine itself."""


class Channel:
    """Requests to one worker and its answers, framed, each within a time limit."""

    def __init__(self, to_worker: IO[bytes], from_worker: IO[bytes], limits: WorkerLimits, strays: Strays,
                 owner: Owner):
        self.to_worker, self.from_worker = to_worker, from_worker
        self.limits, self.strays, self.owner = limits, strays, owner
        os.set_blocking(to_worker.fileno(), False)
        self.reading, self.writing = select.poll(), select.poll()
        self.reading.register(from_worker, select.POLLIN)
        self.writing.register(to_worker, select.POLLOUT)
        self.unread = bytearray()  # read from the worker, not asked for yet (mostly: an answer behind its header)
        self.ready = False
        self.waits = RunDelay()  # its answering process's, once its owner says which (watch)

    def request(self, payload: bytes, timeout: float) -> bytes:
        """Send one frame and wait at most ``timeout`` seconds, writing included, for the answer
        frame; then kill what the call started (:class:`~autograder.isolation.reaping.Strays`)."""
        return self.request_many([payload], [timeout])[0]

    def request_many(self, payloads: list[bytes], timeouts: list[float], within: float | None = None) -> list[bytes]:
        """Send ``payloads`` in one frame (one request alone, several as a JSON array: the worker's
        ``answer_batch``), and read an answer frame for each, the first within its timeout from
        the sending, each next one within its own from the one before, and all of them within
        ``within`` seconds of the sending, if given (what is left of a time budget); then kill
        what the calls started (:class:`~autograder.isolation.reaping.Strays`). A request that
        runs past its time raises :class:`~autograder.errors.TimedOut`, saying which and how.
        Every deadline moves on by the time the worker waited for a CPU (:mod:`.waiting`), which
        ``waited`` then says."""
        payload = payloads[0] if len(payloads) == 1 else b"[" + b",".join(payloads) + b"]"
        self.waits.begin(max(timeouts))
        end = math.inf if within is None else time.monotonic() + within
        deadline = min(time.monotonic() + timeouts[0], end)
        answers: list[bytes] = []
        try:
            if not self.ready:
                self._hello(deadline)
            self._write(HEADER.pack(len(payload)) + payload, deadline)
            for timeout in timeouts:
                if answers:
                    self.waits.lap()
                    deadline = min(time.monotonic() + timeout, end)
                answers.append(self._answer(deadline))
        except TimeoutError as late:
            arriving, own = isinstance(late, _Arriving) or bool(self.unread), timeouts[len(answers)]
            if within is not None and deadline >= end:
                raise self._timed_out(within, True, len(answers), arriving) from None
            raise self._timed_out(own, own < self.limits.call_seconds, len(answers), arriving) from None
        finally:
            self.waits.lap()
        self.owner.killed |= self.strays.kill()
        return answers

    @property
    def waited(self) -> float:
        """How long the worker's answering process waited for a CPU during the last request."""
        return self.waits.waited

    def watch(self, pid: int) -> None:
        """Process ``pid`` answers the requests: its wait for a CPU moves their deadlines."""
        self.waits.watch(pid)

    def _answer(self, deadline: float) -> bytes:
        """The next answer frame's body, by ``deadline``, within the size limit."""
        (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
        if size > self.limits.message_mb << 20:
            self.owner.close()
            raise SandboxFailure("protocol",
                                 _("the answer was larger than {size} MB").format(size=self.limits.message_mb))
        try:
            return self._read(size, deadline)
        except TimeoutError:
            raise _Arriving from None

    def wait_ready(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the worker's hello (:meth:`_hello`)."""
        try:
            if not self.ready:
                self._hello(time.monotonic() + timeout)
        except TimeoutError:
            raise self._timed_out(timeout, timeout < self.limits.call_seconds) from None

    def close(self) -> None:
        self.waits.close()
        for stream in (self.to_worker, self.from_worker):
            try:
                stream.close()
            except OSError:
                pass

    def _timed_out(self, seconds: float, budget: bool, index: int = 0, answering: bool = False) -> TimedOut:
        self.owner.close()
        why = _("what was left of the time budget") if budget else _("the time limit")
        return TimedOut(_("took longer than {seconds:.3g} s ({why})").format(seconds=seconds, why=why), seconds,
                        budget=budget, index=index, answering=answering)

    def _hello(self, deadline: float) -> None:
        """The worker's first frame says whether it could confine itself."""
        (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
        hello = json.loads(self._read(min(size, 4096), deadline))
        if not isinstance(hello, dict) or "ready" not in hello:
            self.owner.close()
            raise SandboxFailure("sandbox", f"the worker could not confine itself: {str(hello.get('broken'))[:500]}")
        self.ready = True
        self.strays.at_hello()
        self.owner.greeted()

    def _write(self, data: bytes, deadline: float) -> None:
        """Write ``data`` to the worker's pipe by ``deadline``, waiting only when the pipe is full."""
        view = memoryview(data)
        while view:
            if self.waits.deadline(deadline) <= time.monotonic():
                raise TimeoutError
            try:
                view = view[os.write(self.to_worker.fileno(), view):]
            except BlockingIOError:
                self._wait(self.writing, deadline)
            except OSError:
                raise self._death() from None

    def _read(self, size: int, deadline: float) -> bytes:
        """The worker's next ``size`` bytes, by ``deadline``. A read takes what the pipe holds, up to
        1 MB, so one read mostly brings a frame's header and its body together."""
        while len(self.unread) < size:
            self._wait(self.reading, deadline)
            chunk = os.read(self.from_worker.fileno(), min(max(size - len(self.unread), 1 << 16), 1 << 20))
            if not chunk:
                raise self._death()
            self.unread += chunk
        data = bytes(self.unread[:size])
        del self.unread[:size]
        return data

    def _wait(self, pipe: select.poll, deadline: float) -> None:
        """Wait until ``pipe`` (one registered end) is ready, or raise TimeoutError at ``deadline``
        (moved on by the worker's wait for a CPU)."""
        while (left := self.waits.deadline(deadline) - time.monotonic()) > 0:
            if pipe.poll(left * 1000):
                return
        raise TimeoutError

    def _death(self) -> SandboxFailure:
        """What the worker's end of the pipe closing says: how it ended."""
        code = self.owner.exit_code()
        if code is None or code == 0:
            how = _("the worker process stopped answering (os._exit or a closed pipe?)")
        elif code < 0 or code > 128:
            how = _killed(-code if code < 0 else code - 128)
        else:
            how = _("the worker process exited with status {code} (sys.exit or os._exit?)").format(code=code)
        if not self.ready:
            return SandboxFailure("sandbox", f"the worker did not start ({how})")
        return SandboxFailure("crash", how)


class _Arriving(TimeoutError):
    """The time ran out while an answer was coming in: the request was done."""


def _killed(number: int) -> str:
    """How a worker killed by signal ``number`` ended: the signal's name, with what it mostly means."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = str(number)
    hint = {"SIGKILL": _(" (memory or CPU limit?)"), "SIGXCPU": _(" (CPU time limit)"), "SIGSEGV": _(" (crash)")}
    return _("the worker process was killed by {signal}").format(signal=name) + hint.get(name, "")
