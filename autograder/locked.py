"""Locked known-answer cases: students learn pass or fail, never the answer.

A course lists, per exercise, a few fixed calls into the exercise's module (the file named by
``delivery.locked`` in ``course.yaml``)::

    ex3_wordpiece:
      - name: hug, pug and bun
        calls:
          - train_wordpiece("hug hugs pug pun bun", 6)
          - wordpiece_score(3, 5, 7)
    ex2_special_tokens:
      - name: a trained tokenizer
        object: SpecialTokenizer()          # one object; setup calls, then the calls
        setup: [train("the cat sat on the mat", 12)]
        calls: [encode("the hat"), vocab_size]

Arguments are Python literals (tuples, bytes, sets and dicts included) or attributes of the
course's support modules (``encoders.utf8_bytes``). A call may be wrapped in one builtin
(``dict(get_pair_counts([1, 2, 1]))``), applied where the result lives.

A case's *output* is the list of its calls' results. When the instructor builds a release,
:func:`seal` runs the reference on every case and keeps only a random salt and
``sha256(salt + canonical(output))``, and the same hash of each *part* of the case
(:func:`split`): its calls in order, cut wherever the calls so far have more than
:data:`BUDGET` candidates (see the rule below), so that a failure can name the call, or the
few calls, whose answer differs. :func:`check_locked` runs the student's code on the same
cases in the sandbox and compares hashes, and says which part's failed.

A case is refused when an attacker can find its output without solving the exercise: knowing
the calls and the type of each answer, guessing values shaped like it and hashing them.
:func:`seal` runs that attacker (:func:`attack`) on every case. Each call's answer gets a space
of candidates (:func:`attack_spaces`) built from the reference's answer's *shape* (its types,
container sizes, dict keys, sort order, monotony; all given to the attacker for free) and from
the numbers and texts of the call's arguments (and the object's and setup's):

- ``None`` and bools: their values; ints: -1 to 2m+1, m the largest number or length in the
  arguments (counts, lengths, indices); floats: the ratios k/n, 0 <= k <= 2n, n at most 16, a
  number or length of the arguments, or the product of two that is at most 256;
- strings and bytes: every piece (substring) of the arguments' texts;
- a list or tuple: the smallest of the spaces that hold it among the product of its items'
  spaces and, when it has their shape, a split (non-empty strings that join into an argument's
  text: its splits into so many pieces; or into a piece of one, a merged pair: the splits of
  those pieces), a curve (at least three floats on a grid k/n, n a number or length of the
  arguments, that only fall or only rise: the curves on those grids moving the same way, from
  the same end when it starts at 0 or 1, with steps shrinking or growing when its steps do; a
  curve on several grids counts once) and sorted pieces (distinct strings in sorted order:
  that many distinct pieces, sorted);
- a set: that many distinct candidates of its first item's kind; a dict: its keys, and the
  product of its values' spaces.

The case's space is the product of its calls'. **The rule:** a space of at most
:data:`BUDGET` (10^7) candidates is searched in full, hashing each with the case's salt (the
hash of a shared prefix is computed once), and the case is refused if the search finds it; a
larger space is counted, not enumerated, and the case accepted, since that many structured
guesses are needed to cover it. So a case passes only when a structured search of at least
10^7 guesses fails. A part's space, the product of its own calls', is larger than 10^7 by
construction, so each part's hash meets the same rule (a case too small to cut is one part,
with one hash). The attacker is generic: it knows shapes, not tokenizers; an attacker
with knowledge of the exercise (or its solution) can order guesses better, so grow a case's
inputs well past the limit rather than up to it. :func:`canonical` is the codec's encoding made insensitive to
what ``autograder.suite.expect_equal`` ignores: named tuples equal tuples, dict and set order
do not matter, floats count to 10 significant digits, and an object that is not plain data
stands for "some object".
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.util
import itertools
import json
import math
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from . import codec
from .config import Course, CourseConfigError
from .errors import GraderError, SandboxFailure, StudentError
from .i18n import _, in_course_language, ngettext
from .plugin import is_blocked, on_path, open_session
from .proxy import MissingName
from .results import LOCKED_PREFIX, PropertyResult

BUDGET = 10**7  # structured guesses that must fail to find a sealed output
WRAPPERS = frozenset({"dict", "list", "tuple", "set", "sorted", "len", "str"})
FLOAT_DIGITS = 10


class _Part(BaseModel):
    """Some of a sealed case's calls (their indices) and the salted hash of their results."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    calls: list[int]
    sha256: str


class _Entry(BaseModel):
    """One case as written in the course's file (``salt``, ``sha256`` and ``parts`` only once sealed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    object: str | None = None
    setup: list[str] = []
    calls: list[str]
    salt: str | None = None
    sha256: str | None = None
    parts: list[_Part] = []


@dataclass(frozen=True)
class Step:
    """``name`` read from the target, called with literal arguments when ``call``, then
    passed to the builtin ``wrapper`` when there is one."""

    text: str
    name: str
    call: bool
    args: tuple[ast.expr, ...]
    kwargs: tuple[tuple[str, ast.expr], ...]
    wrapper: str | None


@dataclass(frozen=True)
class Case:
    """One locked case of one exercise."""

    exercise: str
    entry: _Entry
    target: Step | None
    setup: tuple[Step, ...]
    calls: tuple[Step, ...]

    @property
    def name(self) -> str:
        return self.entry.name

    def describe(self, calls: Sequence[int] | None = None) -> str:
        """The calls (those at the indices ``calls``, or all) as a student can replay them."""
        chosen = [step for index, step in enumerate(self.calls) if calls is None or index in calls]
        if self.target is None:
            return "\n".join(step.text for step in chosen)
        lines = [f"obj = {self.target.text}", *(f"obj.{s.text}" for s in self.setup)]
        return "\n".join(lines + [f"obj.{s.text}  # checked" for s in chosen])

    def support(self) -> list[tuple[str, str]]:
        """The attributes of support modules its arguments name: ``(module, attribute)``, in order."""
        found = []
        for step in [*([self.target] if self.target else []), *self.setup, *self.calls]:
            for argument in [*step.args, *(value for _name, value in step.kwargs)]:
                found += [(node.value.id, node.attr) for node in ast.walk(argument)
                          if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)]
        return list(dict.fromkeys(found))


# --- reading the cases --------------------------------------------------------------------------


def load_cases(course: Course) -> list[Case]:
    """The course's locked cases, checked; none when the course names no file."""
    if course.delivery.locked is None:
        return []
    path = course.path(course.delivery.locked)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise CourseConfigError(f"{path}: cannot be read ({error})") from None
    if not isinstance(raw, dict):
        raise CourseConfigError(f"{path}: the top level must map exercise modules to lists of cases")
    modules = {e.module for e in course.exercises}
    support = {Path(m).stem for m in course.sandbox.support_modules}
    cases = []
    for module, entries in raw.items():
        if module not in modules:
            raise CourseConfigError(f"{path}: {module}: not an exercise of the course")
        for index, item in enumerate(entries or []):
            where = f"{path}: {module}[{index}]"
            try:
                cases.append(_case(module, _Entry.model_validate(item), support))
            except ValidationError as error:
                problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
                raise CourseConfigError(f"{where}: {problems}") from None
            except (SyntaxError, ValueError) as error:
                raise CourseConfigError(f"{where}: {error}") from None
    return cases


def _case(module: str, entry: _Entry, support: set[str]) -> Case:
    if entry.setup and entry.object is None:
        raise ValueError("setup calls need an object")
    if not entry.calls:
        raise ValueError("a case needs at least one call")
    if (entry.salt is None) != (entry.sha256 is None):
        raise ValueError("a sealed case has both salt and sha256")
    if entry.parts and sorted(i for part in entry.parts for i in part.calls) != list(range(len(entry.calls))):
        raise ValueError("parts must hold every call once")
    target = None if entry.object is None else _step(entry.object, support)
    if target is not None and (not target.call or target.wrapper):
        raise ValueError(f"object: {entry.object!r} should be a call such as Name()")
    return Case(module, entry, target, tuple(_step(s, support) for s in entry.setup),
                tuple(_step(s, support) for s in entry.calls))


def _step(text: str, support: set[str]) -> Step:
    """Parse ``name``, ``name(literals)`` or ``builtin(name(literals))``."""
    node = ast.parse(text.strip(), mode="eval").body
    wrapper = None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WRAPPERS
            and len(node.args) == 1 and not node.keywords):
        wrapper, node = node.func.id, node.args[0]
    if isinstance(node, ast.Name):
        return Step(text.strip(), node.id, False, (), (), wrapper)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise ValueError(f"{text!r}: expected name, name(arguments) or builtin(name(arguments))")
    if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        raise ValueError(f"{text!r}: no * or ** arguments")
    keywords = tuple((k.arg, k.value) for k in node.keywords if k.arg is not None)  # none is None: checked above
    step = Step(text.strip(), node.func.id, True, tuple(node.args), keywords, wrapper)
    for argument in [*step.args, *(value for _name, value in step.kwargs)]:
        _value(argument, lambda name: _known(name, support, text))
    return step


def _known(name: str, support: set[str], text: str) -> Any:
    if name not in support:
        raise ValueError(f"{text!r}: {name} is not a support module of the course ({', '.join(sorted(support))})")
    return _Any()


class _Any:
    """Stands for any attribute of a support module while the cases are checked."""

    def __getattr__(self, name: str) -> _Any:
        return self


def _value(node: ast.expr, support: Callable[[str], Any]) -> Any:
    """A literal, or ``module.attribute`` of a support module, from an argument's syntax."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _value(node.operand, support)
        if type(operand) not in (int, float):
            raise ValueError(f"a sign applies to numbers only: {ast.unparse(node)}")
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_value(item, support) for item in node.elts]
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        pairs = zip(node.keys, node.values, strict=True)
        return {_value(k, support): _value(v, support) for k, v in pairs if k is not None}  # none is, checked above
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return getattr(support(node.value.id), node.attr)
    raise ValueError(f"not a literal or a support module's attribute: {ast.unparse(node)}")


# --- running a case -----------------------------------------------------------------------------


def run_case(case: Case, module: Any, support: Callable[[str], Any]) -> list:
    """The case's output: the results of its calls on ``module`` (the student's, through the
    sandbox, or the reference's); ``support(name)`` gives a support module or ``builtins``."""
    target = module if case.target is None else _run(case.target, module, support)
    for step in case.setup:
        _run(step, target, support)
    return [_run(step, target, support) for step in case.calls]


def _run(step: Step, target: Any, support: Callable[[str], Any]) -> Any:
    value = getattr(target, step.name)
    if step.call:
        value = value(*(_value(a, support) for a in step.args), **{k: _value(v, support) for k, v in step.kwargs})
    if step.wrapper is not None:
        value = getattr(support("builtins"), step.wrapper)(value)
    return value


# --- hashing ------------------------------------------------------------------------------------


def canonical(value: Any) -> bytes:
    """The codec's encoding of ``value``, normalised so that equal answers give equal bytes."""
    tree = _normal(codec.encode(value, lambda _obj: {"$object": None}))
    return json.dumps(tree, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _normal(node: Any) -> Any:
    if type(node) is float:
        return float(f"{node:.{FLOAT_DIGITS}g}") + 0.0 if math.isfinite(node) else node
    if type(node) is list:
        return [_normal(item) for item in node]
    if type(node) is not dict:
        return node
    (tag, body), = node.items()
    if tag == "$named":
        return {"$tuple": _normal(body[2])}
    if tag == "$dict":
        return {tag: sorted(([_normal(k), _normal(v)] for k, v in body), key=lambda pair: _key(pair[0]))}
    if tag in ("$set", "$frozenset"):
        return {tag: sorted((_normal(item) for item in body), key=_key)}
    return {tag: _normal(body)}


def _key(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"))


def digest(salt: str, value: Any) -> str:
    """``sha256(salt + canonical(value))`` in hex; ``salt`` is hex."""
    return hashlib.sha256(bytes.fromhex(salt) + canonical(value)).hexdigest()


# --- the attacker's structured search (instructor, at build time) ----------------------------------


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
    inputs the call sees (its own arguments, the object's and the setup's)."""
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
        for argument in [*step.args, *(value for _name, value in step.kwargs)]:
            _read(_value(argument, lambda _name: _Any()), texts, numbers)
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
    if value is None or type(value) is bool:
        return _choice([value] if value is None else [False, True])
    if type(value) is int:
        return _choice(range(-1, 2 * inputs.top + 2))
    if type(value) is float:
        return _ratios(inputs)
    if isinstance(value, (str, bytes)):
        return _pieces(inputs, type(value))
    if isinstance(value, dict):
        keys = list(value)
        spaces = [_space(value[key], inputs) for key in keys]
        return _mapped(_product(spaces), lambda vs: dict(zip(keys, vs, strict=False)))
    if isinstance(value, (set, frozenset)):
        if not value:
            return _choice([value])
        return _mapped(_subsets(_space(next(iter(value)), inputs), len(value)), type(value))
    if isinstance(value, (list, tuple)):
        return _sequence_space(value, inputs)
    return _choice([value])


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
    grids = sorted({n for n in inputs.numbers if n > 0})

    @functools.cache
    def count(left: int, room: int, last: int) -> int:
        return 1 if left == 0 else sum(count(left - 1, room - d, d) for d in _next_steps(room, last, steps))

    def walk(left: int, room: int, last: int) -> Iterator[tuple[int, ...]]:
        if left == 0:
            yield ()
        for d in _next_steps(room, last, steps) if left else ():
            yield from ((d, *rest) for rest in walk(left - 1, room - d, d))

    def starts(n: int) -> Sequence[int]:
        return range(n + 1) if end is None else [round(end * n)]

    def room(n: int, start: int) -> int:
        return start if direction < 0 else n - start

    @functools.cache
    def coarsest(n: int) -> int:
        """Curves on grid n and on no coarser one."""
        on = {d: sum(count(length - 1, room(d, k), -1) for k in starts(d)) for d in _divisors(n)}
        return sum(_moebius(n // d) * on[d] for d in on)

    def curves() -> Iterator[list[float]]:
        for n in grids:
            for start in starts(n):
                for moves in walk(length - 1, room(n, start), -1):
                    points = list(itertools.accumulate(moves, lambda k, d: k + direction * d, initial=start))
                    grid = n // math.gcd(n, *points)
                    if next(g for g in grids if g % grid == 0) == n:
                        yield [k / n for k in points]

    size, counted = 0, set[int]()
    for n in grids:
        if size > BUDGET:
            break
        fresh = set(_divisors(n)) - counted
        size += sum(coarsest(d) for d in fresh)
        counted |= fresh
    return Space(size, curves)


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


# --- sealing (instructor) and checking (student) --------------------------------------------------


def seal(course: Course) -> dict[str, list[dict]]:
    """Run the reference on every case; return the cases with a salt and their output's hash.

    Raises :class:`GraderError` naming every case that :func:`attack` recovers from its hash.
    """
    sealed: dict[str, list[dict]] = {}
    found = []
    support = _reference_support(course)
    with on_path(course.root):
        for case in load_cases(course):
            module = importlib.import_module(f"{course.solutions}.{case.exercise}")
            output = run_case(case, module, support)
            salt = secrets.token_hex(16)
            spaces = attack_spaces(case, output)
            if attack(spaces, salt, digest(salt, output)) is not None:
                guesses = math.prod(space.size for space in spaces)
                found.append(f"{case.exercise}: {case.name!r} (found by a search of {guesses:,} structured guesses)")
            parts = [{"calls": part, "sha256": digest(salt, [output[i] for i in part])} for part in split(spaces)]
            entry = case.entry.model_dump(exclude_defaults=True) | {"salt": salt, "sha256": digest(salt, output)} | (
                {"parts": parts} if len(parts) > 1 else {})
            sealed.setdefault(case.exercise, []).append(entry)
    if found:
        raise GraderError(f"locked cases whose answers are too small to hide (a search of at most {BUDGET:,} "
                          "guesses shaped like the answer recovers them); make their inputs larger or add "
                          "calls: " + "; ".join(found))
    return sealed


def split(spaces: list[Space]) -> list[list[int]]:
    """The calls of a case in parts, each hashed on its own so a failure can name its call: in
    order, a part ends once its calls' spaces hold more than :data:`BUDGET` candidates, the
    rule's size for a case; calls left over join the last part (so a case too small to split
    stays one part)."""
    parts: list[list[int]] = []
    current: list[int] = []
    for index in range(len(spaces)):
        current.append(index)
        if math.prod(spaces[i].size for i in current) > BUDGET:
            parts.append(current)
            current = []
    if current:
        parts[-1:] = [[*parts[-1], *current]] if parts else [current]
    return parts


def _reference_support(course: Course) -> Callable[[str], Any]:
    """The course's support modules (and ``builtins``) loaded here, for the reference."""
    modules = {"builtins": importlib.import_module("builtins")}
    for relative in course.sandbox.support_modules:
        path = course.path(relative)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise GraderError(f"{relative}: not a Python module the reference can load")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[path.stem] = module
    return modules.__getitem__


@in_course_language
def check_locked(course: Course, submission: Path) -> list[PropertyResult]:
    """Run every sealed case on a prepared submission in the sandbox; one result per case."""
    results = []
    for case in load_cases(course):
        if case.entry.sha256 is None:
            raise GraderError(f"locked case {case.exercise}: {case.name!r} holds no hash: build a release to seal it")
        results.append(_check_case(course, submission, case))
    return results


def _check_case(course: Course, submission: Path, case: Case) -> PropertyResult:
    exercise = course.exercise(case.exercise)
    session = open_session(course, submission, exercise, course.limits.property_seconds)
    result = PropertyResult(exercise=case.exercise, name=f"{LOCKED_PREFIX}{case.name}", points=0, score=0, passed=False,
                            hidden=False, output="")
    try:
        output = run_case(case, session.module(f"{course.package}.{case.exercise}"), session.module)
    except (StudentError, SandboxFailure, MissingName) as error:
        if is_blocked(error):  # as the properties it stops say it, after a first line of the case's own
            return replace(result, output=_("Locked case {name}").format(name=repr(case.name)) + f"\n\n{error}",
                           blocked=True)
        return replace(result, output=_("Locked case {name} failed:").format(name=repr(case.name)) + f"\n\n{error}\n\n"
                       + _("Its calls:") + f"\n{_indented(case.describe())}{_support_notes(course, case)}")
    finally:
        session.close()
    salt = case.entry.salt or ""
    if digest(salt, output) == case.entry.sha256:
        return replace(result, passed=True)
    parts = case.entry.parts or [_Part(calls=list(range(len(case.calls))), sha256=case.entry.sha256 or "")]
    wrong = [part.calls for part in parts if digest(salt, [output[i] for i in part.calls]) != part.sha256]
    singles = [calls[0] for calls in wrong if len(calls) == 1]
    told = [ngettext("the answer of this call differs from the reference's:",
                     "the answers of these calls differ from the reference's:", len(singles))
            + f"\n\n{_indented(case.describe(singles))}"] if singles else []
    for calls in (calls for calls in wrong if len(calls) > 1):  # answers hashed together
        told.append((_("and at least one of these calls differs (their answers are locked together, so the check "
                       "cannot tell which):") if told else
                     _("the answer of at least one of these calls differs (their answers are locked together, so "
                       "the check cannot tell which):")) + f"\n\n{_indented(case.describe(calls))}")
    right = [i for i in range(len(case.calls)) if all(i not in calls for calls in wrong)]
    if right:
        told.append(_("Its other calls gave the reference's answers:") + f"\n{_indented(case.describe(right))}")
    said = "\n\n".join(told)
    return replace(result, output=(
        _("Locked case {name}:").format(name=repr(case.name)) + f" {said}{_support_notes(course, case)}\n\n"
        + _("The expected answers are locked (only a salted hash of them ships with the course), so they are not "
            "shown; the docstrings' rules and examples decide them.")))


def _indented(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _support_notes(course: Course, case: Case) -> str:
    """What the support modules' attributes a case's calls name are, and how a student gets
    them: ``encoders`` is the course's tokcourse/grading/encoders.py, with each attribute's
    docstring's first line."""
    named = case.support()
    notes = []
    for module in dict.fromkeys(module for module, _attribute in named):
        path = next((course.path(m) for m in course.sandbox.support_modules if Path(m).stem == module), None)
        if path is None:
            continue
        relative = path.relative_to(course.root)
        package = ".".join(relative.parent.parts)
        where = f"from {package} import {module}" if package else f"import {module}"
        docs = _first_lines(path)
        notes.append(_("{module} is the course's {path} ({where}):").format(module=module, path=relative.as_posix(),
                                                                          where=where))
        notes += [f"    {module}.{attribute}" + (f": {docs[attribute]}" if docs.get(attribute) else "")
                  for m, attribute in named if m == module]
    return "\n\n" + "\n".join(notes) if notes else ""


def _first_lines(path: Path) -> dict[str, str]:
    """The first docstring line of each function of a module's source (read, not run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name: (ast.get_docstring(node) or "").strip().split("\n", 1)[0] for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
