"""The wire codec keeps plain data exact and refuses everything else."""

import json
import math
import time
from collections import namedtuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.isolation.inside import codec

Step = namedtuple("Step", "rank pair token")

plain_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary()
hashable = st.recursive(plain_leaves, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
                        max_leaves=6)
plain = st.recursive(
    plain_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(hashable, inner, max_size=3)
    | st.sets(hashable, max_size=3) | st.builds(Step, inner, inner, inner),
    max_leaves=20,
)


def same(a, b):
    """Equal and of the same types all the way down (a decoded named tuple is a fresh class)."""
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        return type(b).__name__ == type(a).__name__ and b._fields == a._fields and all(map(same, a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@settings(database=None, derandomize=True, deadline=None, max_examples=300)
@given(plain)
def test_round_trip_keeps_values_and_types(value):
    assert same(codec.loads(codec.dumps(value)), value)


def test_floats_and_big_ints_are_exact():
    values = [0.1 + 0.2, 1e-310, -0.0, math.inf, 2**200, -(2**70)]
    back = codec.loads(codec.dumps(values))
    assert [repr(v) for v in back] == [repr(v) for v in values]


def test_lone_surrogates_survive():
    assert codec.loads(codec.dumps("\ud800x")) == "\ud800x"


def test_subclasses_of_plain_types_travel_as_their_base():
    from collections import Counter, OrderedDict
    from enum import IntEnum

    Size = IntEnum("Size", "SMALL BIG")
    back = codec.loads(codec.dumps([Counter("aab"), OrderedDict(a=1), Size.BIG, True]))
    assert back == [{"a": 2, "b": 1}, {"a": 1}, 2, True]
    assert [type(v) for v in back] == [dict, dict, int, bool]


def test_objects_need_a_handle_hook():
    with pytest.raises(codec.CodecError, match="object is not plain data"):
        codec.dumps(object())
    assert codec.encode(object(), lambda obj: {"$handle": 7}) == {"$handle": 7}
    assert codec.decode({"$handle": 7}, lambda body: ("obj", body)) == ("obj", 7)


@pytest.mark.parametrize("wire", [
    b'{"$eval": "1"}', b'{"a": 1, "b": 2}', b'{"$tuple": 3}', b'{"$dict": [[1]]}', b'{"$bytes": "!!"}',
    b'{"$dict": [[[1], 2]]}', b'{"$named": ["1x", ["a"], [1]]}', b'{"$named": ["T", ["a", "a"], [1, 2]]}',
    b'{"$named": "T"}', b'{"$handle": 1}', b"not json", b"[" * 5000,
    codec.dumps(namedtuple("Wide", [f"f{i}" for i in range(codec.MAX_FIELDS + 1)])(*range(codec.MAX_FIELDS + 1))),
    codec.dumps(namedtuple("L" * (codec.MAX_NAME + 1), "a")(1)),
])
def test_malformed_messages_are_refused(wire):
    with pytest.raises(codec.CodecError):
        codec.loads(wire)


def test_deep_nesting_is_refused():
    value = []
    for _ in range(codec.MAX_DEPTH + 5):
        value = [value]
    with pytest.raises(codec.CodecError, match="deeper"):
        codec.dumps(value)
    with pytest.raises(codec.CodecError):
        codec.loads(json.dumps(value).encode())


def nested(inner, levels):
    for _ in range(levels):
        inner = [inner]
    return inner


@pytest.mark.parametrize("levels", [codec.MAX_DEPTH - 2, codec.MAX_DEPTH - 1, codec.MAX_DEPTH, codec.MAX_DEPTH + 1])
@pytest.mark.parametrize("inner", [[0, "a"], (0, "a"), [], [[0]]], ids=["list", "tuple", "empty", "list-of-list"])
def test_the_depth_limit_counts_the_scalars_of_a_flat_list(inner, levels):
    """A list of scalars is encoded and decoded in one piece, and its scalars still count as a
    level: a value is refused exactly when its deepest leaf lies deeper than ``MAX_DEPTH``."""
    value = nested(inner, levels)
    deepest = levels + (2 if inner == [[0]] else 0 if inner == [] else 1)
    wire = "[" * levels + json.dumps(codec.encode(inner)) + "]" * levels
    for run in (lambda: codec.dumps(value), lambda: codec.loads(wire.encode())):
        if deepest > codec.MAX_DEPTH:
            with pytest.raises(codec.CodecError, match="deeper"):
                run()
        else:
            run()
    if deepest <= codec.MAX_DEPTH:
        assert same(codec.loads(codec.dumps(value)), value)


def test_flat_lists_count_every_value():
    under = json.dumps({"$tuple": [0] * (codec.MAX_ITEMS - 1)}).encode()  # the tag's object is one value more
    assert len(codec.loads(under)) == codec.MAX_ITEMS - 1
    with pytest.raises(codec.CodecError, match="more than"):
        codec.loads(json.dumps({"$tuple": [0] * codec.MAX_ITEMS}).encode())


@pytest.mark.parametrize("length, late", [(10, False), (5000, True)])
def test_a_long_flat_list_still_looks_at_the_clock(monkeypatch, length, late):
    looks = iter([0.0] + [10.0] * 10)  # the first look is in time, every later one is past the deadline
    monkeypatch.setattr(codec.time, "monotonic", lambda: next(looks))
    wire = json.dumps(list(range(length))).encode()
    if late:
        with pytest.raises(codec.CodecTimeout):
            codec.loads(wire, deadline=5.0)
    else:
        assert codec.loads(wire, deadline=5.0) == list(range(length))


def test_encoding_copies_a_flat_list():
    value = [1, 2]
    wire = codec.encode(value)
    value.append(3)
    assert wire == [1, 2]


COLLIDING = [i * (2**61 - 1) for i in range(40_000)]  # ints hash modulo 2**61 - 1: all these hash to 0


@pytest.mark.parametrize("message", [
    {"$set": COLLIDING}, {"$frozenset": COLLIDING}, {"$dict": [[key, 0] for key in COLLIDING]},
], ids=["set", "frozenset", "dict"])
def test_keys_with_equal_hashes_stop_at_the_deadline(message):
    wire = json.dumps(message).encode()  # some 10 s to decode without a deadline
    started = time.monotonic()
    with pytest.raises(codec.CodecTimeout):
        codec.loads(wire, deadline=started + 0.1)
    assert time.monotonic() - started < 3  # a generous bound, not a benchmark


def test_a_passed_deadline_refuses_even_a_small_message():
    with pytest.raises(codec.CodecTimeout, match="deadline"):
        codec.loads(b"[1, 2]", deadline=time.monotonic() - 1)
    with pytest.raises(codec.CodecTimeout):
        codec.decode(None, deadline=time.monotonic() - 1)


def test_a_deadline_far_ahead_changes_nothing():
    value = [{f"k{i}": i for i in range(100_000)}, list(range(1_000_000)),
             {Step(1, (2, b"3"), frozenset({4.5})): {"ab", None}}]
    back = codec.loads(codec.dumps(value), deadline=time.monotonic() + 3600)
    assert back == value and same(back[2], value[2])


def test_too_many_values_are_refused():
    with pytest.raises(codec.CodecError, match=f"more than {codec.MAX_ITEMS} values"):
        codec.loads(json.dumps([0] * codec.MAX_ITEMS).encode())  # the list itself is one more


def test_named_tuple_classes_stay_few():
    for i in range(4 * codec.MAX_SHAPES):  # four times what the cache keeps
        codec.loads(json.dumps({"$named": [f"Shape{i}", ["a", f"b{i}"], [1, 2]]}).encode())
    info = codec.named_classes().cache_info()
    assert info.maxsize == codec.MAX_SHAPES and info.currsize <= codec.MAX_SHAPES


def test_equal_shapes_in_one_message_share_a_class():
    shapes = [namedtuple(f"Shape{i}", "a b") for i in range(codec.MAX_SHAPES)]
    back = codec.loads(codec.dumps([shape(1, 2) for shape in shapes] * 2))
    assert all(type(a) is type(b) for a, b in zip(back[: len(shapes)], back[len(shapes):], strict=False))
    with pytest.raises(codec.CodecError, match="shapes"):
        codec.loads(codec.dumps([shape(1, 2) for shape in shapes] + [namedtuple("OneMore", "a")(1)]))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=20,
)


@settings(database=None, derandomize=True, deadline=None, max_examples=300)
@given(json_values)
def test_json_is_written_and_read_as_the_json_package_does(value):
    """codec's own set-up of json's C encoder and scanner (the worker does not import json)."""
    wire = codec.to_json(value)
    assert wire == json.dumps(value, separators=(",", ":"))
    assert repr(codec.from_json(wire.encode("ascii"))) == repr(json.loads(wire))  # repr: NaN is not NaN


@pytest.mark.parametrize("raw", [b"", b" 1", b"1 ", b"[1][2]", b'{"a":1,}', b"\xff", b"[" * 100_000, b"nan"])
def test_anything_but_one_json_value_is_refused(raw):
    with pytest.raises(codec.CodecError, match="message is not JSON"):
        codec.loads(raw)


def test_without_json_s_c_speedups_the_json_package_serves_alike():
    """A Python without ``_json`` (json's C speedups) writes and reads the same wire."""
    import subprocess
    import sys

    probe = ("import sys; sys.modules['_json'] = None\n"
             "from autograder.isolation.inside import codec\n"
             "assert 'json' in sys.modules, 'the fallback did not run'\n"
             "wire = codec.dumps({(1, 2): [b'th', 3.5, float('inf'), 'é']})\n"
             "print(wire.decode()); print(codec.loads(wire))\n"
             "for bad in (b' 1', b'1 ', b''):\n"
             "    try: codec.loads(bad)\n"
             "    except codec.CodecError: pass\n"
             "    else: raise SystemExit(f'accepted {bad!r}')\n")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines() == [codec.dumps({(1, 2): [b"th", 3.5, float("inf"), "é"]}).decode(),
                                       "{(1, 2): [b'th', 3.5, inf, 'é']}"]
