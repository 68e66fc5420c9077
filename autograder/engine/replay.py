"""A property that passed replays its examples without hypothesis.

The first passing grading of a property on a machine records the examples hypothesis showed it
(:class:`Recorder`, :class:`DrawLog` for a ``st.data()`` argument); every later grading calls the
test on them directly (:class:`Examples` loads them, :class:`Replayed` hands out the draws), and
the first example that does not pass hands the property back to hypothesis. Why that gives the
same grade, where records live and who may write them: docs/architecture.md, "Recorded examples:
the replay".
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis
import hypothesis.strategies as st
import pytest

from .. import internals
from ..equality import identical
from ..isolation import codec, keyed_folder, own_folder

Example = dict[str, Any]
Draw = tuple[str, Any, Any]  # the strategy's repr hashed, the label, the value (encoded)


class Examples:
    """The recorded examples of one course's properties, in ``folder`` (None: nothing is kept)."""

    def __init__(self, folder: Path | None, course_digest: str, seed: int):
        self.folder = folder
        engine = b"".join(path.read_bytes() for path in (Path(__file__).with_name("plugin.py"), Path(__file__),
                                                          Path(internals.__file__)))
        self.course_key = "\0".join([course_digest, str(seed), sys.version, unicodedata.unidata_version,
                                     hypothesis.__version__, hashlib.sha256(engine).hexdigest()])

    def _file(self, nodeid: str, test: Any) -> Path | None:
        """Where the record of the hypothesis test ``test`` (pytest's ``nodeid``) lives, if anywhere."""
        if self.folder is None:
            return None
        key = "\0".join([self.course_key, nodeid, repr(internals.settings_of(test))])
        return self.folder / f"{hashlib.sha256(key.encode('utf-8', 'surrogateescape')).hexdigest()}.json"

    def load(self, nodeid: str, test: Any) -> list[Example] | None:
        """The test's recorded examples, or None (none yet, or unreadable); a ``st.data()``
        argument is a :class:`Replayed` of its draws."""
        file = self._file(nodeid, test)
        try:
            data = json.loads(file.read_bytes()) if file is not None else None
            examples = [_example(record) for record in data] if type(data) is list else None
        except (OSError, ValueError, TypeError, KeyError):  # codec.CodecError is a ValueError
            return None
        return examples

    def save(self, nodeid: str, test: Any, wires: list[Any]) -> None:
        """Keep ``wires`` (encoded examples) for the test; a cache that cannot be written is skipped."""
        target = self._file(nodeid, test)
        if target is None:
            return
        try:
            with tempfile.NamedTemporaryFile("w", dir=target.parent, suffix=".tmp", delete=False) as out:
                json.dump(wires, out, separators=(",", ":"))
            os.replace(out.name, target)  # whole or not at all, should two graders record at once
        except OSError:
            return


def _example(record: Any) -> Example:
    """One recorded example: its plain arguments, and a :class:`Replayed` for each ``st.data()``."""
    example = codec.decode(record["args"])
    draws = record["draws"]
    if type(example) is not dict or type(draws) is not dict:
        raise TypeError("not an example")
    for name, drawn in draws.items():
        example[name] = Replayed([(strategy, label, wire) for strategy, label, wire in drawn["made"]],
                                 drawn["stopped"] is True)
    if not all(type(name) is str for name in example):
        raise TypeError("not an example")
    return example


def cache_folder() -> Path | None:
    """Where this process keeps records: ``$AUTOGRADER_RECORDS`` if set (``off``: nowhere), else
    beside hypothesis's own files (the grader's cache, see
    :func:`autograder.isolation.hypothesis_storage`), as ``autograder-examples-`` and a random
    key: a property's first passing grading writes there, and a worker that could name the folder
    would see its times move (:func:`autograder.isolation.cache.keyed_folder`). Only a folder that
    is this user's alone, in a folder that is this user's alone, is used: whoever can write a
    record there decides which examples a property sees."""
    chosen = os.environ.get("AUTOGRADER_RECORDS")
    if chosen == "off":
        return None
    if chosen:
        return own_folder(Path(chosen).resolve())
    return keyed_folder(Path(os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or ".hypothesis").resolve(),
                        "autograder-examples")


def replayable(item: pytest.Item) -> bool:
    """Whether ``item`` is a hypothesis test at module level (what this module replays)."""
    return (isinstance(item, pytest.Function) and hypothesis.is_hypothesis_test(item.obj)
            and getattr(item, "instance", None) is None)


class Recorder:
    """``test`` stands in for a hypothesis test's inner function (same name and signature): it
    records each example, then runs it. ``wires`` is the examples so far, encoded, or None once
    one cannot be recorded exactly."""

    def __init__(self, inner: Callable[..., Any], fixtures: set[str]):
        self.wires: list[Any] | None = []

        @functools.wraps(inner)
        def test(*args: Any, **kwargs: Any) -> Any:
            if self.wires is None or args:
                self.wires = None
                return inner(*args, **kwargs)
            logs = {name: DrawLog(value) for name, value in kwargs.items() if isinstance(value, st.DataObject)}
            wire = exact_wire({k: v for k, v in kwargs.items() if k not in fixtures and k not in logs})
            try:
                return inner(*args, **{**kwargs, **logs})
            finally:  # an example that fails ends the recording anyway: a failing property is not kept
                if wire is None or any(log.draws is None for log in logs.values()) or self.wires is None:
                    self.wires = None
                else:
                    draws = {name: {"made": log.draws, "stopped": log.stopped} for name, log in logs.items()}
                    self.wires = [*self.wires, {"args": wire, "draws": draws}]

        self.test = test


class DrawLog:
    """A ``st.data()`` argument that keeps what was drawn from it: ``draws``, or None once a
    value cannot be recorded exactly."""

    def __init__(self, data: st.DataObject):
        self._data = data
        self.draws: list[Draw] | None = []
        self.stopped = False  # hypothesis ended the example at a draw

    def draw(self, strategy: st.SearchStrategy, label: Any = None) -> Any:
        try:
            value = self._data.draw(strategy, label)
        except BaseException:
            self.stopped = True
            raise
        if self.draws is not None:
            pair = exact_wire([label, value])  # a list: None only if not exact
            if pair is None:
                self.draws = None
            else:
                self.draws.append((_named(strategy), label, pair[1]))
        return value


class Replayed:
    """A ``st.data()`` argument in a replay: hands out the recorded draws, each only to the same
    draw (the strategy's repr, the label) in turn, and raises :class:`Stopped` at the next draw
    of an example that hypothesis ``stopped`` there; anything else raises :class:`Unlike`."""

    def __init__(self, draws: list[Draw], stopped: bool):
        self._draws = draws
        self.stopped = stopped
        self.made = 0
        self.ended = False  # it raised Stopped

    def draw(self, strategy: st.SearchStrategy, label: Any = None) -> Any:
        if self.made == len(self._draws) and self.stopped and not self.ended:
            self.ended = True
            raise Stopped
        if self.made == len(self._draws) or self._draws[self.made][:2] != (_named(strategy), label):
            raise Unlike("the example draws otherwise than it did when recorded")
        self.made += 1
        return codec.decode(self._draws[self.made - 1][2])  # a fresh copy: a test may change what it drew

    @property
    def done(self) -> bool:
        """Whether the example made every draw recorded, and ended where hypothesis ended it."""
        return self.made == len(self._draws) and self.ended == self.stopped


class Unlike(Exception):
    """A replayed example's draws differ from the recorded ones: hypothesis runs the property."""


class Stopped(BaseException):
    """Where hypothesis ended a recorded example at a draw, the replay ends it alike."""


def _named(strategy: st.SearchStrategy) -> str:
    return hashlib.sha256(repr(strategy).encode("utf-8", "surrogatepass")).hexdigest()


def exact_wire(value: Any) -> Any | None:
    """``value`` encoded by :mod:`autograder.isolation.inside.codec`, or None unless decoding gives it back exactly:
    the same types all the way down, floats to the bit, dicts and sets in the same order, and no
    list, dict or set found twice (the copy would not share it)."""
    try:
        wire = codec.encode(value)
        again = codec.decode(json.loads(json.dumps(wire)))
    except (codec.CodecError, RecursionError):
        return None
    return wire if identical(value, again) else None


def passes(inner: Callable[..., Any], fixtures: dict[str, Any], examples: list[Example]) -> bool:
    """Whether the test body passes every example, each run as hypothesis runs one: the global
    ``random``, and every other generator that hypothesis manages, seeded with 0 as it starts.
    Hypothesis saves their states before each example and restores them after; here that is
    done once around them all, which looks the same from inside an example and costs less.
    Anything else, a value returned included (an error under hypothesis), is not passing: a
    :class:`~autograder.errors.SandboxFailure` and pytest's outcomes derive from
    ``BaseException``, so only an interrupt goes through."""
    with internals.seeded_randoms():
        for example in examples:
            internals.reseed_randoms()
            if not example_passes(inner, fixtures, example):
                return False
    return True


def example_passes(inner: Callable[..., Any], fixtures: dict[str, Any], example: Example) -> bool:
    """Whether the test body passes ``example`` (see :func:`passes`)."""
    replayed = [value for value in example.values() if isinstance(value, Replayed)]
    try:
        if inner(**fixtures, **example) is not None:
            return False
        ended = False
    except Stopped:
        ended = True
    except KeyboardInterrupt:
        raise
    except BaseException:
        return False
    return all(value.done for value in replayed) and ended == any(value.ended for value in replayed)
