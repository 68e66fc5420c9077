"""A call that changes its arguments fails, when the course says so (``calls.arguments_unchanged``):
the worker compares each call's plain-data arguments before and after it (values, nested
containers, the order of dict keys; not the order a set happens to iterate in) and the session
raises :class:`~autograder.errors.ArgumentChanged` naming the argument and the rule, which a
property's feedback shows, and a hidden property's reason names without the call."""

from pathlib import Path

import pytest

from autograder.engine.feedback import hidden_reason, property_feedback
from autograder.engine.session import Session
from autograder.errors import ArgumentChanged, StudentError
from autograder.isolation import Layout, WorkerLimits

MODULE = '''
def reorder(counts, logprobs):
    for piece in list(logprobs):
        if len(piece) > 1:
            value = logprobs.pop(piece)  # put back: same values, another order
            logprobs[piece] = value
    return {}

def pad(batch, length=3):
    for row in batch:
        row.extend([0] * (length - len(row)))
    return batch

def touch_set(members):
    members.discard("a")
    members.add("a")
    return len(members)

def nested(table):
    table["x"][0] = 1.0
    return 0

def swallow(items):
    items.append(items)
    return 0

def raise_after(items):
    items.clear()
    raise ValueError("items is bad")

def pure(items, table=None):
    return sorted(items)

def add_self(obj, value):
    return value
'''


@pytest.fixture
def submission(tmp_path: Path) -> Path:
    package = tmp_path / "exercises"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "toy.py").write_text(MODULE)
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return tmp_path


def _session(submission: Path, unchanged: bool) -> Session:
    session = Session(Layout(submission), WorkerLimits(call_seconds=5, cpu_seconds=30, memory_mb=512),
                      budget_seconds=60)
    session.arguments_unchanged = unchanged
    return session


def _changed(call) -> ArgumentChanged:
    with pytest.raises(ArgumentChanged) as caught:
        call()
    return caught.value


@pytest.mark.sandbox
def test_a_changed_argument_fails_the_call_naming_it_and_the_rule(submission):
    session = _session(submission, unchanged=True)
    try:
        toy = session.module("exercises.toy")
        order = _changed(lambda: toy.reorder({"ab": 1}, {"ab": -1.0, "a": -1.0, "b": -2.0}))
        assert order.changed == [("logprobs", "order")]
        assert str(order) == ("toy.reorder({'ab': 1}, {'ab': -1.0, 'a': -1.0, 'b': -2.0}) changed its argument "
                              "logprobs (the same keys, in another order): a function must leave the arguments it "
                              "is given as they were")
        assert _changed(lambda: toy.pad([[1], [2, 3]])).changed == [("batch", "value")]
        assert _changed(lambda: toy.nested({"x": [1], "y": 2})).changed == [("table", "value")]  # 1 -> 1.0
        assert _changed(lambda: toy.swallow([1])).changed == [("items", "value")]  # no longer plain data
        assert _changed(lambda: toy.raise_after([1])).changed == [("items", "value")]  # raising does not excuse it
        assert _changed(lambda: toy.pad(batch=[[5]])).changed == [("batch", "value")]  # by keyword
        assert toy.touch_set({"a", "b", "c"}) == 3  # a set is no order of its own: the same set
        assert toy.pure([3, 1, 2], {"b": [1, {2}], "a": float("nan")}) == [1, 2, 3]
        assert toy.add_self(toy, 4) == 4  # a student object is passed by handle, not compared
    finally:
        session.close()


@pytest.mark.sandbox
def test_a_course_that_allows_changes_sees_only_the_answers(submission):
    session = _session(submission, unchanged=False)
    try:
        toy = session.module("exercises.toy")
        assert toy.pad([[1], [2, 3]]) == [[1, 0, 0], [2, 3, 0]]
        with pytest.raises(StudentError):
            toy.raise_after([1])
    finally:
        session.close()


def test_feedback_names_the_argument_and_a_hidden_property_only_that_an_argument_changed():
    error = ArgumentChanged("f([1], {'a': 1})", [("table", "order")])
    public = property_feedback("f leaves its arguments alone.", error, hidden=False, limit=4000)
    assert "f([1], {'a': 1}) changed its argument table (the same keys, in another order)" in public
    assert hidden_reason(error) == "changed an argument it was given"
    assert "table" not in property_feedback("f leaves its arguments alone.", error, hidden=True, limit=4000)
