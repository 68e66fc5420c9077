"""A cgroup per worker: memory and process count counted for all its processes together.

``memory`` (``memory_mb``) for a worker and everything it starts, and ``pids`` (``processes``)
unless a private uid already counts them; v2 where the grader's cgroup delegates both
controllers, else v1, where only these two are joined (joining more delays a start) and a
zygote's is *counted* (its processes found in one read). Cgroups are named after the grader's
pid, so a killed grader's are cleaned up by the next, and kept between workers; :func:`join_lane`
keeps a grader process to one core. Why and where each holds: docs/security.md, "The layers".
"""

from __future__ import annotations

import atexit
import functools
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

MOUNT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids")
PREFIX = "autograder-"


class CgroupError(OSError):
    """No cgroup can be made here; the message says why."""


class Cgroup:
    """The cgroup (one folder per v1 hierarchy, or one v2 folder) of one worker."""

    def __init__(self, folders: list[Path], version: int, settings: Settings | None = None):
        self.folders = folders
        self.version = version
        self.settings = settings
        self.listing = str(folders[0] / "cgroup.procs")  # a string: read after every call, where a Path costs more
        self.counter: int | None = None  # pids.current, open: its count is read anew at each pread

    @classmethod
    def take(cls, memory_mb: int, processes: int | None, counted: bool = False) -> Cgroup:
        """An empty cgroup with these limits (``processes`` None: no limit on processes) and, if
        ``counted``, a count of its tasks (:meth:`tasks`); one given back earlier by this process
        or a new one."""
        spare = _SPARE.get(_settings(memory_mb, processes, counted))
        return spare.pop() if spare else cls.create(memory_mb, processes, counted)

    def give_back(self, reap: Callable[[], None]) -> None:
        """Keep this emptied cgroup for this process's next worker (``reap`` collects the dead,
        which count until they are reaped), or remove it if it does not empty."""
        deadline, pause = time.monotonic() + 0.5, pauses()
        while self._read("pids.current") not in ("0", None) and time.monotonic() < deadline:
            reap()
            time.sleep(next(pause))
        if self._read("pids.current") in ("0", None) and not self.pids() and self.settings is not None:
            _SPARE.setdefault(self.settings, []).append(self)
        else:
            self.remove()

    @classmethod
    def create(cls, memory_mb: int, processes: int | None, counted: bool = False) -> Cgroup:
        memory_mb, processes, counted = _settings(memory_mb, processes, counted)
        version, parents = _parents()
        if not counted and version == 1:
            parents = [p for p in parents if not p.is_relative_to(MOUNT / "pids")]
        name = f"{PREFIX}{os.getpid()}-{time.monotonic_ns()}"
        folders = [parent / name for parent in parents]
        cgroup = cls(folders, version, (memory_mb, processes, counted))
        try:
            for folder in folders:
                folder.mkdir()
            counters = [folder / "pids.current" for folder in folders if counted and (folder / "pids.current").exists()]
            if counters:
                cgroup.counter = os.open(counters[0], os.O_RDONLY | os.O_CLOEXEC)
            limits = {"memory.max" if version == 2 else "memory.limit_in_bytes": memory_mb << 20}
            if processes is not None:
                limits["pids.max"] = processes
            for key, value in limits.items():
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

    def pids(self) -> list[int]:
        """The processes in the cgroup (read after every call; v1 keeps a stale list per open file,
        so it is opened anew each time)."""
        try:
            procs = os.open(self.listing, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return []
        try:
            return [int(pid) for pid in os.read(procs, 1 << 20).split()]
        finally:
            os.close(procs)

    def tasks(self) -> int | None:
        """How many tasks (processes and their threads) the cgroup holds, if it is counted. A task
        counts from the moment its fork begins, before it shows in :meth:`pids`, until it is
        reaped."""
        return None if self.counter is None else int(os.pread(self.counter, 32, 0))

    def kill(self, patience: float = 5.0) -> set[int]:
        """Kill everything in the cgroup, wait until it is empty, return the pids it killed."""
        if self.version == 2:
            self._write("cgroup.kill", 1, missing_ok=True)
        return kill_until_gone(self.pids, patience)

    def remove(self) -> None:
        """Kill what is left and delete the cgroup's folders."""
        if any(folder.exists() for folder in self.folders):
            self.kill()
        if self.counter is not None:
            os.close(self.counter)
            self.counter = None
        for folder in self.folders:
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                time.sleep(0.05)  # the last process is still leaving
                folder.rmdir()

    def _read(self, key: str) -> str | None:
        for folder in self.folders:
            if (folder / key).exists():
                return (folder / key).read_text().strip()
        return None

    def _write(self, key: str, value: object, missing_ok: bool = False) -> None:
        for folder in self.folders:
            if (folder / key).exists():
                (folder / key).write_text(str(value))
                return
        if not missing_ok:
            raise CgroupError(f"no {key} in {', '.join(map(str, self.folders))}")


def kill(pids: Iterable[int]) -> None:
    """SIGKILL each process that is still there."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_until_gone(alive: Callable[[], list[int]], patience: float = 5.0) -> set[int]:
    """Kill what ``alive()`` lists until it lists nothing (or ``patience`` runs out); return the pids killed."""
    deadline, pause = time.monotonic() + patience, pauses()
    killed: set[int] = set()
    while (pids := alive()) and time.monotonic() < deadline:
        killed.update(pids)
        kill(pids)
        time.sleep(next(pause))
    return killed


def pauses(first: float = 0.0001, longest: float = 0.002) -> Iterator[float]:
    """Waits between two looks at something that is about to happen (a killed process leaving):
    short at first, since it mostly has by then, then twice as long each time up to ``longest``.
    Closing a worker waits so between two properties, on every grading's path."""
    pause = first
    while True:
        yield pause
        pause = min(pause * 2, longest)


Settings = tuple[int, "int | None", bool]  # memory_mb, processes, counted
_SPARE: dict[Settings, list[Cgroup]] = {}


def _settings(memory_mb: int, processes: int | None, counted: bool) -> Settings:
    """A cgroup's settings, as spares are kept by them: one with a limit on processes is counted."""
    return memory_mb, processes, counted or processes is not None


@atexit.register
def _remove_spares() -> None:
    for spares in _SPARE.values():
        for cgroup in spares:
            cgroup.remove()
    _SPARE.clear()


@functools.cache
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
            _sweep([parent])
            return 2, [parent]
    missing = [c for c in V1_CONTROLLERS if c not in own or not (MOUNT / c).is_dir()]
    if missing:
        raise CgroupError("no cgroup v2 with the memory and pids controllers delegated to the grader, and no "
                          f"v1 hierarchy for {', '.join(missing)}")
    parents = [MOUNT / c / own[c] for c in V1_CONTROLLERS]
    unwritable = [str(p) for p in parents if not os.access(p, os.W_OK)]
    if unwritable:
        raise CgroupError(f"cannot create cgroups in {', '.join(unwritable)} (permission denied)")
    _sweep(parents)
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


def join_lane(cores: int = 1) -> Path | None:
    """Move this process (a grader process: a lane of a batch) into a CPU cgroup of its own, which
    may use ``cores`` cores at most, at the default weight, and give its folder (None where no
    cgroup v1 ``cpu`` hierarchy can be written). Every worker it starts later inherits the cgroup
    and, confined, cannot write another's ``cgroup.procs``: however many processes a submission
    starts, whatever their sessions or affinity, its lane's CPU is all they share, and a
    neighbour's lane keeps its own. (cgroup v2 is not handled: there a worker's cgroup is a
    child of the grader's, which would then hold both processes and controllers.)"""
    own = {controller: path for line in Path("/proc/self/cgroup").read_text().splitlines()
           for _, controllers, path in [line.split(":", 2)] for controller in controllers.split(",")}
    parent = MOUNT / "cpu" / own.get("cpu", "").lstrip("/")  # where v1 mounts it (cpu,cpuacct: a link)
    if "cpu" not in own or not (parent / "cpu.cfs_quota_us").exists() or not os.access(parent, os.W_OK):
        return None
    _sweep([parent])
    lane = Cgroup([parent / f"{PREFIX}{os.getpid()}-lane"], 1)
    try:
        lane.folders[0].mkdir()
        period = int(lane._read("cpu.cfs_period_us") or 100_000)
        lane._write("cpu.cfs_quota_us", period * cores)
        lane._write("cpu.shares", 1024)
        lane._write("cgroup.procs", os.getpid())
    except OSError as error:
        lane.remove()
        raise CgroupError(f"cannot set up a grader's CPU cgroup under {parent}: {error}") from None
    atexit.register(_leave, parent, lane)
    return lane.folders[0]


def _leave(parent: Path, lane: Cgroup) -> None:
    """Move back to ``parent`` and remove ``lane`` with whatever is left in it."""
    (parent / "cgroup.procs").write_text(str(os.getpid()))
    lane.remove()


def available() -> str | None:
    """None if a worker's cgroup can be made here, otherwise why not."""
    try:
        Cgroup.create(64, 4).remove()
    except (CgroupError, OSError) as error:
        return str(error)
    return None
