"""What many test modules share: where the repository is, how to run the command line, and
the check that the course's data was fetched.

Test modules may take the fixtures (``root``, ``cli``, ``fetched``, ``course_file``) or import the plain
names (``from tests.conftest import ROOT, COURSE, autograder``), and the leak scan that a
student-facing folder must pass (``solution_lines``, ``hidden_properties``, ``leaks``).
Nothing here imports the course's own packages at load time (the engine, yes):
``tests/engine/test_engine_generic.py`` grades a toy course and must not depend on them.
"""

from __future__ import annotations

import ast
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest

from autograder.config import load_course

ROOT = Path(__file__).resolve().parent.parent
# the base interpreter's own site-packages where this environment imports nothing from it (a venv
# made from pyenv's Python): no confined process may read it
_BASE_SITE = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})["purelib"]
UNUSED_SITE_PACKAGES = [_BASE_SITE] if os.path.isdir(_BASE_SITE) and _BASE_SITE not in site.getsitepackages() else []
COURSE = ROOT / "course.yaml"


def autograder(*args: str, course: Path | None = COURSE, cwd: Path = ROOT, env: dict[str, str] | None = None,
               inherit: bool = True, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run ``python -m autograder [--course COURSE] ARGS`` in ``cwd``; return it with its output as text.

    ``course=None`` leaves ``--course`` out, so the command reads ``./course.yaml`` as a
    student's would. The environment is this process's plus the repository on
    ``PYTHONPATH`` (the grader finds the engine however it is started), then ``env`` on
    top; ``inherit=False`` starts from nothing, for a run that must see nothing of the
    repository. ``COLUMNS=200`` keeps rich from wrapping the tables the tests read.
    """
    command = [sys.executable, "-m", "autograder", *(["--course", str(course)] if course else []), *args]
    base = {**os.environ, "PYTHONPATH": str(ROOT)} if inherit else {}
    return subprocess.run(command, cwd=cwd, env={**base, "COLUMNS": "200", **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


# What a student-facing folder must not hold (tests/delivery/test_release.py, tests/delivery/test_nbgrader.py).
MIN_LINE = 25


def solution_lines(root: Path = ROOT) -> set[str]:
    """Every line of the reference solutions worth hiding: stripped, at least 25 characters,
    and not also in the student's package (signatures and docstrings the stubs share)."""
    course = load_course(root / "course.yaml")
    shared = {line.strip() for path in course.path(course.package).rglob("*.py")
              for line in path.read_text(encoding="utf-8").splitlines()}
    return {line.strip() for path in course.path(course.solutions).rglob("*.py")
            for line in path.read_text(encoding="utf-8").splitlines()
            if len(line.strip()) >= MIN_LINE and line.strip() not in shared}


def hidden_properties(root: Path = ROOT) -> dict[str, str]:
    """Name -> first docstring line of every hidden property of the course's suites."""
    course = load_course(root / "course.yaml")
    found = {}
    for exercise in course.exercises:
        tree = ast.parse(course.path(exercise.suite).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any("hidden" in ast.unparse(d) for d in node.decorator_list):
                found[node.name] = (ast.get_docstring(node) or "").splitlines()[0]
    return found


def leaks(folder: Path) -> list[str]:
    """Solution lines and hidden properties found in any text file under ``folder``."""
    secrets, hidden = solution_lines(), hidden_properties()
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if path.suffix == ".ipynb":  # the cells' text, not the JSON strings that hold it
            text = "\n".join(cell.source for cell in nbformat.reads(text, as_version=4).cells)
        lines = {line.strip() for line in text.splitlines()}
        found += [f"{path}: solution line {line!r}" for line in sorted(lines & secrets)]
        found += [f"{path}: hidden property {name}" for name, doc in hidden.items() if name in text or doc in text]
    return found


@pytest.fixture(scope="session")
def root() -> Path:
    """The repository's folder."""
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """:func:`autograder`, for tests that prefer a fixture to an import."""
    return autograder


@pytest.fixture
def command_here(monkeypatch, capsys, tmp_path):
    """:func:`autograder` for a command that grades nothing, run in this process (``cli.main``) to
    spare a Python start: ``command_here(*args, cwd=...)`` gives the same ``CompletedProcess``."""
    from autograder.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    # main() sets it where it is not set: set here, it is unset again after the test
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY",
                       os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or str(tmp_path / "hypothesis"))

    def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
        capsys.readouterr()
        with monkeypatch.context() as here:
            here.chdir(cwd)
            try:
                code = main(["--course", str(COURSE), *args])
            except SystemExit as stop:  # --help, and argparse's usage errors
                code = stop.code if isinstance(stop.code, int) else 2
        said = capsys.readouterr()
        return subprocess.CompletedProcess(["autograder", *args], code, said.out, said.err)
    return run


def pytest_addoption(parser):
    parser.addoption("--require-data", action="store_true",
                     help="fail, rather than skip, a test whose course data is missing (make test fetches it first)")
    parser.addoption("--keep-screenshots", metavar="FOLDER", type=Path,
                     help="copy the screenshots the browser tests take into FOLDER (make screenshots)")
    parser.addoption("--course-file", metavar="COURSE_YAML", type=Path, default=COURSE,
                     help="the course tests/config/test_course.py checks (default: this repository's course.yaml)")


@pytest.fixture(scope="session")
def course_file(request) -> Path:
    """The course file of ``--course-file``: tests/config/test_course.py checks it, whatever its exercises."""
    return request.config.getoption("course_file").resolve()


@pytest.fixture
def keep_screenshot(request):
    """``keep_screenshot(shot)`` copies a screenshot a test took into ``--keep-screenshots``, if given."""
    folder = request.config.getoption("--keep-screenshots")

    def keep(shot: Path) -> None:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, folder / shot.name)
    return keep


def pytest_collection_modifyitems(items):
    """A test that takes :func:`fetched` needs the data: mark it so, wherever it is."""
    for item in items:
        if "fetched" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.data)


@pytest.fixture(scope="session")
def fetched(request) -> list:
    """Every asset of ``data/assets.json``, after checking each fetched file's sha256.

    A missing or corrupt file skips the test with the command that fetches it, so the unit
    tests run from a bare venv; with ``--require-data`` (``make test``, which fetches first)
    it fails instead, since there a missing file is a broken set-up. One session-wide check
    serves the corpus, the real tokenizers and Django's messages alike.
    """
    from tokcourse import assets  # here, not at the top: see the module's docstring

    problems = assets.verify(ROOT)
    if problems:
        message = (f"course assets are missing or corrupt; run `{assets.FETCH_COMMAND}` (make setup does) first:\n"
                   + "\n".join(problems))
        if request.config.getoption("require_data"):
            pytest.fail(message)
        pytest.skip(message)
    return assets.load_manifest()
