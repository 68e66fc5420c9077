"""The student release: no solution code and no hidden property in it; its self-check passes
the reference, fails a wrong implementation, and its locked answers cannot be read back by
hashing small values."""

import ast
import hashlib
import itertools
import math
import re
import shutil
import string
import subprocess
from pathlib import Path

import pytest
import yaml

from autograder.config import load_course
from autograder.delivery import release as release_module
from autograder.delivery.nbgrader import course as nbgrader_course
from autograder.delivery.release import public_suite
from autograder.errors import GraderError
from autograder.locked.attack import BUDGET, Space
from autograder.locked.cases import load_cases
from autograder.locked.hashing import canonical, digest
from autograder.locked.seal import seal, split
from tests.conftest import ROOT, autograder, hidden_properties, leaks, solution_lines
from tokcourse import assets

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow]
TOY = ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml"  # builds in a second


def check(folder: Path) -> subprocess.CompletedProcess:
    """``python -m autograder check`` run inside a release folder, with nothing of the repository on the path."""
    return autograder("check", course=None, cwd=folder, inherit=False,
                      env={"PATH": "/usr/bin:/bin", "HOME": str(folder)}, timeout=600)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "course"
    run = autograder("release", "--out", str(out), course=None, timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    return out


def as_student(release: Path, folder: Path, solutions_edit=None) -> Path:
    """A copy of the release whose exercise modules are the reference's (optionally edited)."""
    shutil.copytree(release, folder)
    for path in (folder / "exercises").glob("ex*.py"):
        path.unlink()
    for path in (ROOT / "solutions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        (folder / "exercises" / path.name).write_text(solutions_edit(path.name, text) if solutions_edit else text)
    return folder


def test_the_release_holds_no_solution_code_and_no_hidden_property(release):
    assert solution_lines() and hidden_properties()  # the scan has something to look for
    assert leaks(release) == []
    assert not (release / "solutions").exists()
    raw = yaml.safe_load((release / "course.yaml").read_text())
    assert "solutions" not in raw and "samples" not in raw
    course = load_course(release / "course.yaml")
    assert course.is_release and course.max_score == load_course(ROOT / "course.yaml").max_score
    for exercise in course.exercises:
        tree = ast.parse(course.path(exercise.suite).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                assert "reference" not in [a.arg for a in node.args.args], node.name


def test_the_release_ships_only_salted_hashes_of_the_locked_answers(release):
    course = load_course(release / "course.yaml")
    cases = load_cases(course)
    assert {c.exercise for c in cases} == {e.module for e in course.exercises}
    sealed = yaml.safe_load(course.path(course.delivery.locked).read_text())
    for entries in sealed.values():
        for entry in entries:
            assert set(entry) <= {"name", "object", "setup", "calls", "salt", "sha256", "parts"}
            assert len(entry["salt"]) == 32 and len(entry["sha256"]) == 64
            parts = entry.get("parts", [])
            assert all(set(part) == {"calls", "sha256"} and len(part["sha256"]) == 64 for part in parts)
    assert len({e["salt"] for entries in sealed.values() for e in entries}) == len(cases)


def test_the_release_readme_says_how_to_fetch_the_data_and_where_tiktoken_finds_it(release, capsys):
    readme = (release / "README.md").read_text()
    assert ".venv/bin/python -m tokcourse.assets fetch corpus cl100k_base" in readme
    assert "export TIKTOKEN_CACHE_DIR=$PWD/.cache/tiktoken" in readme and ".cache/data/corpus.txt" in readme
    assert assets.main(["verify", "corpus", "cl100k_base"]) == 0  # the fetched files of this repository
    assert "verified 2 assets: corpus, cl100k_base" in capsys.readouterr().err


def test_the_release_says_how_much_of_each_exercise_its_check_sees(release):
    """The README's table of the check's reach is what the check runs: each exercise's public
    properties' points, as the check's own table counts them on the stubs."""
    course = load_course(ROOT / "course.yaml")
    readme = (release / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| (\d+) \| \d+(?: bonus)? \|$", readme, re.M))
    assert list(rows) == [e.module for e in course.exercises], readme
    screen = " ".join(check(release).stdout.split())
    for exercise in course.exercises:
        seen = int(rows[exercise.module])
        assert re.search(rf"{exercise.module} │ {exercise.points_text} │ 0 of {seen} points", screen), screen
        if seen < exercise.points:
            assert f"{seen} of the {exercise.points} points of {exercise.module}" in screen
    assert int(rows["ex1_merge_tracing"]) < 20, "the check sees a tenth of exercise 1's points, not all of them"


def test_self_check_in_the_release_passes_the_reference(release, tmp_path):
    run = check(as_student(release, tmp_path / "reference"))
    assert run.returncode == 0, run.stdout + run.stderr
    said = " ".join(run.stdout.split())
    assert "Official grading decides the rest with properties that compare your results" in said
    assert "Locked cases: fixed calls" in said


def test_self_check_in_the_release_fails_a_wrong_implementation(release, tmp_path):
    def wrong(name, text):  # WordPiece's score with a sum instead of a product
        if name != "ex3_wordpiece.py":
            return text
        assert "pair_count / (left_count * right_count)\n" in text
        return text.replace("pair_count / (left_count * right_count)\n", "pair_count / (left_count + right_count)\n")

    run = check(as_student(release, tmp_path / "wrong", wrong))
    assert run.returncode == 1
    sections = run.stdout.split("─" * 3)  # the failures come after a rule per exercise
    failed = [section for section in sections if "✗ locked case" in section]
    assert len(failed) == 1 and "ex3_wordpiece" in failed[0] and "differs from the reference's" in failed[0], run.stdout
    # the closing tip, run as printed in the release with its venv, as its README sets one up
    tip = re.search(r"Working on one exercise\? (.+) checks it alone\.", run.stdout)
    assert tip and tip.group(1).endswith("check --exercise ex3_wordpiece"), run.stdout
    (tmp_path / "wrong" / ".venv").symlink_to(ROOT / ".venv")
    again = subprocess.run(["bash", "-c", tip.group(1)], cwd=tmp_path / "wrong", capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "200"}, timeout=600)
    assert again.returncode == 1 and "No module named" not in again.stderr, again.stdout + again.stderr
    assert "ex3_wordpiece" in again.stdout and "ex1_merge_tracing" not in again.stdout, again.stdout


def test_a_failed_locked_case_names_the_call_whose_answer_differs(release, tmp_path):
    """Each call of a case whose answers are too many to guess has a hash of its own: the check says
    which call's answer differs, as the student writes it, and what a support module's name is."""
    def wrong(name, text):
        if name == "ex1_merge_tracing.py":  # the length before the merge, as in samples/partly_wrong
            assert "steps.append(MergeStep(rank, pair, new_id, count, vocab[new_id], length))" in text
            return text.replace("vocab[new_id], length))", "vocab[new_id], length + count))")
        if name == "ex4_multilingual.py":  # premiums upside down
            assert "    return {lang: n / tokens[baseline] for lang, n in tokens.items()}\n" in text
            return text.replace("n / tokens[baseline] for", "tokens[baseline] / n for")
        return text

    run = check(as_student(release, tmp_path / "wrong", wrong))
    assert run.returncode == 1
    output = " ".join(run.stdout.split())  # rich wraps lines
    assert ("Locked case 'a trace with ties and overlapping runs': the answer of this call differs from the "
            "reference's: trace_merges(\"the then there; aaaa abab\", 6) Its other calls gave the reference's "
            "answers: merge_pair(") in output, run.stdout
    assert "encoders is the course's tokcourse/grading/encoders.py (from tokcourse.grading import encoders):" in output
    assert "encoders.utf8_bytes: One token per byte of the UTF-8 encoding (ids 0-255)." in output


def test_no_locked_answer_can_be_read_back_by_hashing_small_values(release):
    course = load_course(release / "course.yaml")
    printable = string.printable.strip() + " "
    small = [None, True, False, *range(-1000, 100_001), *(k / 1000 for k in range(0, 100_001)),
             *("".join(chars) for n in range(3) for chars in itertools.product(printable, repeat=n)),
             *(list(items) for n in range(4) for items in itertools.product(range(-2, 20), repeat=n))]
    candidates = [canonical(value) for value in small] + [canonical([value]) for value in small]
    split = 0
    for case in load_cases(course):
        salted = hashlib.sha256(bytes.fromhex(case.entry.salt))
        hashes = {case.entry.sha256, *(part.sha256 for part in case.entry.parts)}
        split += len(case.entry.parts) > 1
        for encoded in candidates:
            probe = salted.copy()
            probe.update(encoded)
            assert probe.hexdigest() not in hashes, f"{case.exercise}: {case.name!r} is a small value"
    assert split, "no case is cut into parts"


def test_a_case_is_cut_into_parts_each_too_large_to_search():
    """A part ends once its calls' spaces exceed the budget; what is left joins the last part, and a
    case too small to cut keeps one hash."""
    sizes = [BUDGET * 10, 10, BUDGET, 7, 3]
    spaces = [Space(size, lambda: iter(())) for size in sizes]
    assert split(spaces) == [[0], [1, 2, 3, 4]]
    assert split(spaces[1:2] + spaces[3:]) == [[0, 1, 2]]
    assert all(math.prod(sizes[i] for i in part) > BUDGET for part in split(spaces))


def course_with_locked(folder: Path, cases: dict) -> Path:
    """The course file of a course like this one (its files linked) whose locked cases are ``cases``."""
    raw = yaml.safe_load((ROOT / "course.yaml").read_text())
    raw["delivery"] = {"locked": "small.yaml"}
    (folder / "small.yaml").write_text(yaml.safe_dump(cases))
    for name in ("suites", "solutions", "exercises", "tokcourse", "translations"):
        (folder / name).symlink_to(ROOT / name)
    (folder / "course.yaml").write_text(yaml.safe_dump(raw | {"samples": []}))
    return folder / "course.yaml"


@pytest.mark.parametrize("exercise, name, call", [
    ("ex3_wordpiece", "one score", "wordpiece_score(2, 4, 5)"),  # 0.1: a ratio k/n, n at most 16
    ("ex5_parity", "a curve on four bytes", 'ratio_curve("abab", 3)'),  # [1.0, 0.5, 0.25, 0.25]
])
def test_a_case_too_small_to_hide_is_refused(tmp_path, exercise, name, call):
    course = course_with_locked(tmp_path, {exercise: [{"name": name, "calls": [call]}]})
    with pytest.raises(GraderError, match=f"too small to hide.*{name}.*structured guesses"):
        seal(load_course(course))


def test_canonical_encoding_ignores_what_equality_ignores():
    from collections import namedtuple

    point = namedtuple("Point", "x y")
    assert canonical(point(1, 2)) == canonical((1, 2))
    assert canonical({"b": 1, "a": 2}) == canonical({"a": 2, "b": 1})
    assert canonical({"x", "y", "z"}) == canonical({"z", "y", "x"})
    assert canonical(0.1 + 0.2) == canonical(0.3) and canonical(-0.0) == canonical(0.0)
    assert canonical(1) != canonical(1.0) != canonical(True)
    assert canonical([1, 2]) != canonical((1, 2)) and canonical(b"ab") != canonical("ab")
    assert digest("00" * 16, [1]) != digest("11" * 16, [1])


def test_public_suite_drops_hidden_and_reference_properties_only():
    source = '''import pytest
hidden = pytest.mark.hidden


@pytest.mark.points(1)
def test_kept(student):
    """kept"""


@hidden
@pytest.mark.points(2)
def test_secret(student):
    pass


@pytest.mark.points(1)
def test_differential(student, reference):
    pass


@pytest.mark.hidden
class TestHiddenClass:
    def test_inside(self, student):
        pass
'''
    text, removed = public_suite(source)
    assert removed == ["test_secret", "test_differential", "TestHiddenClass"]
    assert "def test_kept(student):" in text and "secret" not in text and "reference" not in text
    ast.parse(text)


def test_public_suite_keeps_only_what_the_kept_properties_reach():
    source = '''from __future__ import annotations

import math, re

import pytest
from hypothesis import example, given

SIZE = 3
SECRET_SIZE = 20_000  # the hidden run's size


def _helper(x):
    return math.floor(x) + SIZE


# the hidden run's helper
def _secret_helper(x):
    return re.escape(x)


def test_kept(student, tmp_path):
    assert _helper(1.5) == 4


@pytest.mark.hidden
@given(x=example)
def test_secret(student):
    assert _secret_helper(SECRET_SIZE)
'''
    text, removed = public_suite(source)
    assert removed == ["test_secret"]
    assert "from __future__ import annotations" in text and "import math\n" in text
    assert "def _helper(x):" in text and "SIZE = 3" in text and "def test_kept" in text
    for name in ("SECRET_SIZE", "_secret_helper", "hidden run", "re", "hypothesis", "pytest"):
        assert not re.search(rf"\b{name}\b", text), name
    ast.parse(text)


# Definitions of the suites and of the shared strategies that only left-out properties use.
HIDDEN_ONLY = {
    "suites/ex5_parity.py": ["CORPUS_CHARS", "CORPUS_MERGES"],
    "suites/ex3_wordpiece.py": ["_mean_len", "_expect_same_training"],
    "suites/ex2_special_tokens.py": ["_trained", "_trained_alike", "_learned_strings"],
    "tokcourse/grading/strategies.py": ["tie_texts", "overlap_tie_texts", "single_unit_word_texts"],
}


def identifiers(source: str) -> set[str]:
    """The names a module's code defines and reads (not its comments and strings)."""
    tree = ast.parse(source)
    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            | {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))})


def test_the_release_ships_no_definition_only_left_out_properties_reach(release):
    for relative, names in HIDDEN_ONLY.items():
        original, shipped = identifiers((ROOT / relative).read_text()), identifiers((release / relative).read_text())
        assert set(names) <= original and not set(names) & shipped, relative
    course = load_course(release / "course.yaml")
    shipped = ([course.path(e.suite).read_text() for e in course.exercises]
               + [(release / "tokcourse/grading/strategies.py").read_text()])
    for text in shipped:
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.Assign)) and not getattr(node, "name", "").startswith("test"):
                name = node.name if isinstance(node, ast.FunctionDef) else node.targets[0].id
                uses = sum(len(re.findall(rf"\b{name}\b", other)) for other in shipped)
                assert uses > 1, f"{name} is shipped but nothing uses it"


def test_the_check_reads_the_stubs_the_release_ships_not_the_students_edits(release, tmp_path):
    """The graded functions' signatures and the docstring examples come from the release's ``stubs/``:
    a student's own helpers and edits of the package do not change what the check asks of them."""
    from autograder.signatures import docstring_examples, graded_functions

    edited = load_course(as_student(release, tmp_path / "student") / "course.yaml")
    course = load_course(ROOT / "course.yaml")
    for exercise in course.exercises:
        assert graded_functions(edited, exercise.module) == graded_functions(course, exercise.module)
        assert docstring_examples(edited, exercise.module) == docstring_examples(course, exercise.module)



@pytest.mark.parametrize("module, build, step", [(release_module, "build_release", "student_readme"),
                                                 (nbgrader_course, "build_nbgrader_course", "_config")])
def test_a_delivery_that_fails_leaves_nothing_behind_to_block_the_next(tmp_path, monkeypatch, module, build, step):
    """A release, or an nbgrader course, is built beside --out and moved into place at the end: a
    build that fails half-way leaves no half-built folder, so the same command runs again as it
    first did; an empty folder made for it beforehand keeps its permissions."""
    course = load_course(TOY)
    out = tmp_path / "delivery"

    def failing(course):
        raise GraderError(f"{step} failed")

    monkeypatch.setattr(module, step, failing)
    with pytest.raises(GraderError, match=step):
        getattr(module, build)(course, out)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    out.mkdir(mode=0o700)  # made private beforehand: it stays so
    getattr(module, build)(course, out)
    assert out.stat().st_mode & 0o777 == 0o700
    assert list(tmp_path.iterdir()) == [out] and (out / "course.yaml" if module is release_module
                                                  else out / "nbgrader_config.py").is_file()
