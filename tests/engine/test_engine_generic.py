"""The engine knows no course: it grades, checks, releases and bundles a toy course.

``tests/fixtures/toy_course`` has one exercise (``add_all``), a package named ``toy`` and
solutions named ``answers``, so an engine that assumed the tokenizer course's names, or
imported its packages, fails here. Every command runs on a copy of the engine, away from the
repository, in Python processes where importing ``tokcourse``, ``solutions`` or ``exercises``
raises (a ``sitecustomize`` on the path; the project may be installed in the venv, so
leaving the repository off the path is not enough). A static check also keeps
``autograder/`` from importing them.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from tests.conftest import ROOT, autograder

TOY = ROOT / "tests" / "fixtures" / "toy_course"
ENGINE = ROOT / "autograder"
COURSE_PACKAGES = {"tokcourse", "solutions", "exercises", "suites"}  # the tokenizer course's top-level names
IMPORTERS = {"import_module", "__import__", "find_spec", "spec_from_file_location", "run_module", "import_path"}
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc")
HIDDEN = "test_add_all_matches_reference_and_rejects_non_lists"
PUBLIC = "test_add_all_adds_every_number"


# -- the engine's source names no course package --------------------------------------------


def course_imports(source: str) -> list[str]:
    """The places in ``source`` that import one of the course's packages: ``import``
    statements, and import calls (``importlib.import_module("tokcourse...")`` and the like)
    with a string that names one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in IMPORTERS:
            names = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        else:
            continue
        if any(name.replace("/", ".").split(".")[0] in COURSE_PACKAGES for name in names):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_engine_imports_nothing_of_the_course():
    found = [f"{path.relative_to(ROOT)} {where}" for path in sorted(ENGINE.rglob("*.py"))
             for where in course_imports(path.read_text(encoding="utf-8"))]
    assert not found, "the engine imports the tokenizer course:\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    "import tokcourse",
    "import tokcourse.grading.encoders as enc",
    "from tokcourse.grading import strategies",
    "from solutions.ex1_merge_tracing import trace_merges",
    "import importlib\nimportlib.import_module('tokcourse.tools.registry')",
    "m = __import__('solutions')",
    "from importlib import import_module\nimport_module(f'tokcourse.{name}')",
])
def test_the_import_check_catches_each_way_of_importing(source):
    """So that the check above passing means something."""
    assert course_imports(source)


def test_the_import_check_lets_the_engine_import_by_the_course_files_names():
    """The engine imports the course's packages by the names ``course.yaml`` gives, which is fine."""
    assert not course_imports("import importlib\nimportlib.import_module(f'{course.solutions}.{module}')\n"
                              "from .suite import expect\nimport solutionsmith")


# -- the toy course through the command line, on an engine that sees nothing else -----------


BLOCKER = """\
# Written by tests/engine/test_engine_generic.py: the tokenizer course cannot be imported in this process.
import sys


class _Blocked:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"{{name}} belongs to the tokenizer course; the engine must not import it",
                                      name=name)


sys.meta_path.insert(0, _Blocked)
"""


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    """A copy of the toy course, with a copy of the engine in ``../engine`` and the import
    blocker in ``../blocker``."""
    base = tmp_path_factory.mktemp("generic")
    shutil.copytree(TOY, base / "course", ignore=SKIPPED)
    shutil.copytree(ENGINE, base / "engine" / "autograder", ignore=SKIPPED)
    (base / "blocker").mkdir()
    (base / "blocker" / "sitecustomize.py").write_text(BLOCKER.format(blocked=sorted(COURSE_PACKAGES - {"suites"})))
    return base / "course"


def engine_only(toy: Path, engine: bool = True) -> dict[str, str]:
    """The Python path of every run here: the engine's copy (unless ``engine`` is false) and
    the blocker, which the grader hands on to the processes it starts."""
    folders = [toy.parent / "engine"] * engine + [toy.parent / "blocker"]
    return {"PYTHONPATH": ":".join(map(str, folders))}


def run(toy: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m autograder --course <the toy course> ARGS``, from the toy course's folder."""
    return autograder(*args, course=toy / "course.yaml", cwd=toy, env=engine_only(toy), timeout=600)


def test_the_runs_here_cannot_import_the_tokenizer_course(toy):
    """What makes the runs below a proof: the course's packages do not import there."""
    for package in ("tokcourse", "solutions", "exercises", "tokcourse.grading.encoders"):
        probe = subprocess.run([sys.executable, "-c", f"import {package}"], cwd=toy, env=engine_only(toy),
                               capture_output=True, text=True)
        assert probe.returncode != 0 and "belongs to the tokenizer course" in probe.stderr, package
    probe = subprocess.run([sys.executable, "-c", "import autograder; print(autograder.__file__)"], cwd=toy,
                           env=engine_only(toy), capture_output=True, text=True)
    assert probe.stdout.strip() == str(toy.parent / "engine" / "autograder" / "__init__.py")


@pytest.mark.sandbox
@pytest.mark.slow  # grades three submissions end to end; test_check_runs_the_public_property is the quick run
def test_grade_gives_the_reference_full_marks_the_stub_zero_and_a_half_answer_its_public_points(toy, tmp_path):
    half = tmp_path / "half"  # adds right, but takes anything
    half.mkdir()
    (half / "ex_sum.py").write_text("def add_all(numbers):\n    return sum(numbers)\n")
    graded = run(toy, "grade", str(toy / "answers"), str(toy / "toy"), str(half), "--out", str(tmp_path / "out"),
                 "--jobs", "2")
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    scores = {row["submission"]: row["score"] for row in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert scores == {"answers": "10", "toy": "0", "half": "6"}
    results = json.loads((tmp_path / "out" / "half" / "results.json").read_text())
    (hidden,) = [t for t in results["tests"] if HIDDEN in t["name"]]
    assert hidden["score"] == 0 and hidden["output"].endswith(" — wrong result.")  # and not the example


@pytest.mark.sandbox
def test_check_runs_the_public_property(toy):
    stubs = run(toy, "check")
    assert stubs.returncode == 1, stubs.stdout[-3000:] + stubs.stderr[-3000:]
    assert "not implemented" in stubs.stdout and HIDDEN not in stubs.stdout
    reference = run(toy, "check", str(toy / "answers"))
    assert reference.returncode == 0, reference.stdout[-3000:] + reference.stderr[-3000:]


@pytest.mark.sandbox
def test_a_check_keeps_the_examples_its_next_check_replays_in_the_user_s_cache(toy, tmp_path):
    """``check`` grades in its own process; it keeps its records where grader processes keep
    theirs (docs/architecture.md, "Where records live"), so that a student's second check replays."""
    cache = {**engine_only(toy), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _ in range(2):
        checked = autograder("check", str(toy / "answers"), course=toy / "course.yaml", cwd=toy, env=cache)
        assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    records = list((tmp_path / "cache" / "autograder" / "hypothesis").glob("autograder-examples-*/*.json"))
    assert records, sorted(p.name for p in (tmp_path / "cache").rglob("*"))


@pytest.mark.sandbox
@pytest.mark.slow  # two end-to-end checks
def test_the_caller_s_pytest_settings_never_reach_a_grading(toy):
    """A grading's pytest takes the engine's arguments alone: a student who runs their own tests
    with ``PYTEST_ADDOPTS`` or ``PYTEST_PLUGINS`` set gets the check they would get without."""
    plain = autograder("check", str(toy / "answers"), course=toy / "course.yaml", cwd=toy, env=engine_only(toy))
    mine = autograder("check", str(toy / "answers"), course=toy / "course.yaml", cwd=toy,
                      env={**engine_only(toy), "PYTEST_ADDOPTS": "-q --maxfail=1", "PYTEST_PLUGINS": "no_such_plugin"})
    assert plain.returncode == 0, plain.stdout[-3000:] + plain.stderr[-3000:]
    assert mine.returncode == 0, mine.stdout[-3000:] + mine.stderr[-3000:]


PLUGIN = "import os\n\ndef hook():\n    with open(os.environ['PLUGIN_RAN'], 'a') as ran:\n        ran.write('ran')\n"


@pytest.mark.sandbox
@pytest.mark.slow  # a check and a grade, end to end
def test_no_installed_hypothesis_plugin_takes_part_in_a_grading(toy, tmp_path):
    """A package on the path that registers a hypothesis plugin (a "hypothesis" entry point, which
    hypothesis runs as it is imported) is left out of the check and of the grader processes: the
    grade depends on the course alone, whatever is installed where it runs."""
    plugins = tmp_path / "plugins"
    (plugins / "strayplugin-1.0.dist-info").mkdir(parents=True)
    (plugins / "strayplugin-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: strayplugin\n"
                                                                    "Version: 1.0\n")
    (plugins / "strayplugin-1.0.dist-info" / "entry_points.txt").write_text("[hypothesis]\nstray = strayplugin:hook\n")
    (plugins / "strayplugin.py").write_text(PLUGIN)
    ran = tmp_path / "ran"
    env = {"PYTHONPATH": f"{engine_only(toy)['PYTHONPATH']}:{plugins}", "PLUGIN_RAN": str(ran),
           "HYPOTHESIS_NO_PLUGINS": ""}  # as unset: a command run in this process earlier set it here
    probe = subprocess.run([sys.executable, "-c", "import hypothesis"], env={**os.environ, **env})
    assert probe.returncode == 0 and ran.read_text() == "ran", "the plugin is one hypothesis runs"
    ran.unlink()
    checked = autograder("check", str(toy / "answers"), course=toy / "course.yaml", cwd=toy, env=env)
    graded = autograder("grade", str(toy / "answers"), "--out", str(tmp_path / "out"), course=toy / "course.yaml",
                        cwd=toy, env=env)
    assert checked.returncode == 0 and graded.returncode == 0, checked.stdout[-2000:] + graded.stdout[-2000:]
    assert not ran.exists()
    assert json.loads((tmp_path / "out" / "answers" / "results.json").read_text())["score"] == 10


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_release_holds_no_answers_and_its_check_runs(toy, tmp_path):
    out = tmp_path / "release"
    built = run(toy, "release", "--out", str(out))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert not (out / "answers").exists() and (out / "autograder" / "engine" / "plugin.py").is_file()
    suite = (out / "suites" / "ex_sum.py").read_text()
    assert PUBLIC in suite and HIDDEN not in suite
    alone = {"PATH": "/usr/bin:/bin", "HOME": str(out), **engine_only(toy, engine=False)}  # the release's own engine
    stubs = autograder("check", course=None, cwd=out, env=alone, inherit=False, timeout=600)
    assert stubs.returncode == 1 and PUBLIC in stubs.stdout, stubs.stdout[-3000:] + stubs.stderr[-3000:]
    solved = autograder("check", str(toy / "answers"), course=None, cwd=out, env=alone, inherit=False, timeout=600)
    assert solved.returncode == 0, solved.stdout[-3000:] + solved.stderr[-3000:]


def test_a_command_writes_no_compiled_code_beside_the_course_s_files(toy, tmp_path):
    """On a machine that keeps compiled code (most do), the suites a command imports are compiled
    into the grader's cache: a ``__pycache__`` beside them would be readable by whoever may read
    the course, and its times would tell a worker that someone was graded before it."""
    course = shutil.copytree(toy, tmp_path / "course", ignore=SKIPPED)
    keeps = {**engine_only(toy), "PYTHONDONTWRITEBYTECODE": "", "XDG_CACHE_HOME": str(tmp_path)}
    built = autograder("gradescope", "--out", str(tmp_path / "autograder.zip"), course=course / "course.yaml",
                       cwd=course, env=keeps)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert [p.relative_to(course) for p in course.rglob("__pycache__")] == []
    assert list((tmp_path / "autograder").glob("compiled-*/**/suites/ex_sum.*.pyc"))


def test_gradescope_bundles_the_toy_course(toy, tmp_path):
    out = tmp_path / "autograder.zip"
    built = run(toy, "gradescope", "--out", str(out))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    names = set(zipfile.ZipFile(out).namelist())
    assert {"setup.sh", "run_autograder", "course.yaml", "requirements.lock", "autograder/engine/plugin.py",
            "toy/ex_sum.py", "answers/ex_sum.py", "suites/ex_sum.py"} <= names
    assert not {n for n in names if n.split("/")[0] in COURSE_PACKAGES - {"suites"}}


HANG = "import time\n\n\ndef add_all(numbers):\n    time.sleep(3)\n    return 0\n"


def budget_course(toy: Path) -> Path:
    """The toy course with a 4-second budget for a whole submission."""
    config = (toy / "course.yaml").read_text().replace("  exercise_seconds: 60\n",
                                                       "  exercise_seconds: 60\n  submission_seconds: 4\n")
    assert "submission_seconds: 4" in config
    (toy / "budget.yaml").write_text(config)
    return toy / "budget.yaml"


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_hang_is_cut_by_the_submission_budget_and_results_are_still_written(toy, tmp_path):
    """``limits.submission_seconds`` caps all exercises together: the hanging call uses up the
    budget, the next property fails at once saying so, and the reports are written."""
    hang = tmp_path / "hang"
    hang.mkdir()
    (hang / "ex_sum.py").write_text(HANG)
    graded = autograder("grade", str(hang), "--out", str(tmp_path / "out"), course=budget_course(toy), cwd=toy,
                        env=engine_only(toy), timeout=600)
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    results = json.loads((tmp_path / "out" / "hang" / "results.json").read_text())
    assert results["score"] == 0 and len(results["tests"]) == 2
    assert results["tests"][-1]["output"].endswith("time budget used up.")  # a hidden property says only that


def replayed(toy: Path, submission: Path, *args: str, course: Path | None = None) -> str:
    """``gradescope --run SUBMISSION``: what it printed, after checking it succeeded."""
    run = autograder("gradescope", "--run", str(submission), *args, course=course or toy / "course.yaml", cwd=toy,
                     env=engine_only(toy), timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout


@pytest.mark.sandbox
@pytest.mark.slow
def test_gradescope_run_replays_uploads_as_gradescope_places_them(toy, tmp_path):
    bundle = tmp_path / "autograder.zip"
    assert run(toy, "gradescope", "--out", str(bundle)).returncode == 0
    right = "def add_all(numbers):\n    if not isinstance(numbers, list):\n        raise TypeError(numbers)\n" \
            "    return sum(numbers)\n"
    notebook = tmp_path / "ex_sum.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%load_ext autoreload\n" + right)]),
                   notebook)
    assert "results.json is valid: score 10, 2 of 2 tests passed" in replayed(toy, notebook, "--zip", str(bundle))
    repository = tmp_path / "repo.zip"
    with zipfile.ZipFile(repository, "w") as archive:
        archive.writestr("work/toy/ex_sum.py", right)
        for i in range(600):
            archive.writestr(f"work/.venv/lib/site-packages/m{i}.py", "")
    assert "results.json is valid: score 10, 2 of 2 tests passed" in replayed(toy, repository, "--zip", str(bundle))
    broken = tmp_path / "ex_sum.py"
    broken.write_text("def add_all(numbers:\n    return 0\n")
    output = replayed(toy, broken, "--zip", str(bundle))
    assert "results.json is valid: score 0, 0 of 2 tests passed" in output and "SyntaxError" in output


@pytest.mark.sandbox
@pytest.mark.slow
def test_gradescope_run_keeps_the_submission_budget_on_a_hang(toy, tmp_path):
    hang = tmp_path / "ex_sum.py"
    hang.write_text(HANG)
    assert "results.json is valid: score 0, 0 of 2 tests passed" in replayed(toy, hang, course=budget_course(toy))


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_notebook_with_a_copied_answer_cell_is_graded_in_order_and_noted(toy, tmp_path):
    """Both copies of an answer cell are graded, top to bottom (the last definition counts); the
    student's feedback and the gradebook's note say so."""
    answer = {"nbgrader": {"grade_id": "ex_sum_add_all", "solution": True, "grade": False, "locked": False}}
    cells = [nbformat.v4.new_markdown_cell("# Adding numbers"),
             nbformat.v4.new_code_cell("def add_all(numbers):\n    return 0\n", metadata=answer),
             nbformat.v4.new_code_cell("def add_all(numbers):\n    if not isinstance(numbers, list):\n"
                                       "        raise TypeError(numbers)\n    return sum(numbers)\n", metadata=answer)]
    notebook = tmp_path / "ex_sum.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    graded = run(toy, "grade", str(notebook), "--out", str(tmp_path / "out"))
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    (row,) = csv.DictReader((tmp_path / "out" / "grades.csv").open())
    copied = "ex_sum.ipynb: cells 2, 3 are all the answer cell 'ex_sum_add_all' (one was copied)"
    assert row["score"] == "10" and copied in row["note"]
    assert copied in (tmp_path / "out" / "ex_sum" / "feedback.md").read_text()


# -- one grader process, many gradings -------------------------------------------------------


def in_a_fresh_process(course, *grading):
    """:meth:`GraderProcess.grade` of ``grading`` in a process that grades nothing else."""
    from autograder.batch.grader import GraderProcess

    with GraderProcess(course) as grader:
        return grader.grade(*grading)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_grader_process_grades_one_submission_after_another_as_fresh_ones_do(tmp_path):
    """nbgrader grades all of a student's notebooks in one :class:`GraderProcess`: each grading
    matches a fresh process's, and a grading that kills the process costs only itself."""
    from autograder.batch.grader import GraderProcess, Part
    from autograder.config import load_course
    from autograder.intake.staging import stage

    course = load_course(TOY / "course.yaml")
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "ex_sum.py").write_text("def add_all(numbers):\n    return sum(numbers[1:])\n")
    submissions = {"right": TOY / "answers", "wrong": wrong, "stub": TOY / "toy"}

    def graded(grader, name: str, exercises: list[str] | None = None):
        staged = stage(course, submissions[name])
        try:
            return grader(name, staged, tmp_path / "out" / name, Part(exercises))
        finally:
            staged.remove()

    fresh = {name: graded(lambda *a: in_a_fresh_process(course, *a), name)[0] for name in submissions}
    with GraderProcess(course) as grader:
        first = graded(grader.grade, "right")[0]
        assert grader.process is not None
        pid = grader.process.pid
        kept = {"right": first, **{name: graded(grader.grade, name)[0] for name in ("wrong", "stub")}}
        assert grader.process.pid == pid, "every grading but the first reuses the process"
        assert {n: g.results for n, g in kept.items()} == {n: g.results for n, g in fresh.items()}
        assert kept["right"].score == 10 and kept["stub"].score == 0 and kept["wrong"].score < 10

        failed, _, problem = graded(grader.grade, "right", ["no_such_exercise"])  # the process dies of it
        assert failed is None and problem == "grader failed (pytest stopped with NO_TESTS_COLLECTED while grading)"
        assert "NO_TESTS_COLLECTED" in (tmp_path / "out" / "right" / "grader.log").read_text()  # and kept
        again = graded(grader.grade, "wrong")[0]
        assert grader.process.pid != pid and again.results == fresh["wrong"].results

        grader.process.kill()  # a process that died between gradings is replaced, at no cost
        grader.process.wait()
        assert graded(grader.grade, "right")[0].results == fresh["right"].results


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_batch_starts_a_grader_process_per_job_and_grades_as_fresh_ones_do(tmp_path, monkeypatch):
    """A batch's submissions share their thread's grader process (:class:`GraderPool`): one
    process per job, not per submission, and every grade is a fresh process's."""
    from rich.console import Console

    from autograder.batch.grader import GraderProcess
    from autograder.batch.pipeline import BatchOptions, grade_many
    from autograder.config import load_course
    from autograder.intake.staging import stage

    course = load_course(TOY / "course.yaml")
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "ex_sum.py").write_text("def add_all(numbers):\n    return sum(numbers[1:])\n")
    submissions = [("right", TOY / "answers"), ("stub", TOY / "toy"), ("wrong", wrong)]
    fresh = {}
    for name, path in submissions:
        staged = stage(course, path)
        fresh[name] = in_a_fresh_process(course, name, staged, tmp_path / "fresh" / name)[0]
        staged.remove()
    starts = []
    start = GraderProcess._start
    monkeypatch.setattr(GraderProcess, "_start", lambda self: starts.append(self) or start(self))
    rows = grade_many(course, submissions, tmp_path / "batch", Console(file=open(os.devnull, "w")),
                      BatchOptions(jobs=1, force=True))
    assert len(starts) == 1, "one job, one grader process"
    assert {name: grade.results for name, grade, _ in rows} == {n: g.results for n, g in fresh.items()}
    assert all(grader.process is None for grader in starts), "the batch closes its grader processes"


# -- one process, two courses -----------------------------------------------------------------


def graded_here(root: Path, submission: Path) -> list[tuple[str, bool]]:
    """Each property's name and whether it passed, for ``submission`` graded in this process by the
    course at ``root``."""
    from autograder.config import load_course
    from autograder.engine.run import grade_staged
    from autograder.intake.staging import stage

    course = load_course(root / "course.yaml")
    staged = stage(course, submission)
    try:
        return [(r.name, r.passed) for r in grade_staged(course, staged.root, staged.notes).results]
    finally:
        staged.remove()


@pytest.mark.sandbox
def test_one_process_grades_two_courses_of_the_same_names_each_by_its_own_files(tmp_path):
    """A process that graded one course grades another whose suites and solutions have the same
    module names (two versions of a course, a release beside its source) by the second's files,
    not by the modules the first left imported."""
    first = shutil.copytree(TOY, tmp_path / "first", ignore=SKIPPED)
    second = shutil.copytree(TOY, tmp_path / "second", ignore=SKIPPED)
    suite = second / "suites" / "ex_sum.py"
    suite.write_text(suite.read_text().replace(PUBLIC, "test_add_all_of_the_second_course"))
    suite.write_text(suite.read_text().replace("sum(values),", "sum(values) + 1,"))  # the second adds one
    answers = second / "answers" / "ex_sum.py"
    answers.write_text(answers.read_text().replace("return sum(numbers)", "return sum(numbers) + 1"))
    assert graded_here(first, first / "answers") == [(PUBLIC, True), (HIDDEN, True)]
    assert graded_here(second, second / "answers") == [("test_add_all_of_the_second_course", True), (HIDDEN, True)]


@pytest.mark.sandbox
def test_no_conftest_beside_the_suites_or_above_them_takes_part_in_a_grading(tmp_path):
    """The suites alone decide a grade: a ``conftest.py`` in the suites' folder, or in any folder
    above the course (an instructor's home, a repository that holds courses), is never loaded."""
    course_folder = shutil.copytree(TOY, tmp_path / "courses" / "toy", ignore=SKIPPED)
    for folder in (tmp_path / "courses", course_folder / "suites"):
        (folder / "conftest.py").write_text(f"raise RuntimeError('the conftest.py of {folder.name} was loaded')\n")
    assert graded_here(course_folder, course_folder / "answers") == [(PUBLIC, True), (HIDDEN, True)]


@pytest.mark.sandbox
@pytest.mark.slow
def test_each_grader_process_of_a_batch_and_its_workers_keep_to_a_core_of_their_own(tmp_path, monkeypatch):
    """A batch on two jobs runs its two grader processes on two cores, one each, and the workers
    they start on the same one, which they cannot widen: a submission that
    tries, and adds 1000 where it runs on more than one core, loses the points. A grader process
    made outside a batch (nbgrader's, a Dask worker's) is not kept to any."""
    from rich.console import Console

    from autograder.batch.grader import GraderProcess, lane_core
    from autograder.batch.pipeline import BatchOptions, grade_many
    from autograder.config import load_course

    course = load_course(TOY / "course.yaml")
    submissions = []
    for name in ("first", "second"):  # every core it could name: os.cpu_count() sees only its own in a worker
        (tmp_path / name).mkdir()
        (tmp_path / name / "ex_sum.py").write_text(
            "import os\n\ndef add_all(numbers):\n    if not isinstance(numbers, list):\n"
            "        raise TypeError(numbers)\n"
            "    try:\n        os.sched_setaffinity(0, range(256))\n    except OSError:\n        pass\n"
            "    return sum(numbers) + (0 if len(os.sched_getaffinity(0)) == 1 else 1000)\n")
        submissions.append((name, tmp_path / name))
    cores = []
    start = GraderProcess._start
    monkeypatch.setattr(GraderProcess, "_start", lambda self: cores.append(self.core) or start(self))
    rows = grade_many(course, submissions, tmp_path / "batch", Console(file=open(os.devnull, "w")),
                      BatchOptions(jobs=2, force=True))
    assert [grade.score for _, grade, _ in rows] == [10, 10]
    assert sorted(cores) == sorted({lane_core(0), lane_core(1)}) or len(os.sched_getaffinity(0)) == 1
    assert lane_core(len(os.sched_getaffinity(0))) == lane_core(0), "more lanes than cores: round again"
    assert GraderProcess(course).core is None


@pytest.mark.sandbox
@pytest.mark.slow
def test_an_nbgrader_course_is_built_with_its_examples_recorded(toy, tmp_path):
    """``nbgrader --out`` grades the grading copy's solutions once, so the records for its
    properties are in the cache before any student's autograde: one per hypothesis property."""
    records = tmp_path / "cache" / "records"
    records.parent.mkdir(mode=0o700)
    built = autograder("nbgrader", "--out", str(tmp_path / "course"), course=toy / "course.yaml", cwd=toy,
                       env={**engine_only(toy), "AUTOGRADER_RECORDS": str(records)}, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "Recorded the examples by grading the solutions once" in built.stdout
    assert len(list(records.glob("*.json"))) == 2  # the toy suite's two properties
