"""The equality that decides points (``autograder.equality.same``, which ``suite.expect_equal``
uses) is strict on types at every level: in dict keys and set members too, where Python's ``==``
lets ``1``, ``1.0`` and ``True`` pass for each other. The two relations layered on it agree with
it: ``identical`` (a replayed record) holds only where it holds, and a locked case's canonical
bytes are equal exactly where it holds, for values that cross the sandbox."""

from collections import namedtuple

from hypothesis import given
from hypothesis import strategies as st

from autograder.equality import identical, same
from autograder.isolation.inside import codec
from autograder.locked.hashing import canonical


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
    assert same(a, b) is not retyped
    assert same(b, a) is not retyped


def test_dict_keys_and_set_members_are_compared_by_type():
    assert not same({(1, 2): 3}, {(True, 2.0): 3})
    assert not same({1: "a"}, {1.0: "a"})
    assert not same({frozenset({1})}, {frozenset({True})})
    assert same({(1, 2): [3.0]}, {(1, 2): [3.0]})
    assert same({"a", ("b", 1)}, {("b", 1), "a"})


def test_a_named_tuple_is_its_plain_tuple_and_nan_is_itself():
    pair = namedtuple("Pair", "left right")
    assert same(pair(1, "x"), (1, "x"))
    assert not same(pair(1, "x"), (True, "x"))
    assert same([float("nan")], [float("nan")])


def plain_values() -> st.SearchStrategy[object]:
    """Values that cross the sandbox as they are, drawn from few leaves so that two draws often
    match, or differ only in a type, an order or a float's sign."""
    keys = st.sampled_from([None, False, True, 0, 1, 2, 0.0, -0.0, 1.0, 0.5, float("inf"), "", "a", "ab", b"a"])
    leaves = st.one_of(keys, st.just(float("nan")))  # a NaN key is found by no lookup, in Python or here
    hashable = st.recursive(keys, lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple), st.frozensets(inner, max_size=3)), max_leaves=4)
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple), st.sets(hashable, max_size=3),
        st.dictionaries(hashable, inner, max_size=3)), max_leaves=8)


def copied(value: object) -> object:
    """``value`` after a round trip through the sandbox's codec: what the grader gets back."""
    return codec.loads(codec.dumps(value))


@given(plain_values(), plain_values())
def test_identical_values_are_the_same(a, b):
    """A copy is always the same; it is identical too unless a set's order or a shared list differs."""
    assert same(a, copied(a))
    for other in (copied(a), b):
        assert not identical(a, other) or same(a, other)


@given(plain_values(), plain_values())
def test_a_locked_case_hashes_alike_exactly_the_answers_that_are_the_same(a, b):
    """``canonical`` is the codec's wire made order-insensitive, floats to 10 digits: on values
    whose floats are among a few with short representations, its equality is :func:`same`'s."""
    assert (canonical(a) == canonical(b)) is same(a, b)


def test_the_layers_differ_from_same_only_where_they_say():
    pair = namedtuple("Pair", "left right")
    assert same(pair(1, 2), (1, 2)) and not identical(pair(1, 2), (1, 2))  # a record keeps its class
    assert same(0.0, -0.0) and not identical(0.0, -0.0)  # and its float bits
    assert same({1: 2, 3: 4}, {3: 4, 1: 2}) and not identical({1: 2, 3: 4}, {3: 4, 1: 2})  # and its order
    shared = [1]
    assert same([shared, shared], [[1], [1]]) and not identical([shared, shared], [[1], [1]])
    assert not same(1.0, 1.00000000001) and canonical(1.0) == canonical(1.00000000001)  # floats to 10 digits
