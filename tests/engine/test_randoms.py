"""A task's random states (``autograder/engine/randoms.py``): read again and put back only where a
generator changed, and exactly what ``getstate`` and ``setstate`` would have done; a
``random.Random``'s kept as its words."""

from __future__ import annotations

import random

import pytest
from hypothesis import register_random

from autograder import internals
from autograder.engine import randoms


class Plain:
    """A generator that is not a ``random.Random``: hypothesis manages anything with these three."""

    def __init__(self) -> None:
        self.value = 0

    def seed(self, value: int) -> None:
        self.value = value

    def getstate(self) -> int:
        return self.value

    def setstate(self, value: int) -> None:
        self.value = value


class Counting(random.Random):
    """A ``random.Random`` whose ``getstate`` says more than its words: how often it was asked."""

    asked = 0

    def getstate(self):
        return (*super().getstate(), self.asked)

    def setstate(self, state):
        super().setstate(state[:-1])
        self.asked = state[-1]


@pytest.fixture
def register():
    """Registers generators with hypothesis for one test (held here: hypothesis keeps weak references)."""
    held = []

    def add(*generators):
        for generator in generators:
            held.append(generator)
            register_random(generator)

    yield add
    kept = internals.entropy.RANDOMS_TO_MANAGE
    for key, generator in list(kept.items()):
        if any(generator is other for other in held):
            del kept[key]


def test_the_module_s_generator_is_kept_as_its_bytes_on_this_python():
    assert randoms._words(random) is not None
    assert randoms._words(Plain()) is None and randoms._words(Counting()) is None


def test_a_generator_left_alone_keeps_the_state_read_before_and_one_used_is_read_again(register):
    own = random.Random(5)
    register(own)
    before = {id(state.generator): state for state in randoms.read()}
    again = {id(state.generator): state for state in randoms.read(list(before.values()))}
    assert again[id(own)] is before[id(own)] and again[id(random)] is before[id(random)]
    drawn = own.random()
    used = own.getstate()
    after = {id(state.generator): state for state in randoms.read(list(before.values()))}
    assert after[id(own)] is not before[id(own)] and after[id(random)] is before[id(random)]
    randoms.put_back(list(before.values()))
    assert own.random() == drawn
    randoms.put_back(list(after.values()))
    assert own.getstate() == used



def test_the_states_read_last_are_trusted_as_the_generators_own(register):
    """Between two turns nothing draws: the states a turn left (``live``) are what each generator
    holds, and only those that differ from the wanted ones are written."""
    own, plain = random.Random(5), Plain()
    register(own, plain)
    fresh = random.Random(5).random()
    before = randoms.read()
    own.random()
    plain.value = 3
    after = randoms.read(before)
    randoms.put_back(before, live=after)
    assert own.random() == fresh and plain.value == 0
    randoms.put_back(after, live=after)  # the same states: nothing written, nothing read
    assert own.random() != fresh and plain.value == 0

def test_a_gauss_value_kept_for_the_next_call_is_part_of_the_state(register):
    own = random.Random(5)
    register(own)
    before = randoms.read()
    own.gauss_next = 0.25  # what gauss() keeps between calls, outside the generator's words
    after = next(state for state in randoms.read(before) if state.generator is own)
    assert after is not next(state for state in before if state.generator is own)
    randoms.put_back(before)
    assert own.gauss_next is None
    randoms.put_back([after])
    assert own.getstate()[2] == 0.25


def test_each_generator_is_put_back_as_it_was_whatever_its_kind(register):
    kinds = [random.Random(3), Counting(4), Plain()]
    register(*kinds)
    saved = randoms.read()
    expected = [generator.getstate() for generator in kinds] + [random.getstate()]
    random.random()
    kinds[0].random()
    kinds[1].random()
    kinds[1].asked = 9
    kinds[2].value = 7
    randoms.put_back(saved)
    assert [generator.getstate() for generator in kinds] + [random.getstate()] == expected


def test_numpy_s_generator_once_managed_is_read_and_put_back_in_full():
    numpy = pytest.importorskip("numpy")
    with internals.seeded_randoms():
        internals.reseed_randoms()  # hypothesis manages numpy's generator from here on
        saved = randoms.read()
        assert any(state.words is None for state in saved)  # numpy's
        expected = numpy.random.get_state()[1].copy()
        numpy.random.random()
        randoms.put_back(saved)
        assert (numpy.random.get_state()[1] == expected).all()
        assert len(randoms.read(saved)) == len(saved)
