"""What a student of a Persian course reads: feedback.md with its prose right to left and its code
left to right and intact, and the self-check's table aligned in a terminal."""

import re
from types import SimpleNamespace

import pytest
from rich.console import Console
from wcwidth import wcswidth

from autograder import bidi
from autograder.config import load_course
from autograder.delivery.translation import title
from autograder.errors import SandboxFailure, StudentError
from autograder.i18n import speaking
from autograder.plugin import _feedback, _reason
from autograder.proxy import not_implemented
from autograder.report import feedback_markdown, print_check
from autograder.results import LOCKED_PREFIX, Grade, PropertyResult
from autograder.suite import expect_equal
from tests.conftest import ROOT

ENGLISH = load_course(ROOT / "course.yaml")
# the course as a Persian channel ships it: its language, and its titles in Persian
PERSIAN = ENGLISH.model_copy(update={"language": "fa", "title": title(ENGLISH.model_copy(update={"language": "fa"})),
                                     "exercises": [e.model_copy(update={"title": title(ENGLISH.model_copy(
                                         update={"language": "fa"}), e)}) for e in ENGLISH.exercises]})
FALSIFYING = ["Falsifying example: test_merge(", "    ids=[1, 2, 1, 2],", "    pair=(1, 2),", ")"]
# the engine's English words that a Persian reader must not meet
ENGLISH_WORDS = re.compile(r"\b(Score|feedback for|passed|FAILED|hidden|expected|got|not implemented|graded this "
                           r"time|Where it was raised|What your code printed|Locked case|points|pass|still failing|"
                           r"exercise|Student code ran)\b")


def item(doc: str, name: str) -> SimpleNamespace:
    return SimpleNamespace(function=SimpleNamespace(__doc__=doc), originalname=name)


def grade_in(language: str) -> Grade:
    """A grade with a property of each kind, its texts written as grading in ``language`` writes them."""
    with speaking(language):
        wrong = AssertionError(_expected())
        wrong.add_note("\n".join(FALSIFYING))
        raised = StudentError("ex1_merge_tracing.merge([1, 2], (1, 2), 3)",
                              {"type": "ValueError", "mro": ["ValueError", "Exception", "BaseException", "object"],
                               "message": "bad id", "traceback": 'File "ex1_merge_tracing.py", line 3\n    raise'})
        outputs = {
            "test_merge": _feedback(item("Merging replaces each pair.", "test_merge"), wrong, False, 4000, "hi\n"),
            "test_raise": _feedback(item("Bad ids raise.", "test_raise"), raised, False, 4000),
            "test_hidden": _feedback(item("Ties break left.", "test_hidden"), wrong, True, 4000),
        }
        stub = not_implemented("ex1_merge_tracing.trace_merges")
        outputs["test_trace"] = _feedback(item("Traces.", "test_trace"), stub, False, 4000)
    results = (
        PropertyResult("ex1_merge_tracing", "test_ok", 2, 2, True, False, ""),
        PropertyResult("ex1_merge_tracing", "test_merge", 3, 0, False, False, outputs["test_merge"]),
        PropertyResult("ex1_merge_tracing", "test_raise", 1, 0, False, False, outputs["test_raise"]),
        PropertyResult("ex1_merge_tracing", "test_hidden", 4, 0, False, True, outputs["test_hidden"]),
        PropertyResult("ex1_merge_tracing", "test_trace", 2, 0, False, False, outputs["test_trace"], blocked=True),
        PropertyResult("ex1_merge_tracing", f"{LOCKED_PREFIX}a trace", 0, 0, False, False,
                       outputs["test_trace"], blocked=True),
    )
    return Grade(results, ("Student code ran in a sandbox: bwrap + landlock.",), 1.0)


def _expected() -> str:
    try:
        expect_equal([5, 5, 5], [1, 2, 1], "merge([1, 2, 1, 2], (1, 2), 5)")
    except AssertionError as error:
        return str(error)
    raise AssertionError("expect_equal passed unequal values")


def test_hidden_reasons_and_headlines_speak_persian():
    with speaking("fa"):
        assert _reason(AssertionError()) == "نتیجه‌ی نادرست"
        assert _reason(SandboxFailure("not_implemented", "")) == "هنوز نوشته نشده است"
        assert _expected() == "merge([1, 2, 1, 2], (1, 2), 5): انتظار [1, 2, 1] می‌رفت، ولی [5, 5, 5] به دست آمد"


def test_persian_feedback_reads_right_to_left_with_its_code_intact():
    markdown = feedback_markdown(PERSIAN, "sara", grade_in("fa"))
    assert markdown.startswith(f'<div dir="rtl">\n\n# {PERSIAN.title}: بازخورد sara\n')
    assert "**امتیاز: 2 از 20**\n\nاین بار فقط ex1_merge_tracing نمره‌دهی شد." in markdown
    # every fenced block is outside the right-to-left blocks, and every right-to-left block is closed
    blocks = re.split(r"^ *```.*?^ *```$", markdown, flags=re.M | re.S)
    for prose in blocks:
        assert prose.count('<div dir="rtl">') == prose.count("</div>")
    code = "\n".join(re.findall(r"^ *```text\n(.*?)^ *```$", markdown, flags=re.M | re.S))
    for line in FALSIFYING:  # the falsifying example, line for line, left to right
        assert f"  {line}\n" in code + "\n"
    assert "<div" not in code and "<span" not in code
    # code inside a Persian headline: in code spans, those with edges that would move kept left to right
    assert ('<span dir="ltr">`merge([1, 2, 1, 2], (1, 2), 5)`</span>: انتظار <span dir="ltr">`[1, 2, 1]`</span> '
            'می‌رفت، ولی <span dir="ltr">`[5, 5, 5]`</span> به دست آمد') in markdown
    assert "`ex1_merge_tracing.trace_merges` هنوز نوشته نشده است: `test_trace`, مورد قفل‌شده: `a trace`" in markdown
    assert "پنهان" not in markdown  # a hidden property that is not blocked shows its reason, not the word
    assert "نتیجه‌ی نادرست." in markdown
    assert not ENGLISH_WORDS.search(re.sub(r"`[^`]*`|```.*?```", "", markdown, flags=re.S))


def test_english_feedback_has_no_right_to_left_markup():
    markdown = feedback_markdown(ENGLISH, "sara", grade_in("en"))
    assert "dir=" not in markdown and "**Score: 2 / 20**" in markdown
    assert "ex1_merge_tracing.trace_merges is not implemented yet: `test_trace`, locked case: `a trace`" in markdown


def test_grades_do_not_depend_on_the_language():
    english, persian = grade_in("en"), grade_in("fa")
    assert [(t["name"], t["score"], t["max_score"], t["status"]) for t in english.to_gradescope(ENGLISH)["tests"]] \
        == [(t["name"], t["score"], t["max_score"], t["status"]) for t in persian.to_gradescope(PERSIAN)["tests"]]
    assert [r.unwritten for r in english.results] == [r.unwritten for r in persian.results]


@pytest.mark.parametrize("width", [80, 120])
def test_the_persian_self_check_table_stays_aligned(width):
    """Every line of the table has the same display width: rich counts a Persian letter as one
    column and the zero-width non-joiner as none, as wcwidth (and a terminal) does."""
    console = Console(record=True, width=width, force_terminal=False, color_system=None)
    print_check(console, PERSIAN, grade_in("fa"))
    text = console.export_text()
    table = [line for line in text.splitlines() if line and line[0] in "┏┃┡│└"]
    assert len(table) >= 5 and any("\u200c" in line for line in table)
    assert {wcswidth(line) for line in table} == {wcswidth(table[0])}
    assert "خودسنجی" in text and "هنوز رد می‌شود" in text and "still failing" not in text


def test_spans_keep_code_between_persian_words():
    assert bidi.spans("f(x): انتظار [1] می‌رفت") == "`f(x)`: انتظار `[1]` می‌رفت"
    assert bidi.spans("a `b` c: هیچ") == "``a `b` c``: هیچ"
