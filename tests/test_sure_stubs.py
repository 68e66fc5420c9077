"""Cheap zeros: the untouched stubs a submission's source shows (:mod:`autograder.stubs`), and
sessions that share what earlier ones learnt (:class:`autograder.proxy.Known`): lookups are
answered without a worker, and a call to a sure stub fails "not implemented yet" without one,
word for word as a worker answers it."""

import inspect
from pathlib import Path

import pytest

from autograder.errors import SandboxFailure, StudentError
from autograder.proxy import Known, Session
from autograder.sandbox import Layout, Limits
from autograder.stubs import sure_stubs

STUB = 'def f(x, y=1, *, z):\n    """Do it."""\n    raise NotImplementedError("f is not implemented yet")\n'


@pytest.mark.parametrize("source, stubs", [
    (STUB, ["f"]),
    ("def f():\n    raise NotImplementedError\n", ["f"]),
    ("def f():\n    raise NotImplementedError('a' + 'b')\n", []),  # not a constant message
    ("import functools\n\n@functools.cache\ndef f():\n    raise NotImplementedError\n", []),
    (STUB + "f = print\n", []),
    (STUB + "def g():\n    global f\n    f = 1\n", []),
    (STUB + "globals()['f'] = print\n", []),
    (STUB + "import sys\nsetattr(sys.modules[__name__], 'f', print)\n", []),
    (STUB + "class NotImplementedError(Exception):\n    pass\n", []),
    (STUB + "from os import *\n", []),
    ("class C:\n    def f(self):\n        raise NotImplementedError\n", []),
    ("def f():\n    raise NotImplementedError\n    return 1\n", []),
    ("def f(:\n", []),
])
def test_sure_stubs_are_the_functions_that_can_only_raise(source, stubs):
    assert sorted(sure_stubs(source)) == stubs


def test_a_stub_keeps_its_signature_for_binding():
    signature = sure_stubs(STUB)["f"]
    signature.bind(1, z=3)
    signature.bind(1, 2, z=3)
    for args, kwargs in [((), {"z": 3}), ((1,), {}), ((1, 2, 3), {"z": 3}), ((1,), {"z": 3, "w": 4})]:
        with pytest.raises(TypeError):
            signature.bind(*args, **kwargs)
    assert list(signature.parameters) == ["x", "y", "z"]
    assert signature.parameters["z"].kind is inspect.Parameter.KEYWORD_ONLY


MODULE = STUB + '''

def g(x):
    return x + 1


def h():
    raise NotImplementedError("h")
'''


@pytest.fixture
def known_session(tmp_path):
    package = tmp_path / "sub" / "exercises"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "toy.py").write_text(MODULE.replace('raise NotImplementedError("h")', "return 'h is done'"))
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    known = Known("exercises.toy", sure_stubs((package / "toy.py").read_text()))
    sessions = []

    def session(folder: Path = tmp_path / "sub") -> Session:
        sessions.append(Session(Layout(folder), Limits(call_seconds=5, cpu_seconds=30, memory_mb=512),
                                budget_seconds=30, known=known))
        return sessions[-1]

    yield session, known
    for opened in sessions:
        opened.close()


def not_implemented(call) -> str:
    with pytest.raises(SandboxFailure) as failure:
        call()
    assert failure.value.kind == "not_implemented"
    return str(failure.value)


def test_a_stub_call_fails_alike_with_and_without_a_worker(known_session):
    session, known = known_session
    assert sorted(known.stubs) == ["f"]
    first = session()
    told_by_worker = not_implemented(lambda: first.module("exercises.toy").f(1, z=[2, 3]))
    assert first.worker is not None and len(known.answers) == 2  # the import and the lookup of f
    second = session()
    told_without = not_implemented(lambda: second.module("exercises.toy").f(1, z=[2, 3]))
    assert second.worker is None and told_without == told_by_worker
    assert "toy.f(1, z=[2, 3]): not implemented yet" in told_without


def test_other_calls_start_the_worker_and_replay_the_lookups(known_session):
    session, _known = known_session
    first = session()
    toy = first.module("exercises.toy")
    f, g = toy.f, toy.g  # lookups only, so far: what they answered is remembered
    assert g(1) == 2 and toy.h() == "h is done"
    second = session()
    toy = second.module("exercises.toy")
    f, g = toy.f, toy.g  # both answered without a worker
    assert second.worker is None
    assert g(41) == 42 and second.worker is not None  # the worker started, the lookups replayed
    with pytest.raises(StudentError, match="missing 1 required positional argument"):
        f()  # arguments that do not bind go to the worker, which says what is wrong


def test_a_lookup_answered_differently_by_a_new_worker_fails_the_property(known_session, tmp_path):
    """What a module holds when imported must not change from one fresh worker to the next."""
    session, _known = known_session
    changed = tmp_path / "changed" / "exercises"
    changed.mkdir(parents=True)
    (changed / "__init__.py").write_text("")
    (changed / "toy.py").write_text("import os\n\nSEED = os.urandom(8).hex()\n\n\n" + MODULE)
    for path in [tmp_path / "changed", *(tmp_path / "changed").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    first = session(tmp_path / "changed")
    toy = first.module("exercises.toy")
    assert len(toy.SEED) == 16 and toy.g(1) == 2
    second = session(tmp_path / "changed")
    toy = second.module("exercises.toy")
    assert toy.SEED == first.module("exercises.toy").SEED  # as the first worker said: no worker here
    with pytest.raises(SandboxFailure) as failure:
        toy.g(1)
    assert failure.value.kind == "protocol" and "answered the same lookup differently" in str(failure.value)
