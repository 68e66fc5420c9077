"""The property suites against the null submissions (``tests/course/nulls.py``): a submission with
no tokenizer logic at all (empty answers, constants, echoes, the docstrings' worked examples
hard-coded, self-consistent fakes) earns no more than the points for argument checking, and
one that raises a single exception class that is every built-in error earns nothing.

The rule for argument checking: a property is about bad arguments when its name contains
``bad_argument``, ``rejects`` or ``raise`` (``test_bad_arguments_raise_errors_naming_them``,
``test_token_tree_rejects_unknown_id``, ``test_bad_ids_and_lengths_raise_value_error``,
...). The nulls but ``every_error`` check their arguments exactly like the reference, so they may earn those
properties' points, per exercise, and nothing else. The figure and each null's score per
exercise are printed (``pytest -s`` shows them).

The nulls are built once and graded once, in two worker processes, as in
``tests/course/test_mutant_catalog.py``.
"""

import ast
import multiprocessing
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.course.catalog import grade
from tests.course.nulls import EVERY_ERROR, EXERCISES, KINDS, build_null

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow, pytest.mark.xdist_group(__name__)]

WORKERS = 2
VALIDATION_WORDS = ("bad_argument", "rejects", "raise")


def _is_validation(name: str) -> bool:
    return any(word in name for word in VALIDATION_WORDS)


def _suite_points() -> dict[str, dict[str, int]]:
    """``exercise -> {property name: points}``, read from the suites' ``@points(n)``."""
    from autograder.config import load_course

    found = {}
    for exercise in load_course(ROOT / "course.yaml").exercises:
        tree = ast.parse(Path(exercise.suite).read_text(encoding="utf-8"))
        properties = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                for decorator in node.decorator_list:
                    if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "points":
                        properties[node.name] = ast.literal_eval(decorator.args[0])
        found[exercise.module] = properties
    return found


def validation_points() -> dict[str, int]:
    """The points of each exercise's argument-checking properties (the module docstring's rule)."""
    return {exercise: sum(p for name, p in properties.items() if _is_validation(name))
            for exercise, properties in _suite_points().items()}


@pytest.fixture(scope="module")
def graded():
    """``kind -> results`` or ``kind -> exception`` for every null submission."""
    folder = Path(tempfile.mkdtemp(prefix="nulls-"))
    folder.chmod(0o755)
    outcome = {}
    try:
        jobs = {kind: str(build_null(folder / kind, kind)) for kind in KINDS}
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=WORKERS, mp_context=context) as pool:
            futures = {kind: pool.submit(grade, path) for kind, path in jobs.items()}
            for kind, future in futures.items():
                try:
                    outcome[kind] = future.result()[0]
                except Exception as error:  # noqa: BLE001 - reported by the null's test
                    outcome[kind] = error
        allowed = validation_points()
        print(f"\nargument checking alone: {sum(allowed.values())} points ({allowed})")
        for kind, results in outcome.items():
            if not isinstance(results, BaseException):
                scores = _scores(results)
                print(f"null {kind:<9} {sum(scores.values()):g} points:",
                      ", ".join(f"{e} {scores.get(e, 0):g}" for e in EXERCISES))
        yield outcome
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _scores(results) -> dict[str, float]:
    scores: dict[str, float] = {}
    for r in results:
        scores[r["exercise"]] = scores.get(r["exercise"], 0) + r["score"]
    return scores


def test_validation_rule_names_properties_in_every_suite_but_not_most_points():
    # each suite: one point for the shared type rules (from the signatures), one or two for its values
    allowed = validation_points()
    assert set(allowed) == set(EXERCISES)
    assert 0 < sum(allowed.values()) <= 15, allowed


@pytest.mark.parametrize("kind", KINDS)
def test_null_submission_earns_argument_checking_points_only(graded, kind):
    results = graded[kind]
    if isinstance(results, BaseException):
        raise results
    assert {r["exercise"] for r in results} == set(EXERCISES)
    allowed = validation_points()
    earned = [f"  {r['exercise']}.{r['name']} ({r['score']:g} points)" for r in results
              if r["score"] > 0 and not _is_validation(r["name"])]
    assert not earned, f"the null submission '{kind}' earned points for no logic:\n" + "\n".join(earned)
    scores = _scores(results)
    over = {e: (scores.get(e, 0), allowed[e]) for e in EXERCISES if scores.get(e, 0) > allowed[e]}
    assert not over, f"'{kind}' scores more than argument checking alone (score, allowed): {over}"


def test_one_error_class_that_is_every_error_earns_nothing(graded):
    """A class deriving from ValueError, TypeError, KeyError and IndexError, raised for every call
    with a message naming every parameter, checks no argument: a property that expects the error
    a rule names does not take it, since it is every other error too."""
    results = graded[EVERY_ERROR]
    if isinstance(results, BaseException):
        raise results
    earned = [f"  {r['exercise']}.{r['name']} ({r['score']:g} points)" for r in results if r["score"] > 0]
    assert not earned, "one exception class that is every error earned points:\n" + "\n".join(earned)
