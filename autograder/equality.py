"""Equality as grading means it: the one relation that decides points, and the stricter one above it.

:func:`same` decides points (``==`` made strict on types at every level, named tuples as plain
tuples, NaN as itself); :func:`identical`, for a recorded example that must come back exactly
(:mod:`autograder.engine.replay`), also asks for the same classes, float bits, orders and
sharing. Why, and how a locked case's hashing agrees: docs/architecture.md, "What decides
points: one equality"; ``tests/engine/test_equality.py`` shows how they are layered.
"""

from __future__ import annotations

import math
from typing import Any


def same(a: Any, b: Any) -> bool:
    """Equality that also checks types, so ``1 == True`` or ``[1] == (1,)`` do not pass, at
    every level: dict keys and set members included (``{(1, 2): 3}`` is not ``{(True, 2.0): 3}``)."""
    both_tuples = isinstance(a, tuple) and isinstance(b, tuple)  # a named tuple equals its plain tuple
    if both_tuples or (type(a) is type(b) and isinstance(a, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b):
        return False
    if isinstance(a, (dict, set, frozenset)):
        return _same_members(a, b)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _same_members(a: dict | set | frozenset, b: Any) -> bool:
    """:func:`same` for two dicts (keys and values) or two sets of one class. Each key of ``b`` is
    looked up by an equal key of ``a``, which finds the one ``b`` holds, whose type may differ
    (``True`` for ``1``)."""
    keys = {key: key for key in b}
    if len(a) != len(b) or not all(k in keys and same(k, keys[k]) for k in a):
        return False
    return not isinstance(a, dict) or all(same(a[k], b[keys[k]]) for k in a)


def identical(a: Any, b: Any) -> bool:
    """Whether ``b`` is an exact copy of the plain data ``a``: the same types all the way down
    (a named tuple is not a tuple), floats to the bit, dicts and sets in the same order, and no
    list, dict or set found twice in ``a`` (a copy would not share it). Anything but plain data
    is never identical."""
    return _identical(a, b, set())


def _identical(a: Any, b: Any, seen: set[int]) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return math.copysign(1.0, a) == math.copysign(1.0, b) and (a == b or (math.isnan(a) and math.isnan(b)))
    if type(a) in (list, dict, set):
        if id(a) in seen:
            return False
        seen.add(id(a))
    if type(a) is dict:
        return len(a) == len(b) and all(_identical(k, j, seen) and _identical(v, w, seen)
                                        for (k, v), (j, w) in zip(a.items(), b.items(), strict=True))
    if type(a) in (list, tuple, set, frozenset):
        return len(a) == len(b) and all(_identical(x, y, seen) for x, y in zip(a, b, strict=True))
    return a == b if type(a) in (bool, int, str, bytes, type(None)) else False
