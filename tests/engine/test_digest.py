"""The course digest (``autograder/engine/digest.py``): what it covers, and that reading the
suites' imports from this machine's cache gives the digest that parsing them gives."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from autograder.config import Course, load_course
from autograder.engine.digest import course_digest
from tests.conftest import ROOT

TOY = ROOT / "tests" / "fixtures" / "toy_course"


@pytest.fixture
def toy(tmp_path, monkeypatch) -> Course:
    """A copy of the toy course, and a cache of its own."""
    course = tmp_path / "course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return load_course(course / "course.yaml")


def _in_a_fresh_process(course: Course) -> str:
    """The digest as another process on this machine reads it (a grader process, the next command)."""
    code = "import sys; from autograder.config import load_course; from autograder.engine.digest import " \
           "course_digest; print(course_digest(load_course(sys.argv[1])))"
    done = subprocess.run([sys.executable, "-c", code, str(course.file)], capture_output=True, text=True,
                          env=os.environ, timeout=120, check=True)
    return done.stdout.strip()


def test_a_change_to_what_a_suite_imports_or_reads_changes_the_course_digest(toy):
    """Records are keyed by the course digest, so it must cover everything that decides the examples."""
    root = toy.root
    (root / "helpers").mkdir()
    (root / "helpers" / "__init__.py").write_text("")
    (root / "helpers" / "draw.py").write_text("SIZE = 20\n")
    (root / "data").mkdir()
    (root / "data" / "table.txt").write_text("one\n")
    suite = root / "suites" / "ex_sum.py"
    suite.write_text(suite.read_text() + "\nfrom helpers.draw import SIZE\n")
    yaml = toy.file.read_text() + "\ndata:\n  table: data/table.txt\n"
    toy.file.write_text(yaml)
    digests = [course_digest(load_course(toy.file))]
    for path, text in ((root / "helpers" / "draw.py", "SIZE = 21\n"), (root / "data" / "table.txt", "two\n"),
                       (root / "helpers" / "__init__.py", "# a package's init runs too\n")):
        path.write_text(text)
        digests.append(course_digest(load_course(toy.file)))
    (root / "NOTES.md").write_text("not read by any suite")
    digests.append(course_digest(load_course(toy.file)))
    assert len(set(digests)) == 4 and digests[-1] == digests[-2]
    (root / "helpers" / "more.py").write_text("MORE = 1\n")
    suite.write_text(suite.read_text().replace("import SIZE", "import SIZE\nfrom helpers.more import MORE"))
    rewritten = course_digest(load_course(toy.file))  # read anew, though this process read the suite before
    (root / "helpers" / "more.py").write_text("MORE = 2\n")
    assert len({digests[-1], rewritten, course_digest(load_course(toy.file))}) == 3


def test_the_suites_imports_kept_on_this_machine_give_the_digest_parsing_gives(toy, tmp_path):
    """Another process reads what a suite imports from the cache, keyed by the suite's content: an
    edited suite is parsed again, and a record that cannot be read is parsed again too."""
    root = toy.root
    (root / "helpers.py").write_text("SIZE = 20\n")
    (root / "more.py").write_text("MORE = 1\n")
    suite = root / "suites" / "ex_sum.py"
    suite.write_text(suite.read_text() + "\nfrom helpers import SIZE\n")
    parsed = course_digest(load_course(toy.file))
    records = sorted((tmp_path / "cache" / "autograder" / "imports").glob("*.json"))
    assert records and _in_a_fresh_process(toy) == parsed

    suite.write_text(suite.read_text() + "from more import MORE\n")
    edited = course_digest(load_course(toy.file))
    assert edited != parsed and _in_a_fresh_process(toy) == edited
    (root / "more.py").write_text("MORE = 2\n")  # read: the edited suite's imports were parsed anew
    assert _in_a_fresh_process(toy) not in (edited, parsed)

    suite.write_text(suite.read_text().replace("from more import MORE\n", ""))
    for broken in ("not json", "7", '{"' + str(root / "helpers.py") + '": 1}', "[1, 2]"):
        for record in records:
            record.write_text(broken)
        assert _in_a_fresh_process(toy) == parsed, broken
