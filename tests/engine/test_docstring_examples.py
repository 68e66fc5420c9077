"""Every ``>>>`` example of every stub is checked: claimed by a public property
(``@pytest.mark.examples``, run by :mod:`autograder.engine.examples`) or a locked case's call, and it
holds on the reference (and so the docstrings, English and Persian, agree with it)."""

import ast
import importlib
import warnings
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.engine.examples import Claim, agrees, run_examples, shown_value
from autograder.engine.run import on_path
from autograder.locked.cases import load_cases
from autograder.locked.seal import reference_support
from autograder.signatures import Example, docstring_examples, normalized, read_examples, stub_path
from autograder.translation import module_source
from tests.conftest import ROOT

COURSE = load_course(ROOT / "course.yaml")
EXERCISES = [e.module for e in COURSE.exercises]


def claims(exercise: str) -> dict[str, list[tuple[str, dict]]]:
    """``property -> [(example source, the marker's keywords)]`` for the public properties of the
    exercise's suite that claim docstring examples (read from its markers)."""
    with on_path(COURSE.root), warnings.catch_warnings():
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)  # the grading plugin's marks
        suite = importlib.import_module(f"suites.{exercise}")
    found: dict[str, list[tuple[str, dict]]] = {}
    for name, function in vars(suite).items():
        marks = getattr(function, "pytestmark", [])
        if name.startswith("test_") and not any(mark.name == "hidden" for mark in marks):
            for mark in (m for m in marks if m.name == "examples"):
                found.setdefault(name, []).extend((normalized(source), mark.kwargs) for source in mark.args)
    return found


def locked_calls(exercise: str) -> set[str]:
    return {normalized(step.text) for case in load_cases(COURSE) if case.exercise == exercise for step in case.calls}


def unchecked(examples: list[Example], claimed: set[str], locked: set[str]) -> list[str]:
    """The worked examples (those that show an answer) that no public property claims and no locked case calls."""
    return [example.source for example in examples if example.checked and example.source not in claimed | locked]


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_worked_example_is_checked_by_a_public_property_or_a_locked_case(exercise):
    claimed = {source for pairs in claims(exercise).values() for source, _ in pairs}
    assert not unchecked(docstring_examples(COURSE, exercise), claimed, locked_calls(exercise))


def test_an_example_a_stub_gains_is_unchecked_until_a_property_claims_it():
    source = stub_path(COURSE, "ex6_unigram").read_text(encoding="utf-8")
    grown = source.replace('    >>> removal_loss({"ab": 1, "aba": 1}, logprobs)',
                           '    >>> viterbi_segment("ba", logprobs)\n    ([\'ba\'], -3.0)\n'
                           '    >>> removal_loss({"ab": 1, "aba": 1}, logprobs)', 1)
    assert grown != source
    claimed = {source for pairs in claims("ex6_unigram").values() for source, _ in pairs}
    assert unchecked(read_examples(grown), claimed, locked_calls("ex6_unigram")) == ["viterbi_segment('ba', logprobs)"]


@pytest.mark.parametrize("exercise", EXERCISES)
def test_claimed_examples_hold_on_the_reference(exercise):
    """What the engine runs on a student's code, run on the reference: the docstrings' answers are its answers."""
    support = reference_support(COURSE)
    with on_path(COURSE.root):
        reference = importlib.import_module(f"{COURSE.solutions}.{exercise}")
        for sources in claims(exercise).values():
            for source, keywords in sources:
                run_examples(COURSE, exercise, Claim((source,), **keywords), reference, support)


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_persian_docstrings_show_the_same_examples(exercise):
    persian = load_course(ROOT / "course.yaml").model_copy(update={"language": "fa"})
    path = stub_path(COURSE, exercise)
    assert read_examples(module_source(persian, path)) == read_examples(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("want, answer, holds", [
    ("(['ab'], -4.0)", (["ab"], -4.0), True),
    ("(['ab'], -4.0)", (["a", "b"], -4.0), False),
    ("-3.3068528194400546", -3.3068528194400542, True),  # floats within 1e-9: a docstring shows one sum
    ("{'ab': 0.0, 'ba': 1.0}", {"ba": 1.0, "ab": 0.0}, False),  # a dict's order is part of its answer
    ("[1, 2]", [1, 2.0], False),  # an int is no float
    ("MergeStep(rank=0, pair=(116, 104), token=b'th')", (0, (116, 104), b"th"), True),  # a named tuple's repr
])
def test_an_answer_agrees_with_what_the_docstring_shows(want, answer, holds):
    assert agrees(answer, shown_value(ast.parse(want, mode="eval").body)) is holds


def test_a_claim_of_an_example_the_stub_lacks_is_a_broken_suite(tmp_path: Path):
    from autograder.engine.examples import claimed
    from autograder.errors import GraderError

    with pytest.raises(GraderError, match="does not have"):
        claimed(COURSE, "ex6_unigram", ("viterbi_segment('abc', logprobs)",))



def test_an_example_the_student_s_answers_break_fails_that_example_not_the_grading():
    """``steps[0]`` of an empty list: the docstring's own code failed on the student's answer, which
    is that example's failure, as a wrong answer is; the student's code raising stays theirs."""
    from autograder.errors import StudentError

    def student(trace_merges):
        return type("Submission", (), {"trace_merges": staticmethod(trace_merges)})

    def raising(text, num_merges):
        raise StudentError(f"trace_merges({text!r}, {num_merges})", {"type": "ZeroDivisionError"})

    claim, support = Claim(("steps[0]",)), reference_support(COURSE)
    with pytest.raises(AssertionError, match=r"could not run on your answers:(.|\n)*IndexError"):
        run_examples(COURSE, "ex1_merge_tracing", claim, student(lambda text, num_merges: []), support)
    with pytest.raises(StudentError, match="ZeroDivisionError"):
        run_examples(COURSE, "ex1_merge_tracing", claim, student(raising), support)
