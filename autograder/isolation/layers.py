"""The sandbox's layers, and which of them are in force: the words the rest of the engine uses.

:data:`LAYERS` names them (docs/security.md says what each holds); an :class:`Isolation` is the
set in force on a machine with the reason each other one is missing, as :func:`detect.isolation`
finds it; :class:`IsolationRefused` is official grading refused where none keeps the grader's
files from student code (exit status 3).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import GraderError

LAYERS = ("bwrap", "landlock", "uid", "cgroup")
UNSAFE_ENV = "AUTOGRADER_UNSAFE_NO_SANDBOX"  # "1": grade where no layer holds, and say so in every report


@dataclass(frozen=True)
class Isolation:
    """The layers in force, and for each missing layer why it is missing."""

    layers: frozenset[str]
    missing: tuple[tuple[str, str], ...] = ()

    @property
    def holds(self) -> bool:
        """Whether student code is kept from the grader's files and the network."""
        return bool(self.layers & {"bwrap", "landlock"})

    def describe(self) -> str:
        return " + ".join(layer for layer in LAYERS if layer in self.layers) or "resource limits only"

    def why_missing(self) -> str:
        return "; ".join(f"{layer}: {why}" for layer, why in self.missing)


class IsolationRefused(GraderError):
    """Official grading was refused: no layer keeps the grader's files from student code."""

    exit_status = 3
