"""Nothing a worker started outlives it, and no grader gathers zombies.

A grader process becomes the reaper of its workers' orphans (``PR_SET_CHILD_SUBREAPER``), so the
processes a closed worker leaves are collected here at once instead of counting against a reused
cgroup. What a call starts is killed when the call returns (:class:`Strays`); what a worker
started is killed when it closes (its process group, its cgroup, its private uid's processes), and
collected: at once if it is gone within a moment, else by a later close (:data:`DYING`). Worker
folders of graders that died are swept away by the next grader's first worker.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import tempfile
import time
from pathlib import Path

from . import cgroup as cgroups

FOLDER_PREFIX = "autograder-worker-"  # a worker's folder: FOLDER_PREFIX + the grader's pid + "-" ...
DYING: set[int] = set()  # killed processes of closed workers, not yet collected
PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def once_per_grader() -> None:
    """Before a grader process's first worker: become the reaper of its workers' orphans, and
    remove what graders that died left behind."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    sweep_folders()


def sweep_folders() -> None:
    """Remove the workers' folders of graders that are no longer running."""
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*"):
        owner = folder.name[len(FOLDER_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(folder, ignore_errors=True)


class Strays:
    """What a worker's calls start, killed when each call returns: the processes of its cgroup that
    were not there at its hello, until none is left (one may fork while it dies). Where the cgroup
    counts its tasks and had no thread at the hello, the same count says at once that there is
    none: a task counts from its fork until it is reaped, and none of the hello's leaves uncounted
    while others stay (a dead worker counts until its close reaps it; bubblewrap's namespace dies
    with its first process). Without a cgroup nothing is seen, and what a call started is killed
    when its worker closes."""

    def __init__(self, cgroup: cgroups.Cgroup | None):
        self.cgroup = cgroup
        self.active = True  # False for a zygote, whose children are not strays
        self.baseline: set[int] = set()
        self.quiet: int | None = None  # the task count at the hello, if every task then was a process

    def at_hello(self) -> None:
        """Note the worker's own processes, once it has said hello."""
        if self.cgroup is None:
            return
        self.baseline = set(self.cgroup.pids())
        tasks = self.cgroup.tasks()
        self.quiet = tasks if tasks == len(self.baseline) else None

    def kill(self) -> set[int]:
        """Kill what the last call started; the pids killed."""
        cgroup = self.cgroup
        if cgroup is None or not self.active or (self.quiet is not None and cgroup.tasks() == self.quiet):
            return set()
        return cgroups.kill_until_gone(lambda: [p for p in cgroup.pids() if p not in self.baseline])


def reap(killed: set[int], patience: float = 0.2) -> None:
    """Collect the processes ``killed`` (emptied here) that were handed to this grader, and those
    of earlier closes still dying. One still dying after ``patience`` is collected by a later
    close, so that a long-lived grader (a batch's, a Dask worker's) gathers no zombies in a slow
    moment."""
    collect(DYING)
    deadline, pause = time.monotonic() + patience, cgroups.pauses()
    while killed and time.monotonic() < deadline:
        collect(killed)
        if killed:
            time.sleep(next(pause))
    DYING.update(killed)
    killed.clear()


def collect(pids: set[int]) -> None:
    """Collect those of ``pids`` that are dead, without waiting, and forget them and any not ours."""
    for pid in list(pids):
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                pids.discard(pid)
        except ChildProcessError:  # not ours: its own parent reaps it
            pids.discard(pid)


def kill_user(uid: int, patience: float = 5.0) -> set[int]:
    """Kill every process of the sandbox user, wait until they are gone, return their pids."""
    return cgroups.kill_until_gone(lambda: [pid for pid in pids() if owner(pid, uid) == uid], patience)


def tree(pid: int) -> list[int]:
    """A process and all its descendants."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            with open(f"/proc/{current}/task/{current}/children") as children:
                todo += [int(child) for child in children.read().split()]
        except OSError:
            pass
    return found


def pids() -> list[int]:
    """Every process of this machine (of this pid namespace)."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def owner(pid: int, only: int | None = None) -> int | None:
    """The uid of a living process (None for a zombie: it is dead, only not yet reaped). With
    ``only``, a process of another uid is not looked at further: one stat, no read (this scan of
    every process runs after each property)."""
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
        if only is not None and uid != only:
            return uid
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
        return None if state == b"Z" else uid
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
