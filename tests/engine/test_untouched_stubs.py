"""Cheap zeros: the untouched stubs a submission's source shows (:mod:`autograder.engine.stubs`), and
sessions that share what earlier ones learnt (:class:`autograder.engine.session.FreshAnswers`): lookups are
answered without a worker, and a call to a sure stub fails "not implemented yet" without one,
word for word as a worker answers it."""

import inspect
from pathlib import Path

import pytest

from autograder.engine.session import FreshAnswers, Session
from autograder.engine.stubs import sure_stubs
from autograder.errors import SandboxFailure, StudentError
from autograder.isolation import Layout, WorkerLimits

CLASS = 'class C:\n    """Do it."""\n\n    def __init__(self, size):\n        raise NotImplementedError\n\n' \
        '    @property\n    def size(self):\n        raise NotImplementedError\n'
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
    (CLASS, ["C"]),
    (CLASS.replace("class C:", "class C(dict):"), []),  # a base's __new__ or __init__ may run instead
    (CLASS.replace("class C:", "class C(metaclass=type):"), []),
    (CLASS.replace("class C:", "import functools\n\n@functools.total_ordering\nclass C:"), []),
    (CLASS + "    def __new__(cls, size):\n        return object.__new__(cls)\n", []),
    (CLASS + "    size = 1\n", []),  # a body of defs only
    (CLASS + "    def __init__(self, size):\n        self.size = size\n", []),  # the last __init__ wins
    (CLASS + "\nC.__init__ = lambda self, size: None\n", []),
    (CLASS + "\nC.__init__.__code__ = (lambda self, size: None).__code__\n", []),
    (STUB + "def done(x, y=1, *, z):\n    return x\n\nf.__code__ = done.__code__\n", []),  # any __dunder__
    (STUB + "def done(x, y=1, *, z):\n    return x\n\ntype(f).__code__.__set__(f, done.__code__)\n", []),
    (STUB + "f.__globals__['f'] = print\n", []),
    (STUB + "import sys\n\ngetattr(getattr(sys, 'mod' + 'ules')[__name__], '__di' + 'ct__')['f'] = print\n", []),
    (STUB + "get_ipython().run_cell_magic('time', '', 'def f(x, y=1, *, z):\\n    return x\\n')\n", []),
    (STUB + "import sys\n\nsys._getframe().f_globals['f'] = print\n", []),
    (STUB + "import exercises.toy as me\n\nme.f = print\n", []),  # imports outside the standard library
    (STUB + "import math as me\n\nme.f = print\n", []),  # an attribute of the stub's name
    (STUB + "from . import helper\n", []),
    (STUB + "from .helper import g\n", []),
    (STUB + "import collections.abc\nfrom typing import NamedTuple\nfrom __future__ import annotations\n", ["f"]),
    (CLASS + "\nclass D:\n    pass\n\n\nC = D\n", []),
    (CLASS.replace("self, size", "*args"), []),  # no self to drop
    (CLASS.replace("raise NotImplementedError", "pass"), []),
])
def test_sure_stubs_are_the_functions_that_can_only_raise(source, stubs):
    assert sorted(sure_stubs(source)) == stubs


@pytest.mark.parametrize("package_init, stubs", [
    ("", ["f"]),
    ('"""The students package."""\n', ["f"]),
    ("from . import toy\ntoy.f = print\n", []),  # it runs before the module is used
    ("import os\n", []),
])
def test_a_package_that_runs_code_first_has_no_sure_stubs(package_init, stubs):
    assert sorted(sure_stubs(STUB, package_init)) == stubs


def test_a_stub_keeps_its_signature_for_binding():
    signature = sure_stubs(STUB)["f"]
    signature.bind(1, z=3)
    signature.bind(1, 2, z=3)
    for args, kwargs in [((), {"z": 3}), ((1,), {}), ((1, 2, 3), {"z": 3}), ((1,), {"z": 3, "w": 4})]:
        with pytest.raises(TypeError):
            signature.bind(*args, **kwargs)
    assert list(signature.parameters) == ["x", "y", "z"]
    assert signature.parameters["z"].kind is inspect.Parameter.KEYWORD_ONLY
    creating = sure_stubs(CLASS)["C"]  # creating one binds the arguments of __init__ after self
    creating.bind(3)
    with pytest.raises(TypeError):
        creating.bind()


MODULE = STUB + "\n\n" + CLASS + '''

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
    known = FreshAnswers("exercises.toy", sure_stubs((package / "toy.py").read_text()))
    sessions = []

    def session(folder: Path = tmp_path / "sub", shared: bool = True) -> Session:
        """A property's session; ``shared``: with what the exercise's sessions learnt."""
        sessions.append(Session(Layout(folder), WorkerLimits(call_seconds=5, cpu_seconds=30, memory_mb=512),
                                budget_seconds=30, known=known if shared else None))
        return sessions[-1]

    yield session, known
    for opened in sessions:
        opened.close()


def not_implemented(call, session: Session) -> str:
    """What ``call(the toy module)`` raised in ``session``, checked to be "not implemented"."""
    with pytest.raises(SandboxFailure) as failure:
        call(session.module("exercises.toy"))
    assert failure.value.kind == "not_implemented"
    return str(failure.value)


@pytest.mark.sandbox
def test_a_stub_call_fails_alike_with_and_without_a_worker(known_session):
    session, known = known_session
    assert sorted(known.stubs) == ["C", "f"]
    session().module("exercises.toy")  # a first property learns what importing it answers
    for call, shown in [(lambda toy: toy.f(1, z=[2, 3]), "toy.f"), (lambda toy: toy.C(7), "toy.C")]:
        plain, known_only = session(shared=False), session()  # a worker answers it all; no worker
        told_by_worker = not_implemented(call, plain)
        assert plain.worker is not None
        told_without = not_implemented(call, known_only)
        assert known_only.worker is None and told_without == told_by_worker
        assert told_without == f"{shown} is not implemented yet"  # every property that calls it: the same words
    assert len(known.answers) == 1  # the import: a sure stub is not even looked up


@pytest.mark.sandbox
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


@pytest.mark.sandbox
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


# --------------------------------------------------------------------------- read in the helper, never here

TOY = Path(__file__).resolve().parents[1] / "fixtures" / "toy_course"
MARK = "# a submission's own line, which the grader must never parse"


def test_staging_keeps_the_stubs_the_helper_read_as_plain_data():
    """What the helper read crosses as plain data and binds as the source's own signatures."""
    from autograder.config import load_course
    from autograder.engine.stubs import staged_stubs, stubs_from_json, stubs_to_json
    from autograder.intake.staging import stage

    assert stubs_from_json(stubs_to_json(sure_stubs(MODULE))) == sure_stubs(MODULE)
    course = load_course(TOY / "course.yaml")
    staged = stage(course, course.path(course.package))
    try:
        assert staged_stubs(staged.root, "ex_sum") == sure_stubs((TOY / "toy" / "ex_sum.py").read_text()) != {}
    finally:
        staged.remove()
    with pytest.raises(ValueError):
        stubs_from_json({"f": [["x", 9, False]]})


@pytest.mark.sandbox
def test_the_grader_parses_no_byte_of_a_submission(tmp_path, monkeypatch):
    """Grading a staged submission compiles none of its source in the grader's process (it did:
    ``ast.parse`` of a 20 MB ``__init__.py`` took 12.7 GB there), and the untouched stub still
    fails "not implemented yet" without a worker."""
    import builtins

    from autograder.config import load_course
    from autograder.engine.run import run_suites
    from autograder.intake.staging import stage

    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "__init__.py").write_text(f'"""The toy package."""\n{MARK}\n')
    (tmp_path / "toy" / "ex_sum.py").write_text(f"{MARK}\n" + (TOY / "toy" / "ex_sum.py").read_text())
    course = load_course(TOY / "course.yaml")
    staged = stage(course, tmp_path)
    parsed = []
    compile_here = builtins.compile

    def spying(source, *args, **kwargs):
        text = source.decode(errors="replace") if isinstance(source, bytes) else source
        if isinstance(text, str) and MARK in text:
            parsed.append(args[:1])
        return compile_here(source, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", spying)
    try:
        results, _ = run_suites(course, staged.root)
    finally:
        monkeypatch.undo()
        staged.remove()
    assert parsed == [], "the grader parsed the submission's source"
    assert results and all(not r.passed and r.reason.endswith("not implemented yet") for r in results)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_twenty_megabyte_module_costs_its_own_submission_only(tmp_path):
    """Beside a submission whose ``__init__.py`` is 19.8 MB of ``x=1`` lines, under the 20 MB cap,
    another grades byte for byte as it does alone, and the large one gets its row."""
    import csv

    from tests.conftest import autograder

    answer = (TOY / "answers" / "ex_sum.py").read_text()
    for name in ("large", "right"):
        (tmp_path / name / "toy").mkdir(parents=True)
        (tmp_path / name / "toy" / "ex_sum.py").write_text(answer)
    (tmp_path / "large" / "toy" / "__init__.py").write_text("x=1\n" * (99 * (1 << 20) // 20))  # 19.8 MB
    runs = {"together": [tmp_path / "large", tmp_path / "right"], "alone": [tmp_path / "right"]}
    for out, paths in runs.items():
        graded = autograder("grade", *map(str, paths), "--out", str(tmp_path / out), "--jobs", "2",
                            course=TOY / "course.yaml")
        assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    for report in ("results.json", "feedback.md"):
        assert (tmp_path / "together" / "right" / report).read_bytes() == \
            (tmp_path / "alone" / "right" / report).read_bytes()
    rows = {row["submission"]: row for row in csv.DictReader((tmp_path / "together" / "grades.csv").open())}
    assert rows["right"]["score"] == "10" and rows["large"]["score"] == "0"
