"""``student.f(x)`` in one request (:class:`autograder.engine.session.DeferredLookup`): once a name has found a
student object in a property, calling it again asks the worker once, for the lookup and the
call together, and everything answers as the two requests one after the other would have."""

from pathlib import Path

import pytest

from autograder.engine import session as proxy
from autograder.engine.session import DeferredLookup, Remote, Session
from autograder.errors import SandboxFailure, StudentError
from autograder.isolation import Layout, WorkerLimits

pytestmark = pytest.mark.sandbox

MODULE = '''
def add(a, b):
    return a + b

def apply(function, value):
    return function(value)

def rebind_add(value):
    global add
    add = value

def forget_add():
    global add
    del add

class Tok:
    merges = calls = 0
    size = property(lambda self: 256 + self.merges)

    def train(self, k):
        self.merges += k
        return self
    def pending(self):
        raise NotImplementedError("Tok.pending")
    def __getattr__(self, name):
        if name == "flaky":
            self.calls += 1
            if self.calls > 1:
                raise KeyError("flaky went away")
            return self.train
        raise AttributeError(name)
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


def session_on(submission: Path) -> Session:
    return Session(Layout(submission), WorkerLimits(call_seconds=5, cpu_seconds=30, memory_mb=512), budget_seconds=60)


def outcome(step) -> str:
    """What a step gave, as a suite would see it: a value, or the failure it raised."""
    try:
        value = step()
    except (StudentError, SandboxFailure, AttributeError, TypeError) as error:
        return f"{type(error).__name__}: {error}"
    return repr(value) if not isinstance(value, (Remote, DeferredLookup)) else f"object {value!r}"


def play(session: Session) -> list[str]:
    toy = session.module("exercises.toy")
    tok = toy.Tok()
    return [outcome(step) for step in [
        lambda: toy.add(1, 2),
        lambda: toy.add(3, 4),  # a member call from here on
        lambda: tok.train(2).size,
        lambda: tok.train(3).size,
        lambda: toy.apply(tok.train, 1).size,  # a member sent to the worker is sent as what it finds
        lambda: tok.train.size,  # an attribute of a member is one of what it finds
        lambda: tok.pending(),
        lambda: tok.pending(),
        lambda: tok.flaky(1).size,
        lambda: tok.flaky(1),  # the lookup raises: as it would have, at the call
        lambda: toy.rebind_add(5),
        lambda: toy.add(1, 2),  # plain data found: not callable, here as in the grader
        lambda: toy.rebind_add(toy.Tok()),
        lambda: toy.add(1, 2),  # a student object that is not callable
        lambda: toy.forget_add(),
        lambda: toy.add(1, 2),  # gone
        lambda: toy.add,
    ]]


def test_member_calls_answer_as_a_lookup_then_a_call_do(submission, monkeypatch):
    requests = []
    exchange = Session._exchange

    def counted(self, payload, call):
        requests.append(payload)
        return exchange(self, payload, call)

    monkeypatch.setattr(Session, "_exchange", counted)
    session = session_on(submission)
    together = play(session)
    asked_together = len(requests)
    session.close()
    requests.clear()
    monkeypatch.setattr(proxy.Session, "_calls_by_name", lambda self, target, name: False)
    session = session_on(submission)
    apart = play(session)
    session.close()
    assert together == apart
    assert asked_together < len(requests)
    assert together[:4] == ["3", "7", "258", "261"]
    assert together[6] == together[7] == "SandboxFailure: Tok.pending is not implemented yet"
    assert together[9].startswith("StudentError: Tok.flaky raised KeyError")
    assert together[11] == "TypeError: 'int' object is not callable"
    assert together[13].startswith("StudentError: toy.add(1, 2) raised TypeError: 'Tok' object is not callable")
    assert together[15].startswith("MissingName: toy.add does not exist")


def test_only_names_that_found_a_student_object_become_members(submission, monkeypatch):
    session = session_on(submission)
    toy = session.module("exercises.toy")
    tok = toy.Tok()
    assert isinstance(toy.add, Remote)  # looked up: it found a student object, so from now on
    assert isinstance(toy.add, DeferredLookup) and toy.add(1, 1) == 2
    requests = []
    request = session.worker.request_many  # every frame to the worker goes through it
    monkeypatch.setattr(session.worker, "request_many", lambda *a: requests.append(a) or request(*a))
    assert [toy.add(n, 1) for n in range(10)] == list(range(1, 11)) and len(requests) == 10
    assert tok.size == 256 and tok.size == 256 and not isinstance(tok.size, DeferredLookup)  # plain data: looked up
    session.close()
