"""The states of hypothesis's random generators that each task of a replay side by side carries.

A task resumes with its own states put in place and leaves with them read back
(:mod:`autograder.engine.breadth`). A ``random.Random``'s state is kept as the bytes that hold it
(:func:`~autograder.isolation.inside.cpython.random_words`) and its ``gauss_next``: compared,
kept and put back as they are, never as the 625 integers ``getstate`` builds. Another generator's
is what its ``getstate`` gives, read and put back in full. Why a task keeps its own states:
docs/architecture.md, "Side by side: one round trip for many calls".
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .. import internals
from ..isolation import put_random_words, random_words


@dataclass(frozen=True, eq=False)  # numpy's state holds an array, which == cannot judge
class State:
    """One generator's state: a ``random.Random``'s words and ``gauss_next`` (``words``), or, for
    another generator, what its ``getstate`` gave (``full``)."""

    generator: Any
    words: tuple[bytes, float | None] | None
    full: Any = None


def read(previous: list[State] | None = None) -> list[State]:
    """The state of each generator hypothesis manages; one equal to its state in ``previous`` is
    taken from there."""
    known = {id(state.generator): state for state in previous or ()}
    states = []
    for generator in internals.managed_randoms():
        words = _words(generator)
        same = known.get(id(generator))
        if words is not None and same is not None and same.words == words:
            states.append(same)
        else:
            states.append(State(generator, words, None if words is not None else generator.getstate()))
    return states


def put_back(states: list[State], live: list[State] | None = None) -> None:
    """Give each generator its state in ``states``, where it has another now. ``live`` is what
    :func:`read` read last, if nothing has run since: a generator's state there is compared, not
    read again."""
    now = {id(state.generator): state for state in live or ()}
    for state in states:
        same = now.get(id(state.generator))
        if same is state or same is not None and state.words is not None and same.words == state.words:
            continue
        if state.words is None:
            state.generator.setstate(state.full)
        elif same is not None or _words(state.generator) != state.words:
            instance = _instance(state.generator)
            put_random_words(instance, state.words[0])
            instance.gauss_next = state.words[1]


def _words(generator: Any) -> tuple[bytes, float | None] | None:
    """The words of the ``random.Random`` behind ``generator`` and its ``gauss_next``; None for
    another generator."""
    instance = _instance(generator)
    words = None if instance is None else random_words(instance)
    return None if words is None else (words, getattr(instance, "gauss_next", None))


def _instance(generator: Any) -> Any:  # a random.Random (typeshed does not know its gauss_next) or None
    """The ``random.Random`` whose ``getstate`` and ``setstate`` are ``generator``'s (the
    ``random`` module's hidden one for the module), or None."""
    instance = getattr(generator.getstate, "__self__", None)
    if getattr(generator.setstate, "__self__", None) is not instance or not isinstance(instance, random.Random):
        return None
    return instance
