"""Every private internal the engine uses does what the engine relies on, in the versions installed.

Hypothesis's are in ``autograder/internals.py``, CPython's in ``autograder/isolation/inside/cpython.py``
(the worker imports it too). When an upgrade changes one, a test here fails saying which, and
naming the hypothesis or the Python the engine was written against: fix the one module, not the
engine.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import py_compile
import random
import re
import socket
import subprocess
import sys
import zipfile

import hypothesis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import internals
from autograder.errors import GraderError
from autograder.isolation.inside import cpython
from tests.conftest import ROOT

INSIDE = ROOT / "autograder" / "isolation" / "inside"
PYTHON = "3.11"  # the Python the CPython internals were checked with (pyproject's requires-python floor)


def said(what: str) -> str:
    return (f"{what} changed in hypothesis {hypothesis.__version__} (the engine was written against "
            f"{internals.HYPOTHESIS}): update autograder/internals.py")


def in_python(what: str) -> str:
    return (f"{what} changed in Python {sys.version.split()[0]} (checked with {PYTHON}): update "
            "autograder/isolation/inside/cpython.py")


# --- hypothesis's -------------------------------------------------------------------------------

def test_the_locks_pin_the_hypothesis_the_internals_were_written_against():
    for lock in ("requirements.lock", "requirements-nbgrader.lock"):
        pinned = re.search(r"^hypothesis==(\S+)", (ROOT / lock).read_text(), re.M)
        assert pinned and pinned[1] == internals.HYPOTHESIS, (
            f"{lock} pins hypothesis {pinned and pinned[1]}, autograder/internals.py was written against "
            f"{internals.HYPOTHESIS}: check every internal there (this file's tests), then update HYPOTHESIS")
    assert hypothesis.__version__ == internals.HYPOTHESIS, said("the version installed")


def test_a_changed_internal_is_a_grader_error_naming_both_versions():
    error = internals.changed("something")
    assert isinstance(error, GraderError)
    assert f"hypothesis {hypothesis.__version__}" in str(error) and internals.HYPOTHESIS in str(error)


PROBE = """
import json, sys
from hypothesis import given, seed, settings, strategies as st

seen = []

@seed(20261130)
@settings(max_examples=300, database=None)
@given(st.text(max_size=4))
def probe(text):
    seen.append(text)

def draw():
    seen.clear()
    probe()
    return list(seen)

from autograder import internals
if sys.argv[1] == "seed-alone":
    internals.draw_from_the_seed_alone()
before = draw()
sys.path.insert(0, sys.argv[2])
import lure  # a local module with a hundred short string literals
after = draw()
print(json.dumps({"same": before == after, "lured": sorted({t for t in after if t.startswith("Qz")})}))
"""


def _probe(mode: str, folder) -> dict:
    (folder / "lure.py").write_text(f"LURES = {tuple(f'Qz{i}' for i in range(100))!r}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PROBE, mode, str(folder)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("mode", ["hypothesis-default", "seed-alone"])
def test_examples_ignore_literals_of_imported_modules(tmp_path, mode):
    """``draw_from_the_seed_alone``: examples depend on the seed alone, not on which modules the
    grader process happens to have imported."""
    outcome = _probe(mode, tmp_path)
    if mode == "hypothesis-default":
        # the probe is sensitive: unpatched hypothesis does pick up the new module's literals
        assert outcome["lured"] and not outcome["same"], said("drawing the literals of local modules")
    else:
        assert outcome == {"same": True, "lured": []}, said("drawing the literals of local modules")


def test_randoms_are_seeded_with_zero_and_given_back_as_hypothesis_does():
    random.seed(7)
    expected_after = random.Random(7).random()
    with internals.seeded_randoms():
        random.random()
        internals.reseed_randoms()
        assert random.random() == random.Random(0).random(), said("seeding the random generators it manages")
    assert random.random() == expected_after, said("restoring the random generators it manages")


def test_a_hypothesis_test_calls_the_inner_function_put_in_its_place_then_its_own():
    seen: list[int] = []

    @settings(max_examples=3, database=None)
    @given(st.integers(0, 5))
    def test(number):
        seen.append(number)

    own = internals.inner_test(test)
    with internals.calling(test, lambda number: seen.append(-1)):
        test()
    assert seen and set(seen) == {-1}, said("test.hypothesis.inner_test")
    assert internals.inner_test(test) is own
    test()
    assert -1 not in seen[-1:], said("test.hypothesis.inner_test")


def test_a_hypothesis_test_s_settings_are_its_own():
    @settings(max_examples=7, database=None)
    @given(st.integers())
    def test(number):
        pass

    found = internals.settings_of(test)
    assert found.max_examples == 7, said("test._hypothesis_internal_use_settings")
    with pytest.raises(GraderError, match="has changed where a test keeps its settings"):
        internals.settings_of(lambda: None)


def test_hypothesis_s_pytest_plugin_is_the_module_named():
    plugin = importlib.import_module(internals.PYTEST_PLUGIN)
    assert hasattr(plugin, "pytest_configure"), said(f"its pytest plugin's module ({internals.PYTEST_PLUGIN})")


# --- CPython's ----------------------------------------------------------------------------------

def test_the_pyc_pieces_are_importlib_s():
    source = b"x = 1\n"
    assert cpython.MAGIC_NUMBER == importlib.util.MAGIC_NUMBER, in_python("_frozen_importlib_external.MAGIC_NUMBER")
    assert cpython.source_hash(source) == importlib.util.source_hash(source), in_python("_imp.source_hash")


def test_the_pyc_files_made_in_memory_are_those_py_compile_writes(tmp_path):
    """The worker cannot import ``py_compile`` cheaply, and the grader makes its workers' in memory:
    their checked-hash pyc is the same bytes."""
    source = tmp_path / "module.py"
    source.write_text("def f(x):\n    return x + 1\n")
    expected = tmp_path / "module.pyc"
    py_compile.compile(str(source), str(expected), dfile=str(source), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import cpython\n"
             "data = open(sys.argv[2], 'rb').read()\n"
             "sys.stdout.buffer.write(cpython.checked_pyc(compile(data, sys.argv[2], 'exec', dont_inherit=True),"
             " data))")
    done = subprocess.run([sys.executable, "-c", probe, str(INSIDE), str(source)], capture_output=True, check=True)
    assert done.stdout == expected.read_bytes(), in_python("the checked-hash pyc format")


def test_the_signal_module_without_its_enums_is_signal_s():
    import signal

    assert (cpython.signal.SIGKILL, cpython.signal.SIGXFSZ, cpython.signal.SIG_IGN) == (
        signal.SIGKILL, signal.SIGXFSZ, signal.SIG_IGN), in_python("_signal")


def test_a_socket_made_from_a_descriptor_talks():
    ours, theirs = socket.socketpair()
    made, cmsg_space = cpython.unix_socket(theirs.detach())
    try:
        ours.sendall(b"x")
        assert made.recv(1) == b"x" and cmsg_space(8) == socket.CMSG_SPACE(8), in_python("_socket")
    finally:
        ours.close()
        made.close()


def test_the_caller_s_globals_are_found():
    def callee():
        return cpython.caller_globals()

    assert callee() is globals(), in_python("sys._getframe")


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                    max_leaves=10))
def test_json_is_written_and_read_as_the_json_module_does(value):
    text = cpython.write_json(value)
    assert text == json.dumps(value, separators=(",", ":")), in_python("_json.make_encoder")
    read, end = cpython.scan_json(text, 0)
    assert end == len(text) and json.dumps(read) == json.dumps(json.loads(text)), in_python("_json.make_scanner")


def test_a_zip_s_table_of_contents_is_measured_before_it_is_read(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as opened:
        for index in range(3):
            opened.writestr(f"file{index}.py", "x = 1\n")
    with zipfile.ZipFile(archive) as opened:
        listed = sum(46 + len(info.filename.encode()) + len(info.extra) + len(info.comment)
                     for info in opened.infolist())
    with archive.open("rb") as file:
        assert cpython.zip_directory_size(file) == listed, in_python("zipfile._EndRecData")
    (tmp_path / "not.zip").write_bytes(b"not a zip")
    with (tmp_path / "not.zip").open("rb") as file:
        assert cpython.zip_directory_size(file) is None, in_python("zipfile._EndRecData")


@given(st.integers(0, 2 ** 32), st.integers(0, 2000))
def test_a_random_generator_s_words_change_exactly_when_its_state_does(seed, draws):
    generator = random.Random(seed)
    before = cpython.random_words(generator)
    state = generator.getstate()
    assert before is not None, in_python("random.Random's layout")
    generator.getrandbits(32 * draws) if draws else None
    after = cpython.random_words(generator)
    assert (after == before) == (generator.getstate() == state), in_python("random.Random's layout")
    generator.setstate(state)
    assert cpython.random_words(generator) == before, in_python("random.Random's layout")


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 64), st.integers(0, 700))
def test_words_put_back_are_the_state_setstate_puts_back(seed, draws):
    generator, twin = random.Random(seed), random.Random(seed)
    words, state = cpython.random_words(generator), generator.getstate()
    generator.getrandbits(32 * draws) if draws else None
    twin.getrandbits(32 * (draws + 1))
    cpython.put_random_words(generator, words)
    twin.setstate(state)
    assert generator.getstate() == twin.getstate() == state, in_python("random.Random's layout")
    assert generator.random() == twin.random()


def test_words_are_put_only_into_a_generator_laid_out_as_random_random():
    class Counting(random.Random):
        def getstate(self):
            return (*super().getstate(), 0)

    words = cpython.random_words(random.Random(1))
    for other in (Counting(1), object()):
        cpython.random_words(other)
        with pytest.raises(ValueError, match="does not keep its state"):
            cpython.put_random_words(other, words)
    with pytest.raises(ValueError, match="does not keep its state"):
        cpython.put_random_words(random.Random(1), words[:-1])


def test_a_generator_that_keeps_more_than_its_words_has_none():
    class Counting(random.Random):
        def getstate(self):
            return (*super().getstate(), 0)

    assert cpython.random_words(Counting(1)) is None and cpython.random_words(random.Random(1)) is not None
    assert cpython.random_words(object()) is None
