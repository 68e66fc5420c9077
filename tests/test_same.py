"""The equality that decides points (``suite.expect_equal``) is strict on types at every level:
in dict keys and set members too, where Python's ``==`` lets ``1``, ``1.0`` and ``True`` pass for
each other."""

from collections import namedtuple

from hypothesis import given
from hypothesis import strategies as st

from autograder.suite import _same


def equal_leaves() -> st.SearchStrategy[tuple[object, object, bool]]:
    """``(a, b, retyped)``: ``a == b``, and ``retyped`` says whether their types differ."""
    alike = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3),
                      st.binary(max_size=3)).map(lambda value: (value, value, False))

    def spellings(number: int) -> list[object]:
        return [number, float(number), *([bool(number)] if number in (0, 1) else [])]

    crossed = st.integers(-2, 3).map(spellings).flatmap(
        lambda forms: st.tuples(st.sampled_from(forms), st.sampled_from(forms))).map(
        lambda pair: (pair[0], pair[1], type(pair[0]) is not type(pair[1])))
    return st.one_of(alike, crossed)


def joined(kind: type, pairs: list[tuple[object, object, bool]]) -> tuple[object, object, bool]:
    return kind(a for a, _, _ in pairs), kind(b for _, b, _ in pairs), any(r for _, _, r in pairs)


def hashable_pairs() -> st.SearchStrategy[tuple[object, object, bool]]:
    return st.recursive(equal_leaves(), lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda pairs: joined(tuple, pairs)),
        st.lists(inner, max_size=3, unique_by=lambda pair: pair[0]).map(lambda pairs: joined(frozenset, pairs))),
        max_leaves=6)


def dicts(values: st.SearchStrategy) -> st.SearchStrategy[tuple[object, object, bool]]:
    items = st.lists(st.tuples(hashable_pairs(), values), max_size=3, unique_by=lambda item: item[0][0])
    return items.map(lambda pairs: ({k[0]: v[0] for k, v in pairs}, {k[1]: v[1] for k, v in pairs},
                                    any(k[2] or v[2] for k, v in pairs)))


def equal_pairs() -> st.SearchStrategy[tuple[object, object, bool]]:
    return st.recursive(equal_leaves(), lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda pairs: joined(list, pairs)),
        st.lists(inner, max_size=3).map(lambda pairs: joined(tuple, pairs)),
        st.lists(hashable_pairs(), max_size=3, unique_by=lambda pair: pair[0]).map(lambda pairs: joined(set, pairs)),
        dicts(inner)), max_leaves=10)


@given(equal_pairs())
def test_values_that_are_equal_are_the_same_only_if_every_type_matches(pair):
    a, b, retyped = pair
    assert a == b
    assert _same(a, b) is not retyped
    assert _same(b, a) is not retyped


def test_dict_keys_and_set_members_are_compared_by_type():
    assert not _same({(1, 2): 3}, {(True, 2.0): 3})
    assert not _same({1: "a"}, {1.0: "a"})
    assert not _same({frozenset({1})}, {frozenset({True})})
    assert _same({(1, 2): [3.0]}, {(1, 2): [3.0]})
    assert _same({"a", ("b", 1)}, {("b", 1), "a"})


def test_a_named_tuple_is_its_plain_tuple_and_nan_is_itself():
    pair = namedtuple("Pair", "left right")
    assert _same(pair(1, "x"), (1, "x"))
    assert not _same(pair(1, "x"), (True, "x"))
    assert _same([float("nan")], [float("nan")])
