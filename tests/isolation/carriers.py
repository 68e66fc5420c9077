"""A toy course whose suite puts a hidden property first, and a submission that tries to carry
the hidden property's inputs into the feedback of the public ones.

The hidden property's first example holds ``secret`` (far outside what the public strategies
draw, so the submission knows it is hidden). The submission encodes it into everything a later
worker could look at: resource limits (its own, and its parent's, which is a zygote's child's
zygote), priority and affinity (its own and its parent's), pid and inode numbers (it forks and
makes files), the mode and extended attributes of shared files, and time. Each public call
decodes what is deterministic of those and raises it as its error message, so a grading whose
public feedback differs between two secrets has carried them. Used by ``tests/engine/test_plugin.py``
(in this process) and ``tests/isolation/test_isolation_modes.py`` (in every isolation mode).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import ROOT

TOY = ROOT / "tests" / "fixtures" / "toy_course"
HIDDEN = "test_hidden_sum"
PUBLIC = ("test_public_sum", "test_public_sum_again")

SUITE = '''"""ex_sum with its hidden property first (tests/isolation/carriers.py)."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.suite import expect_equal

numbers = st.lists(st.integers(-1000, 1000), max_size=20)


@pytest.mark.hidden
@pytest.mark.points(4)
@given(values=numbers)
@example(values=[{secret}])
def test_hidden_sum(student, reference, values):
    """add_all agrees with the reference."""
    expect_equal(student.add_all(values), reference.add_all(values), f"add_all({{values!r}})")


@pytest.mark.points(3)
@given(values=numbers)
@example(values=[])
def test_public_sum(student, values):
    """add_all adds every number."""
    expect_equal(student.add_all(values), sum(values), f"add_all({{values!r}})")


@pytest.mark.points(3)
@given(values=numbers)
def test_public_sum_again(student, values):
    """add_all adds every number, once more."""
    expect_equal(student.add_all(values), sum(values), f"add_all({{values!r}})")
'''

ATTACKER = '''"""Carries the hidden property's input to the public feedback, if anything lets it."""

import os
import resource
import time

SECRET_ABOVE = 10 ** 6


def attempt(action):
    try:
        action()
    except BaseException:
        pass


def fork_and_wait():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def encode(secret):
    k = secret % 7 + 1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for pid in (0, os.getppid()):
        attempt(lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft - k, hard)))
        attempt(lambda: os.setpriority(os.PRIO_PROCESS, pid, k))
        attempt(lambda: os.sched_setaffinity(pid, {k % len(os.sched_getaffinity(0))}))
    for i in range(k):
        attempt(fork_and_wait)
        for folder in ("/tmp", "."):
            attempt(lambda: open(os.path.join(folder, f"carrier-{i}"), "w").close())
    for path in ("/tmp", ".", __file__):
        attempt(lambda: os.chmod(path, 0o700 + k))
        attempt(lambda: os.setxattr(path, "user.carrier", bytes([k])))
    time.sleep(0.05 * k)


def decoded():
    seen = {"nofile": resource.getrlimit(resource.RLIMIT_NOFILE), "nice": os.getpriority(os.PRIO_PROCESS, 0),
             "cpus": sorted(os.sched_getaffinity(0))}
    for label, path in (("/tmp", "/tmp"), ("this file", __file__)):  # its path names a worker's folder
        seen[label] = oct(os.stat(path).st_mode)
        try:
            seen[label + " xattrs"] = [(name, os.getxattr(path, name)) for name in os.listxattr(path)]
        except OSError as error:
            seen[label + " xattrs"] = type(error).__name__
    if os.path.isdir("/sandbox"):  # pid and inode numbers of a namespace and a tmpfs of the sandbox's own
        with open("inode", "w") as file:
            seen["inode"] = os.fstat(file.fileno()).st_ino
        os.unlink("inode")
        seen["pid"] = os.getpid()
    return seen


def add_all(numbers):
    if not isinstance(numbers, list):
        raise TypeError("numbers must be a list")
    if any(number > SECRET_ABOVE for number in numbers):
        encode(max(numbers))
        return sum(numbers)
    raise ValueError(f"decoded {decoded()!r}")
'''


def toy_course(folder: Path, secret: int) -> Path:
    """A copy of the toy course in ``folder`` whose suite is :data:`SUITE` with ``secret``; its
    course file. The suite has a name of its own: pytest would take a module already imported
    under the toy course's suite's name for it."""
    shutil.copytree(TOY, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "suites" / "ex_sum.py").unlink()
    (folder / "suites" / "ex_sum_hidden_first.py").write_text(SUITE.format(secret=secret))
    course = folder / "course.yaml"
    course.write_text(course.read_text().replace("suite: suites/ex_sum.py", "suite: suites/ex_sum_hidden_first.py"))
    return course


def attacker(folder: Path) -> Path:
    """The submission of :data:`ATTACKER` in ``folder`` (made here)."""
    (folder / "toy").mkdir(parents=True)
    (folder / "toy" / "__init__.py").write_text("")
    (folder / "toy" / "ex_sum.py").write_text(ATTACKER)
    return folder
