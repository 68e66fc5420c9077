"""The attacker's structured search: would a case's sealed hash give its answer away?

:func:`attack_spaces` gives each call's answer a space of candidates built from the reference's
answer's shape (types, sizes, keys, order) and the numbers and texts of the call's arguments;
the case's space is the product of its calls'. :func:`attack` searches a space of at most
:data:`BUDGET` candidates in full, hashing each with the case's salt, and the case is refused if
it is found; a larger space is counted, not enumerated, and accepted. The rule and how to
write cases it accepts: docs/authors.md, "Locked known-answer cases".
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .cases import AnySupport, Case, Step, literal
from .hashing import canonical

BUDGET = 10**7  # structured guesses that must fail to find a sealed output


@dataclass(frozen=True)
class Space:
    """The candidates an attacker enumerates for one value: how many, and how to list them."""

    size: int
    values: Callable[[], Iterator[Any]]


@dataclass(frozen=True)
class _Inputs:
    """What an attacker reads off a case's arguments: its texts and its numbers (the ints, and
    every length: characters, UTF-8 bytes, words and items, each and summed per argument)."""

    texts: tuple[str | bytes, ...]
    numbers: tuple[int, ...]

    @property
    def top(self) -> int:
        return max(self.numbers, default=0)


def attack_spaces(case: Case, output: list) -> list[Space]:
    """One space per call of ``case``, shaped like the reference's result and drawn from the
    inputs the call sees (its own arguments, the object's and the setup's): ``None`` and bools
    their values; ints -1 to 2m+1, m the largest number or length in the inputs; floats the
    ratios k/n of small or input-made n; strings and bytes every piece of the inputs' texts;
    lists and tuples the smaller of their items' product and the shapes they have (a split of an
    input's text, a monotone curve on a grid, sorted distinct pieces); sets so many distinct
    candidates; dicts their keys and the product of their values' spaces."""
    shared = [case.target, *case.setup] if case.target is not None else []
    return [_space(result, _inputs([*shared, step])) for step, result in zip(case.calls, output, strict=False)]


def attack(spaces: list[Space], salt: str, sha256: str, budget: int = BUDGET) -> list | None:
    """The output whose salted hash is ``sha256``, found by trying every combination of the
    spaces' candidates; ``None`` when it is not there, or when there are more than ``budget``
    combinations (then they are counted, not tried)."""
    if math.prod(space.size for space in spaces) > budget:
        return None
    options = [[(value, canonical(value)) for value in space.values()] for space in spaces]
    return _search(hashlib.sha256(bytes.fromhex(salt) + b"["), options, [], sha256)


def _search(state: Any, options: list[list[tuple[Any, bytes]]], chosen: list, sha256: str) -> list | None:
    """Depth first over the calls, sharing the hash of each prefix of the output's encoding."""
    if not options:
        return chosen if state.hexdigest() == sha256 else None
    last = len(options) == 1
    for value, encoded in options[0]:
        probe = state.copy()
        probe.update(encoded + (b"]" if last else b","))
        found = _search(probe, options[1:], [*chosen, value], sha256)
        if found is not None:
            return found
    return None


def _inputs(steps: list[Step]) -> _Inputs:
    texts: list[str | bytes] = []
    numbers: list[int] = []
    for step in steps:
        for argument in [*step.args, *(value for _, value in step.kwargs)]:
            _read(literal(argument, lambda _name: AnySupport()), texts, numbers)
    return _Inputs(tuple(dict.fromkeys(texts)), tuple(sorted(set(numbers))))


def _read(value: Any, texts: list[str | bytes], numbers: list[int]) -> None:
    """Collect ``value``'s texts and numbers: its ints, and the lengths of its texts and
    containers, with those of a container's texts summed."""
    if type(value) is int:
        numbers.append(abs(value))
    elif isinstance(value, (str, bytes)):
        texts.append(value)
        numbers.extend(_lengths(value))
    elif isinstance(value, (list, tuple, set, frozenset, dict)):
        items = [*value, *value.values()] if isinstance(value, dict) else list(value)
        numbers.append(len(value))
        numbers.extend(map(sum, zip(*(_lengths(item) for item in items if isinstance(item, str)), strict=False)))
        for item in items:
            _read(item, texts, numbers)


def _lengths(text: str | bytes) -> tuple[int, ...]:
    """A text's characters, UTF-8 bytes and words; a bytes object's bytes."""
    if isinstance(text, bytes):
        return (len(text),)
    return len(text), len(text.encode("utf-8")), len(text.split())


def _space(value: Any, inputs: _Inputs) -> Space:
    """The attacker's candidates for a value shaped like ``value`` (see the module's docstring)."""
    match value:
        case None:
            space = _choice([None])
        case bool():
            space = _choice([False, True])
        case int() if type(value) is int:
            space = _choice(range(-1, 2 * inputs.top + 2))
        case float() if type(value) is float:
            space = _ratios(inputs)
        case str() | bytes():
            space = _pieces(inputs, type(value))
        case dict():
            keys = list(value)
            space = _mapped(_product([_space(value[key], inputs) for key in keys]),
                            lambda vs: dict(zip(keys, vs, strict=False)))
        case set() | frozenset() if value:
            space = _mapped(_subsets(_space(next(iter(value)), inputs), len(value)), type(value))
        case list() | tuple():
            space = _sequence_space(value, inputs)
        case _:
            space = _choice([value])
    return space


def _sequence_space(value: list | tuple, inputs: _Inputs) -> Space:
    """A list or tuple: the smallest space that holds it among one candidate per item and the
    shapes it has (consecutive pieces of an input text, a curve on a grid, sorted pieces)."""
    rebuild = list if isinstance(value, list) else tuple
    shapes = [_split_space(value, inputs), _curve_space(value, inputs), _sorted_space(value, inputs),
              _product([_space(item, inputs) for item in value])]
    return _mapped(min((s for s in shapes if s is not None), key=lambda s: s.size), rebuild)


def _split_space(value: list | tuple, inputs: _Inputs) -> Space | None:
    """Non-empty texts that join into an input text (a split) or into a piece of one (a merged pair)."""
    if not value or not all(type(item) is type(value[0]) and isinstance(item, (str, bytes)) and item for item in value):
        return None
    joined = value[0][:0].join(value)
    whole = [text for text in inputs.texts if text == joined]
    kind = str if isinstance(joined, str) else bytes  # a join gives a plain str or bytes
    texts = whole or [piece for piece in _pieces(inputs, kind).values() if len(piece) >= len(value)]
    return _union([_splits(text, len(value)) for text in texts]) if joined in texts else None


def _sorted_space(value: list | tuple, inputs: _Inputs) -> Space | None:
    """Distinct texts in sorted order: that many pieces, sorted."""
    if len(value) < 2 or not all(isinstance(item, (str, bytes)) for item in value) or list(value) != sorted(set(value)):
        return None
    return _subsets(_space(value[0], inputs), len(value))


def _choice(values: Sequence) -> Space:
    return Space(len(values), lambda: iter(values))


def _union(spaces: list[Space]) -> Space:
    return Space(sum(s.size for s in spaces), lambda: itertools.chain.from_iterable(s.values() for s in spaces))


def _mapped(space: Space, build: Callable[[Any], Any]) -> Space:
    return Space(space.size, lambda: map(build, space.values()))


def _product(spaces: list[Space]) -> Space:
    return Space(math.prod(s.size for s in spaces), lambda: itertools.product(*(list(s.values()) for s in spaces)))


def _subsets(item: Space, count: int) -> Space:
    """``count`` distinct items of ``item`` in sorted order (a sorted list, a set)."""
    return Space(math.comb(item.size, count), lambda: itertools.combinations(sorted(item.values()), count))


@functools.cache
def _ratios(inputs: _Inputs) -> Space:
    """The ratios k/n reachable on the inputs, 0 <= k <= 2n: n at most 16, a number or length of
    them, or the product of two that is at most 256 (a score over two counts). One grid finer
    than the budget is counted, not listed: its 2n + 1 ratios are all different."""
    numbers = [n for n in inputs.numbers if n > 0]
    denominators = {*range(1, 17), *numbers, *(a * b for a in numbers for b in numbers if a * b <= 256)}
    if 2 * max(denominators) + 1 > BUDGET:
        return Space(2 * max(denominators) + 1, lambda: iter(()))
    return _choice(sorted({k / n for n in denominators for k in range(2 * n + 1)}))


@functools.cache
def _pieces(inputs: _Inputs, kind: type) -> Space:
    """Every piece of the inputs' texts (as ``kind``): tokens, words, pre-tokens. Texts with more
    pieces than the budget are counted (every piece as a different one), not listed."""
    texts = [t.encode("utf-8") if isinstance(t, str) and kind is bytes else t
             for t in inputs.texts if kind is bytes or isinstance(t, str)]
    total = sum(len(t) * (len(t) + 1) // 2 for t in texts)
    if total > BUDGET:
        return Space(total, lambda: iter(()))
    return _choice(list(dict.fromkeys(t[i:j] for t in texts for i in range(len(t)) for j in range(i + 1, len(t) + 1))))


def _splits(text: str | bytes, count: int) -> Space:
    """``text`` cut into ``count`` non-empty pieces."""
    def cuts():
        for inner in itertools.combinations(range(1, len(text)), count - 1):
            bounds = (0, *inner, len(text))
            yield [text[a:b] for a, b in itertools.pairwise(bounds)]
    return Space(math.comb(len(text) - 1, count - 1), cuts)


def _curve_space(value: list | tuple, inputs: _Inputs) -> Space | None:
    """At least three floats on a grid k/n of the inputs that only fall or only rise: the curves
    moving the same way, from the same end of the grid when the value starts at 0 or 1, with
    steps shrinking or growing when its steps do."""
    if len(value) < 3 or not all(type(x) is float for x in value):
        return None
    if not any(_on_grid(value, n) for n in inputs.numbers):
        return None
    direction = _order(value)
    steps = _order([abs(b - a) for a, b in itertools.pairwise(value)])
    end = value[0] if value[0] in (0.0, 1.0) else None
    return None if direction == 0 else _curves(inputs, len(value), direction, steps, end)


def _on_grid(value: list | tuple, n: int) -> bool:
    return n > 0 and all(abs(x * n - round(x * n)) < 1e-6 and 0 <= round(x * n) <= n for x in value)


def _order(values: Sequence) -> int:
    """1 when ``values`` never fall, -1 when they never rise, 0 otherwise (or when constant)."""
    pairs = list(itertools.pairwise(values))
    rises, falls = all(b >= a - 1e-12 for a, b in pairs), all(b <= a + 1e-12 for a, b in pairs)
    return 0 if rises == falls else (1 if rises else -1)


def _curves(inputs: _Inputs, length: int, direction: int, steps: int, end: float | None) -> Space:
    """Curves of ``length`` points k/n (0 <= k <= n, n a number or length of the inputs) from
    ``end`` (anywhere when ``None``) moving in ``direction`` with steps in the order ``steps``:
    a ratio curve. A curve on grid n is also on every multiple of n; each is counted and listed
    once, on its coarsest grid (Moebius inversion over the divisors). Grids are taken finest
    last and no more are counted once the budget is passed."""
    curves = _Curves(sorted({n for n in inputs.numbers if n > 0}), length, direction, steps, end)
    size, counted = 0, set[int]()
    for n in curves.grids:
        if size > BUDGET:
            break
        fresh = set(_divisors(n)) - counted
        size += sum(curves.coarsest(d) for d in fresh)
        counted |= fresh
    return Space(size, curves.listed)


class _Curves:
    """The ratio curves of :func:`_curves`: counted per grid, and listed."""

    def __init__(self, grids: list[int], length: int, direction: int, steps: int, end: float | None):
        self.grids, self.length, self.direction, self.steps, self.end = grids, length, direction, steps, end
        self.count = functools.cache(self._count)
        self.coarsest = functools.cache(self._coarsest)

    def _count(self, left: int, room: int, last: int) -> int:
        """The walks of ``left`` steps within ``room``, the step before being ``last``."""
        if left == 0:
            return 1
        return sum(self.count(left - 1, room - d, d) for d in _next_steps(room, last, self.steps))

    def walk(self, left: int, room: int, last: int) -> Iterator[tuple[int, ...]]:
        """Those walks, listed."""
        if left == 0:
            yield ()
            return
        for d in _next_steps(room, last, self.steps):
            yield from ((d, *rest) for rest in self.walk(left - 1, room - d, d))

    def starts(self, n: int) -> Sequence[int]:
        return range(n + 1) if self.end is None else [round(self.end * n)]

    def room(self, n: int, start: int) -> int:
        return start if self.direction < 0 else n - start

    def _coarsest(self, n: int) -> int:
        """Curves on grid n and on no coarser one."""
        on = {d: sum(self.count(self.length - 1, self.room(d, k), -1) for k in self.starts(d)) for d in _divisors(n)}
        return sum(_moebius(n // d) * on[d] for d in on)

    def listed(self) -> Iterator[list[float]]:
        """Every curve once, on its coarsest grid among the inputs'."""
        for n in self.grids:
            for start in self.starts(n):
                for moves in self.walk(self.length - 1, self.room(n, start), -1):
                    points = list(itertools.accumulate(moves, lambda k, d: k + self.direction * d, initial=start))
                    grid = n // math.gcd(n, *points)
                    if next(g for g in self.grids if g % grid == 0) == n:
                        yield [k / n for k in points]


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _moebius(n: int) -> int:
    """The Moebius function: 0 when a square divides ``n``, else -1 to the number of its prime factors."""
    sign, p = 1, 2
    while p * p <= n:
        if n % p == 0:
            n //= p
            if n % p == 0:
                return 0
            sign = -sign
        p += 1
    return -sign if n > 1 else sign


def _next_steps(room: int, last: int, order: int) -> range:
    """The sizes the next step may take: at most ``room``, and no larger (``order`` -1) or no
    smaller (1) than the step before (``last``, -1 before the first)."""
    if last < 0 or order == 0:
        return range(room + 1)
    return range(min(room, last) + 1) if order < 0 else range(last, room + 1)
