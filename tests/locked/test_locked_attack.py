"""The attacker's structured search that a release must survive: it fails on every case the
course ships, and the spaces it counts instead of searching hold as many candidates as it says."""

import importlib
import math
import time

import pytest

from autograder.config import load_course
from autograder.engine.run import on_path
from autograder.locked.attack import BUDGET, _curves, _Inputs, _space, _splits, attack, attack_spaces
from autograder.locked.cases import load_cases
from autograder.locked.hashing import canonical, digest
from autograder.locked.run import run_case
from autograder.locked.seal import reference_support, seal
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def shipped() -> list[tuple]:
    """Every locked case with its sealed salt and hash (what the release ships) and the reference's output."""
    course = load_course(ROOT / "course.yaml")
    sealed = {(exercise, entry["name"]): entry for exercise, entries in seal(course).items() for entry in entries}
    support = reference_support(course)
    with on_path(course.root):
        return [(case, sealed[case.exercise, case.name],
                 run_case(case, importlib.import_module(f"{course.solutions}.{case.exercise}"), support))
                for case in load_cases(course)]


def test_the_structured_search_recovers_no_shipped_case(shipped):
    for case, entry, output in shipped:
        started = time.perf_counter()
        spaces = attack_spaces(case, output)
        found = attack(spaces, entry["salt"], entry["sha256"])
        seconds = time.perf_counter() - started
        guesses = math.prod(space.size for space in spaces)
        print(f"{case.exercise}: {case.name!r}: at least {guesses:.2e} structured guesses, {seconds:.3f} s")
        assert found is None, f"{case.exercise}: {case.name!r} recovered"
        assert guesses > BUDGET, f"{case.exercise}: {case.name!r}: only {guesses:,} guesses, whose search missed it"


def test_the_search_finds_a_case_inside_its_space():
    """A curve on a four-byte text: the search tries the space in full and returns the output."""
    output = [[1.0, 0.5, 0.25, 0.25]]
    spaces = [_space(output[0], _Inputs(("abab",), (1, 3, 4)))]
    assert spaces[0].size < 1000
    assert attack(spaces, "ab" * 16, digest("ab" * 16, output)) == output


@pytest.mark.parametrize("direction", [-1, 1])
@pytest.mark.parametrize("steps", [-1, 0, 1])
@pytest.mark.parametrize("end", [None, 0.0, 1.0])
def test_a_counted_curve_space_holds_as_many_curves_as_it_says(direction, steps, end):
    space = _curves(_Inputs((), (2, 3, 4, 5, 6)), 5, direction, steps, end)
    curves = [canonical(curve) for curve in space.values()]
    assert len(curves) == space.size and len(set(curves)) == space.size


def test_a_counted_split_space_holds_as_many_splits_as_it_says():
    space = _splits("abcdefg", 3)
    splits = list(space.values())
    assert len(splits) == space.size == math.comb(6, 2)
    assert all("".join(parts) == "abcdefg" and all(parts) for parts in splits)
