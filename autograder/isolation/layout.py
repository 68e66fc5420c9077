"""What a worker sees: its copy of the submission, the course's support modules, more paths it may
read, and its environment; :meth:`Layout.for_course` is where a course's ``sandbox`` settings
become a worker's."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config import Course


@dataclass(frozen=True)
class Layout:
    """What the worker sees: the submission root, support modules, extra read-only paths, env."""

    submission: Path
    support_modules: tuple[Path, ...] = ()
    readonly_paths: tuple[Path, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_course(cls, course: Course, submission: Path) -> Layout:
        """The layout of a worker of ``course`` on the prepared ``submission``."""
        return cls(
            submission=submission,
            support_modules=tuple(course.path(m) for m in course.sandbox.support_modules),
            readonly_paths=tuple(course.path(p) for p in course.sandbox.readonly_paths),
            env={k: v.format(root=course.root) for k, v in course.sandbox.env.items()},
        )
