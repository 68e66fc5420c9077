"""The four gaps a blind student found in the suites, each planted in the reference and
graded: every one now loses points where it should, on a property a student can see, and once.

1. ``encode(..., add_eos=1)`` was accepted: no property passed an int where a bool is expected.
2. A ``removal_loss`` that pops each piece from the caller's ``logprobs`` and puts it back (same
   values, another order) lost no point on ``removal_loss``.
3. A Viterbi with the wrong tie-break passed every public ex6 property.
4. A ``train`` that does not weight pairs by pre-token frequency failed three properties, two of
   them about rules it keeps.

Gradings run in worker processes, as in ``tests/course/test_mutant_catalog.py``.
"""

import multiprocessing
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tests.course.catalog import MUTANTS, Mutant, build_mutant, grade

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group(__name__)]

ADD_EOS_ONE = Mutant("ex2_special_tokens", "add_eos_one_taken_for_true", "ex2_special_tokens.py", [
    ("        if not isinstance(add_eos, bool):\n", "        if not isinstance(add_eos, int):\n"),
], fails="test_bad_argument_types_raise_type_errors_by_the_shared_rules")
REORDERS_LOGPROBS = Mutant("ex6_unigram", "removal_loss_reorders_logprobs", "ex6_unigram.py", [
    ("    _check_logprobs(logprobs)\n    return _losses(word_counts, logprobs)\n",
     "    _check_logprobs(logprobs)\n    losses = _losses(word_counts, logprobs)\n"
     "    for piece in [p for p in logprobs if len(p) > 1]:  # each looked at alone, then put back\n"
     "        logprobs[piece] = logprobs.pop(piece)\n    return losses\n"),
], fails="test_removal_loss_is_the_fall_of_the_viterbi_likelihood")
WRONG_TIE_BREAK = next(m for m in MUTANTS if m.name == "viterbi_ties_to_shortest_last_piece")
UNWEIGHTED_TRAINING = next(m for m in MUTANTS if m.name == "pretokens_not_weighted_by_frequency")


@pytest.fixture(scope="module")
def graded():
    """``mutant name -> results`` for the four gaps, each graded on its own exercise."""
    folder = Path(tempfile.mkdtemp(prefix="gaps-"))
    folder.chmod(0o755)
    try:
        mutants = [ADD_EOS_ONE, REORDERS_LOGPROBS, WRONG_TIE_BREAK, UNWEIGHTED_TRAINING]
        paths = {m.name: (str(build_mutant(folder / m.name, m)), m.exercise) for m in mutants}
        with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {name: pool.submit(grade, path, [exercise]) for name, (path, exercise) in paths.items()}
            yield {name: future.result()[0] for name, future in futures.items()}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def failed(results, public_only=False):
    return {r["name"]: r for r in results if not r["passed"] and not (public_only and r["hidden"])}


def test_add_eos_of_one_fails_a_public_property(graded):
    failures = failed(graded[ADD_EOS_ONE.name], public_only=True)
    assert list(failures) == [ADD_EOS_ONE.fails]
    assert "encode('ab', add_eos=0) (0 where a bool is expected: 0 and 1 are not one)" in \
        failures[ADD_EOS_ONE.fails]["output"]


def test_reordering_the_callers_logprobs_fails_removal_loss_naming_the_argument_and_the_rule(graded):
    output = failed(graded[REORDERS_LOGPROBS.name])[REORDERS_LOGPROBS.fails]["output"]
    assert "changed its argument logprobs (the same keys, in another order): a function must leave the arguments " \
           "it is given as they were" in output


def test_a_viterbi_with_the_wrong_tie_break_fails_a_public_property(graded):
    assert list(failed(graded[WRONG_TIE_BREAK.name], public_only=True)) == [WRONG_TIE_BREAK.fails]


def test_training_without_pretoken_frequency_fails_the_training_property_alone(graded):
    assert list(failed(graded[UNWEIGHTED_TRAINING.name])) == [UNWEIGHTED_TRAINING.fails]
