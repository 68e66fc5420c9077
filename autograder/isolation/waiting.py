"""A call's time is the worker's own: the time it waited for a CPU is its neighbours', not counted.

A call's deadline moves on by its answering process's run delay (the second field of
``/proc/<pid>/schedstat``) since the request was sent, by at most ``GRACE`` times its limit, so
that wall time stays a safety net; where the kernel does not say, it does not move. Only the
answering process is watched. Why, and what a neighbour costs: docs/security.md, "The layers".
"""

from __future__ import annotations

import os
import time

GRACE = 3.0  # a call may take 1 + GRACE times its limit on the wall clock, the rest waiting for a CPU


class RunDelay:
    """The run delay of one worker's answering process, counted from a lap's start."""

    def __init__(self) -> None:
        self.handle: int | None = None  # /proc/<pid>/schedstat, kept open: one pread a look
        self.base = 0.0  # the run delay when the lap began
        self.excused = 0.0  # how far the lap's deadlines have moved
        self.grace = 0.0  # how far they may move
        self.waited = 0.0  # the run delay of the laps since begin()

    def watch(self, pid: int) -> None:
        """Count the run delay of process ``pid`` from now on (nothing, if the kernel does not say)."""
        try:
            self.handle = os.open(f"/proc/{pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return
        self.base = self._seconds()

    def begin(self, limit: float) -> None:
        """A request is sent whose calls each have ``limit`` seconds: a first lap, from now (what
        the process waited before, booting or idle between requests, is no request's)."""
        self.grace, self.waited, self.excused = GRACE * limit, 0.0, 0.0
        if self.handle is not None:
            self.base = self._seconds()

    def lap(self) -> None:
        """One answer came: what the process waited so far is counted, and the next lap begins."""
        if self.handle is not None:
            now = self._seconds()
            self.waited += now - self.base
            self.base = now
        self.excused = 0.0

    def deadline(self, deadline: float) -> float:
        """``deadline`` moved on by what the process has waited for a CPU this lap (at most the
        grace), looked at only once the deadline has passed."""
        if self.handle is not None and deadline + self.excused <= time.monotonic():
            self.excused = min(self._seconds() - self.base, self.grace)
        return deadline + self.excused

    def close(self) -> None:
        if self.handle is not None:
            os.close(self.handle)
            self.handle = None

    def _seconds(self) -> float:
        """The process's run delay so far; the last one known once it has gone."""
        assert self.handle is not None
        try:
            return int(os.pread(self.handle, 64, 0).split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            self.close()
            return self.base + self.excused
