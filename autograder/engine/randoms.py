"""The states of hypothesis's random generators that each task of a replay side by side carries.

A task resumes with its own states put in place and leaves with them read back
(:mod:`autograder.engine.breadth`). ``Random.getstate`` builds 625 integers, and nearly every
task leaves the generators as it found them; so a ``random.Random``'s state is first compared by
its bytes, and read or put back in full only when they differ. Why a task keeps its own states:
docs/architecture.md, "Side by side: one round trip for many calls".
"""

from __future__ import annotations

import ctypes
import random
import struct
from dataclasses import dataclass
from typing import Any

from .. import internals

_HEAD = object.__basicsize__  # CPython's object header, before a generator's own fields
_LAYOUT = struct.Struct("=i624I")  # a Mersenne Twister's position in its words, and its 624 words
_CHECKED: dict[type, bool] = {}  # whether a type of generator keeps its state where _LAYOUT says


@dataclass(frozen=True, eq=False)  # numpy's state holds an array, which == cannot judge
class State:
    """One generator's state: its bytes and ``gauss_next`` (None: not compared by bytes) and what
    ``getstate`` gave."""

    generator: Any
    fingerprint: tuple[bytes, float | None] | None
    full: Any


def read(previous: list[State] | None = None) -> list[State]:
    """The state of each generator hypothesis manages; one equal to its state in ``previous`` is
    taken from there, not read again."""
    known = {id(state.generator): state for state in previous or ()}
    states = []
    for generator in internals.managed_randoms():
        fingerprint = _fingerprint(generator)
        same = known.get(id(generator))
        if fingerprint is not None and same is not None and same.fingerprint == fingerprint:
            states.append(same)
        else:
            states.append(State(generator, fingerprint, generator.getstate()))
    return states


def put_back(states: list[State]) -> None:
    """Give each generator its state in ``states``, where it has another now."""
    for state in states:
        if state.fingerprint is None or _fingerprint(state.generator) != state.fingerprint:
            state.generator.setstate(state.full)


def _fingerprint(generator: Any) -> tuple[bytes, float | None] | None:
    """The bytes that hold the state of the ``random.Random`` behind ``generator`` (the ``random``
    module's hidden one for the module), with its ``gauss_next``; None for another generator."""
    instance = getattr(generator.getstate, "__self__", None)
    puts_back = getattr(generator.setstate, "__self__", None)
    if puts_back is not instance or not isinstance(instance, random.Random) or not _laid_out(instance):
        return None
    return ctypes.string_at(id(instance) + _HEAD, _LAYOUT.size), getattr(instance, "gauss_next", None)


def _laid_out(instance: random.Random) -> bool:
    """Whether a generator of this type keeps all its state as CPython's ``random.Random`` does
    (checked once a type, against what ``getstate`` says); one that does not, or keeps more (its
    own ``getstate``), is read and put back in full."""
    kind = type(instance)
    if kind not in _CHECKED:
        words = random.Random.getstate(instance)[1]
        _CHECKED[kind] = (kind.getstate is random.Random.getstate and kind.setstate is random.Random.setstate
                          and kind.__basicsize__ >= _HEAD + _LAYOUT.size and len(words) == 625 and
                          ctypes.string_at(id(instance) + _HEAD, _LAYOUT.size) == _LAYOUT.pack(words[-1], *words[:-1]))
    return _CHECKED[kind]
