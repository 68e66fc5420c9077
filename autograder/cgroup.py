"""A cgroup per worker: memory, process count and CPU counted for all its processes together.

Resource limits (``setrlimit``) count one process at a time, so a worker with 32 children
could hold 32 times its memory. A cgroup counts the worker and everything it starts as one:
``memory`` (``memory_mb`` for all of them, tmpfs pages included), ``pids`` (``processes``),
``cpu`` (at most one core at a time) and ``freezer`` (nothing runs between calls).

It uses cgroup v2 where the grader's own cgroup delegates the ``memory`` and ``pids``
controllers, otherwise the v1 hierarchies. Each worker's cgroup is named after the grader's
pid, so the cgroups of a grader that was killed are found, emptied and removed by the next one.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

MOUNT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "freezer", "cpu")
PREFIX = "autograder-"


class CgroupError(OSError):
    """No cgroup can be made here; the message says why."""


class Cgroup:
    """The cgroup (one folder per v1 hierarchy, or one v2 folder) of one worker."""

    def __init__(self, folders: list[Path], version: int):
        self.folders = folders
        self.version = version

    @classmethod
    def create(cls, memory_mb: int, processes: int) -> "Cgroup":
        version, parents = _parents()
        _sweep(parents)
        name = f"{PREFIX}{os.getpid()}-{time.monotonic_ns()}"
        folders = [parent / name for parent in parents]
        cgroup = cls(folders, version)
        try:
            for folder in folders:
                folder.mkdir()
            settings = {"memory.max": memory_mb << 20, "pids.max": processes, "cpu.max": "100000 100000"} \
                if version == 2 else {"memory.limit_in_bytes": memory_mb << 20, "pids.max": processes,
                                      "cpu.cfs_period_us": 100000, "cpu.cfs_quota_us": 100000}
            for key, value in settings.items():
                cgroup._write(key, value)
            if version == 2:
                cgroup._write("memory.swap.max", 0, missing_ok=True)
        except OSError as error:
            cgroup.remove()
            raise CgroupError(f"cannot set up a cgroup under {folders[0].parent}: {error}") from None
        return cgroup

    @property
    def procs_files(self) -> list[str]:
        """The files a new process writes its pid to, to join this cgroup (before it starts student code)."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def freeze(self) -> None:
        """Stop every process of the worker until :meth:`thaw` (between calls)."""
        self._write(*(("cgroup.freeze", 1) if self.version == 2 else ("freezer.state", "FROZEN")))

    def thaw(self, missing_ok: bool = False) -> None:
        self._write(*(("cgroup.freeze", 0) if self.version == 2 else ("freezer.state", "THAWED")), missing_ok)

    def pids(self) -> list[int]:
        try:
            return [int(line) for line in (self.folders[0] / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill(self, patience: float = 5.0) -> None:
        """Kill every process in the cgroup and wait until it is empty."""
        deadline = time.monotonic() + patience
        if self.version == 2 and (self.folders[0] / "cgroup.kill").exists():
            self._write("cgroup.kill", 1, missing_ok=True)
        while (alive := self.pids()) and time.monotonic() < deadline:
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.thaw(missing_ok=True)  # a frozen process dies only once thawed
            time.sleep(0.005)

    def remove(self) -> None:
        """Kill what is left and delete the cgroup's folders."""
        if any(folder.exists() for folder in self.folders):
            self.kill()
        for folder in self.folders:
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                time.sleep(0.05)  # the last process is still leaving
                folder.rmdir()

    def _write(self, key: str, value: object, missing_ok: bool = False) -> None:
        for folder in self.folders:
            if (folder / key).exists():
                (folder / key).write_text(str(value))
                return
        if not missing_ok:
            raise CgroupError(f"no {key} in {', '.join(map(str, self.folders))}")


def _parents() -> tuple[int, list[Path]]:
    """The cgroup version to use and the folders (the grader's own cgroups) to make workers' cgroups in."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path.lstrip("/")
    if "" in own:
        root = MOUNT if (MOUNT / "cgroup.controllers").exists() else MOUNT / "unified"
        parent = root / own[""]
        delegated = set((parent / "cgroup.subtree_control").read_text().split()) \
            if (parent / "cgroup.subtree_control").exists() else set()
        if {"memory", "pids"} <= delegated and os.access(parent, os.W_OK):
            return 2, [parent]
    missing = [c for c in V1_CONTROLLERS if c not in own or not (MOUNT / c).is_dir()]
    if missing:
        raise CgroupError("no cgroup v2 with the memory and pids controllers delegated to the grader, and no "
                          f"v1 hierarchy for {', '.join(missing)}")
    parents = [MOUNT / c / own[c] for c in V1_CONTROLLERS]
    unwritable = [str(p) for p in parents if not os.access(p, os.W_OK)]
    if unwritable:
        raise CgroupError(f"cannot create cgroups in {', '.join(unwritable)} (permission denied)")
    return 1, parents


def _sweep(parents: list[Path]) -> None:
    """Remove the workers' cgroups of graders that are no longer running."""
    for parent in parents:
        for folder in parent.glob(f"{PREFIX}*"):
            owner = folder.name[len(PREFIX):].split("-", 1)[0]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                try:
                    Cgroup([folder], 2 if (folder / "cgroup.kill").exists() else 1).remove()
                except OSError:
                    pass


def available() -> str | None:
    """None if a worker's cgroup can be made here, otherwise why not."""
    try:
        Cgroup.create(64, 4).remove()
    except (CgroupError, OSError) as error:
        return str(error)
    return None
