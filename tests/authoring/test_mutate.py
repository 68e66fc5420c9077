"""``python -m autograder mutate``: mutants of the reference solutions, graded by their suites.

The fast tests hold the parts that decide what is graded and how it is reported (the mutants
cosmic-ray makes and how they are named, the sample, the equivalents list). The slow ones run
the command: on the toy course, where a planted survivor must be reported with its diff until
the course lists it, and on the tokenizer course, a sample of 20 mutants spread over the
exercises with a fixed seed, all of which the suites must kill or the course must list.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from autograder.authoring.mutate import Equivalent, Mutant, load_equivalents, made, mutants_of, places_of, sample
from autograder.config import CourseConfigError, load_course
from tests.conftest import COURSE, ROOT, autograder

TOY = ROOT / "tests" / "fixtures" / "toy_course"
GRADED = ["ex1_merge_tracing", "ex2_special_tokens", "ex3_wordpiece", "ex4_multilingual", "ex5_parity", "ex6_unigram"]
SMOKE_SIZE, SMOKE_SEED = 20, 20261130


def _toy(tmp_path: Path, extra_line: str = "", equivalents: str | None = None) -> Path:
    """A copy of the toy course, its answer with ``extra_line`` added, and an equivalents list."""
    course = tmp_path / "toy_course"
    shutil.copytree(TOY, course, ignore=shutil.ignore_patterns("__pycache__"))
    answer = course / "answers" / "ex_sum.py"
    answer.write_text(answer.read_text(encoding="utf-8") + extra_line, encoding="utf-8")
    if equivalents is not None:
        (course / "equivalents.yaml").write_text(equivalents, encoding="utf-8")
        text = (course / "course.yaml").read_text(encoding="utf-8")
        (course / "course.yaml").write_text(text + "\nmutation:\n  equivalents: equivalents.yaml\n", encoding="utf-8")
    return course


def _mutant(module: str, operator: str, line: str, mutated: str, occurrence: int = 0) -> Mutant:
    return Mutant(module, operator, occurrence, 1, line, mutated, "", "")


# -- the mutants and their names -------------------------------------------------------------


def test_mutants_come_from_cosmic_ray_and_are_named_by_their_line(tmp_path):
    course = load_course(_toy(tmp_path, "\n\nLIMIT = 10\n") / "course.yaml")
    mutants = mutants_of(course, "ex_sum")
    assert mutants and all(m.operator.startswith("core/") for m in mutants)
    numbers = [m for m in mutants if m.line == "LIMIT = 10"]
    assert {m.operator for m in numbers} == {"core/NumberReplacer"}
    assert {m.mutated for m in numbers} == {"LIMIT = 11", "LIMIT = 9"}
    for m in numbers:
        assert m.source.count("\n") == course.solutions_path().joinpath("ex_sum.py").read_text().count("\n")
        assert "-LIMIT = 10" in m.diff and f"+{m.mutated}" in m.diff
    assert len({(m.operator, m.occurrence) for m in mutants}) == len(mutants)
    assert mutants == mutants_of(course, "ex_sum")  # the same list on every run


def test_a_sample_draws_from_the_places_the_mutants_it_would_draw_from_the_mutants(tmp_path):
    """A sampled run makes only the mutants it grades: it draws from the places, which must be
    the mutants' own, one for one and in order, for the draw to be the same."""
    course = load_course(_toy(tmp_path, "\n\nLIMIT = 10\n") / "course.yaml")
    named = [(m.module, m.operator, m.occurrence, m.line_number, m.line) for m in mutants_of(course, "ex_sum")]
    places = places_of(course, "ex_sum")
    assert [(p.module, p.operator, p.occurrence, p.line_number, p.line) for p in places] == named
    drawn = sample({"ex_sum": places}, 3, 7)["ex_sum"]
    assert [made(course, place) for place in drawn] == sample({"ex_sum": mutants_of(course, "ex_sum")}, 3, 7)["ex_sum"]


def test_a_mutant_keeps_its_name_when_other_lines_move(tmp_path):
    before = {(m.operator, m.line, m.mutated) for m in mutants_of(load_course(_toy(tmp_path) / "course.yaml"),
                                                                      "ex_sum")}
    moved = tmp_path / "moved"
    moved.mkdir()
    course = load_course(_toy(moved) / "course.yaml")
    answer = course.solutions_path() / "ex_sum.py"
    answer.write_text('"""Moved down."""\n\n\n' + answer.read_text(encoding="utf-8"), encoding="utf-8")
    after = {(m.operator, m.line, m.mutated) for m in mutants_of(course, "ex_sum")}
    assert before == after


# -- the sample ------------------------------------------------------------------------------


def _pool(sizes: dict[str, int]) -> dict[str, list[Mutant]]:
    return {module: [_mutant(module, "core/X", f"line {i}", "", i) for i in range(size)]
            for module, size in sizes.items()}


def test_a_sample_is_spread_over_the_modules_in_proportion_and_fixed_by_its_seed():
    pool = _pool({"a": 150, "b": 290, "c": 270, "d": 130, "e": 100})
    drawn = sample(pool, 40, 7)
    counts = {module: len(found) for module, found in drawn.items()}
    assert sum(counts.values()) == 40
    assert counts == {"a": 6, "b": 12, "c": 12, "d": 6, "e": 4}
    assert drawn == sample(pool, 40, 7)
    assert drawn != sample(pool, 40, 8)
    assert all(set(drawn[m]) <= set(pool[m]) for m in pool)


def test_a_small_sample_still_reaches_every_module_and_a_large_one_is_everything():
    pool = _pool({"big": 500, "small": 3, "tiny": 1})
    drawn = sample(pool, 5, 1)
    assert {m: len(found) for m, found in drawn.items()} == {"big": 3, "small": 1, "tiny": 1}
    assert sample(pool, 10_000, 1) == pool


# -- the equivalents list --------------------------------------------------------------------


def test_an_entry_matches_by_module_operator_and_line_and_by_the_change_when_given():
    mutant = _mutant("ex_sum", "core/NumberReplacer", "LIMIT = 10", "LIMIT = 11")
    entry = {"module": "ex_sum", "operator": "core/NumberReplacer", "line": "  LIMIT = 10 ", "reason": "unused"}
    assert Equivalent(**entry).matches(mutant)
    assert Equivalent(**entry, mutated="LIMIT = 11").matches(mutant)
    assert not Equivalent(**entry, mutated="LIMIT = 9").matches(mutant)
    assert not Equivalent(**{**entry, "operator": "core/AddNot"}).matches(mutant)
    assert not Equivalent(**{**entry, "module": "other"}).matches(mutant)
    assert not Equivalent(**{**entry, "line": "LIMIT = 100"}).matches(mutant)


def test_an_entry_without_a_reason_or_with_an_unknown_key_is_refused(tmp_path):
    course = load_course(_toy(tmp_path, equivalents="- {module: ex_sum, operator: core/AddNot, line: x}\n")
                         / "course.yaml")
    with pytest.raises(CourseConfigError, match=r"entry 0: reason: Field required"):
        load_equivalents(course)
    (course.root / "equivalents.yaml").write_text(
        "- {module: ex_sum, operator: core/AddNot, line: x, reason: y, why: z}\n", encoding="utf-8")
    with pytest.raises(CourseConfigError, match=r"entry 0: why: Extra inputs"):
        load_equivalents(course)


def test_an_equivalents_file_that_is_missing_is_named(tmp_path):
    course = _toy(tmp_path, equivalents="[]\n")
    (course / "equivalents.yaml").unlink()
    with pytest.raises(CourseConfigError, match="mutation.equivalents: no such file 'equivalents.yaml'"):
        load_equivalents(load_course(course / "course.yaml"))


def test_every_listed_equivalent_of_the_course_has_a_reason_and_names_an_exercise():
    course = load_course(COURSE)
    entries = load_equivalents(course)
    modules = {e.module for e in course.exercises}
    assert entries, "the course keeps its equivalent mutants in mutation.equivalents"
    assert all(e.module in modules and len(e.reason) >= 20 for e in entries)


# -- the command -----------------------------------------------------------------------------


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_survivor_is_shown_with_its_diff_until_the_course_lists_it(tmp_path):
    planted = "\n\nLIMIT = 10  # used nowhere: any change of it survives\n"
    course = _toy(tmp_path, planted, equivalents="[]\n")
    run = autograder("--course", str(course / "course.yaml"), "mutate", "ex_sum", "--jobs", "2")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "-LIMIT = 10" in run.stdout and "+LIMIT = 11" in run.stdout and "+LIMIT = 9" in run.stdout
    assert "2 mutant(s) survived" in run.stdout
    row = re.search(r"│ ex_sum\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)", run.stdout)
    assert row is not None and int(row[1]) == int(row[2]) + 2 and row.group(3, 4, 5) == ("2", "0", "0"), run.stdout

    (course / "equivalents.yaml").write_text(
        "- module: ex_sum\n  operator: core/NumberReplacer\n  line: 'LIMIT = 10  # used nowhere: any change of it"
        " survives'\n  reason: the name is used nowhere, so no call can tell its value\n", encoding="utf-8")
    run = autograder("--course", str(course / "course.yaml"), "mutate", "ex_sum", "--jobs", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    row = re.search(r"│ ex_sum\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)", run.stdout)
    assert row is not None and row.group(3, 4, 5) == ("0", "2", "0"), run.stdout
    assert "LIMIT" not in run.stdout


@pytest.mark.sandbox
def test_a_grader_process_that_fails_says_why_without_its_log(tmp_path):
    """A suite that fails only in the grader process (the command's own check of the course loads
    it fine) stops that process: the command names the error it stopped on, since the mutant's
    folder, log and all, is gone by then."""
    course = _toy(tmp_path)
    suite = course / "suites" / "ex_sum.py"
    suite.write_text(suite.read_text(encoding="utf-8") + "\nimport sys\nif sys.argv[0].endswith('serve.py'):\n"
                     "    raise RuntimeError('the suite is broken')\n", encoding="utf-8")
    run = autograder("--course", str(course / "course.yaml"), "mutate", "ex_sum")
    said = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == 2 and "grading the unmutated solution of ex_sum: grader failed (" in said, said
    assert "the suite is broken" in said and "grader.log" not in said, said


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_sample_of_the_course_s_mutants_is_all_killed_or_listed():
    """The sampled smoke test of ``make test``; ``make mutation`` grades every mutant."""
    run = autograder("mutate", *GRADED, "--sample", str(SMOKE_SIZE), "--seed", str(SMOKE_SEED), "--jobs", "2")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    total = re.search(r"│ total\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)\D+(\d+)", run.stdout)
    assert total is not None and total.group(1, 3) == (str(SMOKE_SIZE), "0"), run.stdout
    for module in GRADED:
        assert re.search(rf"│ {module}\D+[1-9]\d* of \d+", run.stdout), f"no mutant of {module}:\n{run.stdout}"
