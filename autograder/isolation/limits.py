"""What one worker may use: resource limits for its whole life, and the wall-clock limit of one call.

:class:`WorkerLimits` is the one model of them, and :meth:`WorkerLimits.for_course` the one place
where a course's limits (``course.yaml``'s ``limits``, :class:`autograder.config.Limits`) become a
worker's. The worker applies :meth:`WorkerLimits.rlimits` to itself before any student code runs;
the grader enforces the time of a call and the size of an answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Limits


@dataclass(frozen=True)
class WorkerLimits:
    """Resource limits of one worker (its whole life) and the wall-clock limit of one call."""

    call_seconds: float = 5.0
    cpu_seconds: int = 60
    memory_mb: int = 1024
    processes: int = 32
    file_mb: int = 16
    open_files: int = 64
    message_mb: int = 16
    disk_mb: int = 64

    @classmethod
    def for_course(cls, limits: Limits, call_seconds: float | None = None) -> WorkerLimits:
        """The limits of a worker of a course whose limits are ``limits``, serving calls of at most
        ``call_seconds`` (an exercise's own limit; by default the course's): a worker serves one
        property, so it may spend the property's time on the CPU, and one call's more."""
        call = call_seconds or limits.call_seconds
        return cls(call_seconds=call, cpu_seconds=int(limits.property_seconds + call) + 1,
                   memory_mb=limits.memory_mb, processes=limits.processes, file_mb=limits.file_mb,
                   open_files=limits.open_files, message_mb=limits.message_mb, disk_mb=limits.disk_mb)

    def rlimits(self) -> dict[str, int]:
        """The ``setrlimit`` values the worker lowers its own limits to, by ``resource`` name."""
        return {
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_AS": self.memory_mb << 20,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_FSIZE": self.file_mb << 20,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CORE": 0,
        }
