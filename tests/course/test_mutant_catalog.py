"""The property suites against the catalog (``tests/course/catalog.py``): every plausible mistake
loses points on the property named after it, every correct alternative gets full marks, the
reference gets full marks and the stubs get nothing ("not implemented yet" everywhere).

Each submission is built once and graded once, in two worker processes (a grading runs a
nested pytest session and loads the course's hypothesis profile, which should not leak into
this session).
"""

import multiprocessing
import re
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tests.course.catalog import (
    ALTERNATIVES,
    ALTERNATIVES_DIR,
    MUTANTS,
    ROOT,
    build_alternative,
    build_mutant,
    build_reference,
    build_stubs,
    grade,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow, pytest.mark.xdist_group(__name__)]

WORKERS = 2


def _points():
    from autograder.config import load_course

    return {e.module: e.points for e in load_course(ROOT / "course.yaml").exercises}


@pytest.fixture(scope="module")
def graded():
    """``name -> (results, seconds)`` or ``name -> exception`` for every submission."""
    folder = Path(tempfile.mkdtemp(prefix="catalog-"))
    folder.chmod(0o755)
    jobs, outcome = {}, {}
    try:
        builds = [("reference", build_reference, (), None), ("stubs", build_stubs, (), None)]
        builds += [(f"alternative:{name}", build_alternative, (name,), exercises) for name,
                   exercises in ALTERNATIVES.items()]
        builds += [(f"mutant:{m.exercise}:{m.name}", build_mutant, (m,), [m.exercise]) for m in MUTANTS]
        for index, (name, build, args, exercises) in enumerate(builds):
            try:
                jobs[name] = (str(build(folder / f"s{index}", *args)), exercises)
            except AssertionError as error:  # a stale mutation: reported by its own test
                outcome[name] = error
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=WORKERS, mp_context=context) as pool:
            # the slowest gradings (whole submissions) first, so the two workers finish together
            futures = {name: pool.submit(grade, path, exercises) for name, (path, exercises) in jobs.items()}
            for name, future in futures.items():
                try:
                    outcome[name] = future.result()
                except Exception as error:  # noqa: BLE001 - reported by the submission's test
                    outcome[name] = error
        yield outcome
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _results(graded, name):
    outcome = graded[name]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome[0]


def _scores(results):
    scores = {}
    for r in results:
        got, total = scores.get(r["exercise"], (0, 0))
        scores[r["exercise"]] = (got + r["score"], total + r["points"])
    return scores


def _failures(results):
    return "\n".join(f"  {r['exercise']}.{r['name']}: {r['output']}" for r in results if not r["passed"])


def test_reference_scores_full_marks(graded):
    results = _results(graded, "reference")
    points = _points()
    assert _scores(results) == {module: (p, p) for module, p in points.items()}, _failures(results)


def test_stubs_score_zero_not_implemented_everywhere(graded):
    results = _results(graded, "stubs")
    assert results and all(r["score"] == 0 for r in results)
    missing = [r["name"] for r in results if "not implemented yet" not in r["output"]]
    assert not missing, f"properties whose feedback does not say 'not implemented yet': {missing}"


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_alternative_scores_full_marks(graded, name):
    results = _results(graded, f"alternative:{name}")
    points = _points()
    assert _scores(results) == {m: (points[m], points[m]) for m in ALTERNATIVES[name]}, _failures(results)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m.exercise}:{m.name}" for m in MUTANTS])
def test_mutant_fails_the_property_named_after_its_mistake(graded, mutant):
    results = _results(graded, f"mutant:{mutant.exercise}:{mutant.name}")
    names = {r["name"] for r in results}
    assert mutant.fails in names, f"{mutant.fails} is not a property of {mutant.exercise}: {sorted(names)}"
    named = next(r for r in results if r["name"] == mutant.fails)
    assert not named["passed"], (f"{mutant.name} passed {mutant.fails}; the properties it failed:\n"
                                 f"{_failures(results) or '  none'}")
    got, total = _scores(results)[mutant.exercise]
    assert got < total


@pytest.mark.parametrize("mutant", MUTANTS, ids=[f"{m.exercise}:{m.name}" for m in MUTANTS])
def test_mutant_fails_only_properties_that_name_its_mistake(graded, mutant):
    """One bug, one reason: a mistake fails the property named after it and those it lists as naming
    its rule too (``also``: a worked example it changes, a comparison with the reference), no other."""
    results = _results(graded, f"mutant:{mutant.exercise}:{mutant.name}")
    others = sorted(r["name"] for r in results if not r["passed"] and r["name"] not in {mutant.fails, *mutant.also})
    assert not others, f"{mutant.name} also failed {others}:\n{_failures(results)}"


def test_each_mutant_changes_its_own_exercise_alone():
    """A mistake in one exercise's module can cost points on that exercise only (no shared module)."""
    shared = [m.name for m in MUTANTS if m.file != f"{m.exercise}.py"]
    assert not shared, f"mutants of a module other exercises import too: {shared}"
    another_exercise = re.compile(r"^\s*from\s+\.\s*(?:import\s+)?(ex\d\w*)", re.M)
    imports = []
    for base in {m.base for m in MUTANTS}:
        folder = ALTERNATIVES_DIR / base / "exercises" if base else ROOT / "solutions"
        imports += [(module, name) for module in folder.glob("ex*.py")
                    for name in another_exercise.findall(module.read_text(encoding="utf-8"))]
    assert not imports, f"exercise modules that import another exercise's: {imports}"


def test_catalog_covers_every_exercise_three_times():
    counts = {}
    for mutant in MUTANTS:
        counts[mutant.exercise] = counts.get(mutant.exercise, 0) + 1
    assert set(counts) == set(_points()) and min(counts.values()) >= 3, counts
    assert len({(m.exercise, m.name) for m in MUTANTS}) == len(MUTANTS), "mutant names must be unique"
