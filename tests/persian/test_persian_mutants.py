"""The suites' own failure messages as a Persian student reads them: one-bug variants of the
reference (tests/course/catalog.py), one an exercise, graded in Persian, each failing where its bug is
with a feedback.md that has no English prose (tests/persian/prose.py), the suites' messages included.
Each is graded in a process of its own, as a grader process grades: never inside this pytest."""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.engine.report_files import write_reports
from autograder.engine.run import Scope, grade_staged
from autograder.intake.staging import stage
from autograder.translation import title
from tests.conftest import ROOT
from tests.course.catalog import MUTANTS, build_mutant
from tests.persian.prose import english_prose

COURSE = load_course(ROOT / "course.yaml")
FARSI = COURSE.model_copy(update={"language": "fa"})
# the course as a Persian channel ships it: its language, and its titles in Persian
PERSIAN = FARSI.model_copy(update={"title": title(FARSI), "exercises": [
    e.model_copy(update={"title": title(FARSI, e)}) for e in COURSE.exercises]})
# each fails a property whose failure is a message of its suite's own (say), not only the engine's
CHOSEN = ["render_trace_omits_length", "pairs_cross_pretoken_boundaries", "merge_keeps_right_continuation_prefix",
          "render_table_floats_unformatted", "training_stops_when_best_count_is_one", "prune_single_characters_too"]
BY_NAME = {m.name: m for m in MUTANTS if m.base is None}


def test_one_variant_of_each_exercise_is_chosen():
    assert sorted(BY_NAME[name].exercise for name in CHOSEN) == sorted(e.module for e in COURSE.exercises)


def graded_in_persian(name: str, folder: str) -> tuple[dict[str, str], str]:
    """The failed properties' outputs and the feedback.md of mutant ``name`` graded in Persian
    on its own exercise; run in a process of its own."""
    mutant = BY_NAME[name]
    submission = build_mutant(Path(folder) / "submission", mutant)
    staged = stage(PERSIAN, submission)
    try:
        grade = grade_staged(PERSIAN, staged.root, staged.notes, Scope(exercises=[mutant.exercise]))
    finally:
        staged.remove()
    write_reports(PERSIAN, Path(folder) / "out", name, grade)
    failed = {r.name: r.output for r in grade.results if not r.passed}
    return failed, (Path(folder) / "out" / "feedback.md").read_text(encoding="utf-8")


@pytest.mark.sandbox
@pytest.mark.data  # ex4's variant is graded on the fetched corpora
@pytest.mark.slow
@pytest.mark.parametrize("name", CHOSEN)
def test_a_one_bug_variant_graded_in_persian_has_no_english_prose(name, tmp_path):
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        failed, feedback = pool.submit(graded_in_persian, name, str(tmp_path)).result()
    assert BY_NAME[name].fails in failed
    assert english_prose(feedback) == [], feedback
    assert english_prose("\n".join(failed.values())) == []
