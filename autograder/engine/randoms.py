"""The states of hypothesis's random generators that each task of a replay side by side carries.

A task resumes with its own states put in place and leaves with them read back
(:mod:`autograder.engine.breadth`). ``Random.getstate`` builds 625 integers, and nearly every
task leaves the generators as it found them; so a ``random.Random``'s state is first compared by
the bytes that hold it (:func:`~autograder.isolation.inside.cpython.random_words`) and its
``gauss_next``, and read or put back in full only when they differ. Why a task keeps its own
states: docs/architecture.md, "Side by side: one round trip for many calls".
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .. import internals
from ..isolation import random_words


@dataclass(frozen=True, eq=False)  # numpy's state holds an array, which == cannot judge
class State:
    """One generator's state: what it is compared by (None: it is not) and what ``getstate`` gave."""

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
    """The words of the ``random.Random`` behind ``generator`` (the ``random`` module's hidden one
    for the module) and its ``gauss_next``; None for another generator."""
    instance = getattr(generator.getstate, "__self__", None)
    puts_back = getattr(generator.setstate, "__self__", None)
    if puts_back is not instance or not isinstance(instance, random.Random):
        return None
    words = random_words(instance)
    return None if words is None else (words, getattr(instance, "gauss_next", None))
