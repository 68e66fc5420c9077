"""A grade put together from parts is the grade of the whole, caps included; what a grader
process answers beyond results.json."""

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from autograder.config import Limits, load_course
from autograder.results import Grade, PropertyResult
from tests.conftest import COURSE

TEXTS = st.text(alphabet="ab\n", max_size=400)


@st.composite
def graded_parts(draw) -> tuple[list[Grade], Limits]:
    """A submission's grade in parts (an exercise each, the same notes in each) and the limits."""
    notes = tuple(draw(st.lists(TEXTS, min_size=1, max_size=3)))
    parts = []
    for exercise in range(draw(st.integers(1, 4))):
        outputs = draw(st.lists(TEXTS, min_size=1, max_size=4))
        parts.append(Grade(tuple(PropertyResult(exercise=f"ex{exercise}", name=f"p{index}", points=1, score=0,
                                                passed=False, hidden=False, output=output)
                                 for index, output in enumerate(outputs)), notes, 1.0))
    limits = Limits(feedback_chars=draw(st.integers(200, 500)), report_chars=draw(st.integers(1000, 3000)))
    return parts, limits


@given(graded_parts())
def test_capping_parts_then_the_whole_cuts_where_the_whole_would(case):
    """Each part's reports are capped before they are joined (a part's ``results.json``); the
    joined grade, capped again, is the whole's, capped once."""
    parts, limits = case
    whole = Grade.joined(parts, 1.0).capped(limits)
    assert Grade.joined([part.capped(limits) for part in parts], 1.0).capped(limits) == whole
    assert [r.title for r in whole.results] == [r.title for part in parts for r in part.results]
    assert whole.notes_text == parts[0].capped(limits).notes_text  # the notes once, not once a part


def test_a_result_stopped_by_the_time_limit_says_so_to_the_batch_alone():
    """``timed_out`` comes back in a grader process's answer; ``results.json`` is the same without it."""
    result = PropertyResult(exercise="ex1_merge_tracing", name="p", points=2, score=0, passed=False, hidden=False,
                            output="timed out", timed_out=True)
    grade = Grade((result,), ("a note",), 1.0)
    assert Grade.from_plain(grade.to_plain()) == grade
    course = load_course(COURSE)
    untimed = replace(grade, results=(replace(result, timed_out=False),))
    assert grade.to_gradescope(course) == untimed.to_gradescope(course)
