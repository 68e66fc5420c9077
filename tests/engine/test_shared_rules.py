"""The shared bad-input rules, derived from a stub's signatures (:mod:`autograder.signatures`,
:mod:`autograder.input_rules`, ``autograder.suite.expect_bad_input_rules``): every parameter of every
graded function is checked, a function added to a stub is covered without a suite change, and each
failure names the call and the rule."""

import ast

import pytest

from autograder import input_rules
from autograder.errors import StudentError
from autograder.signatures import annotation_type, read_graded
from autograder.suite import expect_bad_input_rules

STUB = '''
from collections.abc import Callable
from typing import NamedTuple


class Step(NamedTuple):
    """Given, not graded: a class without methods has nothing to call."""
    rank: int


def count(ids: list[int], pair: tuple[int, int], flag: bool = False) -> int:
    raise NotImplementedError


def scale(values: dict[str, float], *, factor: float = 1.0, keep: set[str] | None = None) -> dict:
    raise NotImplementedError


def replay(steps: list[Step], token_id: int, anything=None) -> int:
    raise NotImplementedError


class Tok:
    def __init__(self) -> None:
        raise NotImplementedError

    def encode(self, text: str, allowed: str | set[str] | list[str] = "all") -> list[int]:
        raise NotImplementedError

    @property
    def size(self) -> int:
        raise NotImplementedError

    def _helper(self, x: int) -> int:
        raise NotImplementedError
'''


@pytest.mark.parametrize("annotation, shown", [
    ("list[int]", "list[int]"), ("dict[str, list[str]]", "dict[str, list[str]]"), ("int | None", "int | none"),
    ("tuple[str, ...]", "tuple[str, ...]"), ("Callable[[str], list[int]]", "Callable"), ("'Tok'", "Tok"),
    ("Optional[int]", "int | none"), ("list[Step]", "list[Step]"), ("Whatever", "any"),
])
def test_an_annotation_is_read_as_the_type_it_names(annotation, shown):
    assert str(annotation_type(ast.parse(annotation, mode="eval").body, {"Step", "Tok"})) == shown


def test_every_public_function_and_method_of_a_stub_is_graded():
    graded = {g.label: [(p.name, str(p.type), p.required, p.keyword_only) for p in g.parameters]
              for g in read_graded(STUB)}
    assert graded == {
        "count": [("ids", "list[int]", True, False), ("pair", "tuple[int, int]", True, False),
                  ("flag", "bool", False, False)],
        "scale": [("values", "dict[str, float]", True, False), ("factor", "float", False, True),
                  ("keep", "set[str] | none", False, True)],
        "replay": [("steps", "list[Step]", True, False), ("token_id", "int", True, False),
                   ("anything", "any", False, False)],
        "Tok.encode": [("text", "str", True, False), ("allowed", "str | set[str] | list[str]", False, False)],
    }


def test_a_function_added_to_a_stub_is_covered_without_a_suite_change():
    grown = STUB + "\n\ndef added(n: int, names: list[str]) -> None:\n    raise NotImplementedError\n"
    added = next(g for g in read_graded(grown) if g.name == "added")
    maker = input_rules.Values({}, None)
    shown = [input_rules.shown_call(added, *input_rules.call_arguments(added.parameters, i, bad, maker))
             for i, parameter in enumerate(added.parameters) for bad, _rule in input_rules.probes(parameter.type,
                                                                                               maker.valid(parameter))]
    assert shown == ["added(True, ['ab', 'ab'])", "added(2, ('ab', 'ab'))", "added(2, ['ab', 'ab', 2])"]


class Local:
    """A module of plain functions seen as a suite sees the student's: exceptions as StudentError."""

    def __init__(self, **functions):
        self.functions = functions

    def __getattr__(self, name):
        def call(*args, **kwargs):
            try:
                return self.functions[name](*args, **kwargs)
            except (TypeError, ValueError) as error:
                mro = [c.__name__ for c in type(error).__mro__]
                raise StudentError(name, {"type": type(error).__name__, "mro": mro, "message": str(error)}) from None
        return call


def strict_count(ids, pair, flag=False):
    if type(ids) is not list or any(type(i) is not int for i in ids):
        raise TypeError("ids must be a list of ints")
    if type(pair) is not tuple or len(pair) != 2 or any(type(i) is not int for i in pair):
        raise TypeError("pair must be a tuple of two ints")
    if type(flag) is not bool:
        raise TypeError("flag must be a bool")
    return len(ids)


COUNT = [g for g in read_graded(STUB) if g.name == "count"]


def test_a_function_that_follows_the_rules_passes():
    expect_bad_input_rules(Local(count=strict_count), COUNT)


@pytest.mark.parametrize("loose, says", [
    (lambda ids, pair, flag=False: strict_count(ids, pair, bool(flag)),
     "count([2, 2], (2, 2), 0) (0 where a bool is expected: 0 and 1 are not one): expected TypeError, but it "
     "returned 2"),
    (lambda ids, pair, flag=False: strict_count(list(ids), pair, flag),
     "count((2, 2), (2, 2)) (a tuple where a list is expected): expected TypeError, but it returned 2"),
    (lambda ids, pair, flag=False: strict_count(ids, pair[:2] if type(pair) is tuple else pair, flag),
     "count([2, 2], (2, 2, 2)) (a tuple of 3 items where a tuple[int, int] is expected): expected TypeError, but "
     "it returned 2"),
    (lambda ids, pair, flag=False: strict_count([int(i) for i in ids] if type(ids) is list else ids, pair, flag),
     "count([2, 2, True], (2, 2)) (one item of the wrong type, True, in a list[int]): expected TypeError, but it "
     "returned 3"),
])
def test_a_rule_broken_fails_naming_the_call_and_the_rule(loose, says):
    with pytest.raises(AssertionError) as failed:
        expect_bad_input_rules(Local(count=loose), COUNT)
    assert str(failed.value) == says


def test_a_frozenset_must_be_answered_as_the_set_of_its_items():
    scale = [g for g in read_graded(STUB) if g.name == "scale"]

    def refusing(values, *, factor=1.0, keep=None):
        if type(values) is not dict or any(type(k) is not str or type(v) not in (int, float) for k, v in
                                           values.items()):
            raise TypeError("values must be a dict of str to float")
        if type(factor) not in (int, float):
            raise TypeError("factor must be a number")
        if keep is not None and (type(keep) is not set or any(type(k) is not str for k in keep)):
            raise TypeError("keep must be a set of str")
        return {k: v * factor for k, v in values.items() if keep is None or k in keep}

    with pytest.raises(AssertionError, match=r"scale\(\{'ab': 0.5\}, keep=frozenset\(\{'ab'\}\)\) should be answered "
                                             r"as scale\(\{'ab': 0.5\}, keep=\{'ab'\}\) is \(a frozenset is a set\)"):
        expect_bad_input_rules(Local(scale=refusing), scale)
