"""What a student of a Persian course reads: feedback.md with its prose right to left and its code
left to right and intact, and the self-check's table aligned in a terminal; nbgrader's feedback
under the grade cell and on its page, the check cell's failure, the submission's notes and
Gradescope's last word, in Persian."""

import importlib.util
import json
import re
import shutil
import subprocess

import nbformat
import pytest
from rich.console import Console
from wcwidth import wcswidth

from autograder import bidi
from autograder.config import load_course
from autograder.delivery.gradescope import _why
from autograder.delivery.nbgrader.feedback import feedback_text, read_feedback
from autograder.delivery.shipping import TEMPLATES
from autograder.engine.feedback import hidden_reason, property_feedback
from autograder.engine.report_files import feedback_markdown
from autograder.engine.session import not_implemented
from autograder.errors import SandboxFailure, StudentError
from autograder.i18n import _, speaking
from autograder.intake.staging import stage
from autograder.reports.terminal import print_check
from autograder.results import LOCKED_PREFIX, Grade, PropertyResult
from autograder.suite import expect_equal
from autograder.translation import engine_words, title
from tests.conftest import ROOT

L, F, P = bidi.LRI, bidi.FSI, bidi.PDI  # a value isolated left to right, by its first letter, and the end

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


def grade_in(language: str) -> Grade:
    """A grade with a property of each kind, its texts written as grading in ``language`` writes them."""
    with speaking(language):
        wrong = AssertionError(_expected())
        wrong.add_note("\n".join(FALSIFYING))
        raised = StudentError("ex1_merge_tracing.merge([1, 2], (1, 2), 3)",
                              {"type": "ValueError", "mro": ["ValueError", "Exception", "BaseException", "object"],
                               "message": "bad id", "traceback": 'File "ex1_merge_tracing.py", line 3\n    raise'})
        outputs = {
            "test_merge": property_feedback("Merging replaces each pair.", wrong, False, 4000,
                                            "hi\n"),
            "test_raise": property_feedback("Bad ids raise.", raised, False, 4000),
            "test_hidden": property_feedback("Ties break left.", wrong, True, 4000),
        }
        stub = not_implemented("ex1_merge_tracing.trace_merges")
        outputs["test_trace"] = property_feedback("Traces.", stub, False, 4000)
    results = (
        PropertyResult("ex1_merge_tracing", "test_ok", 2, 2, True, False, ""),
        PropertyResult("ex1_merge_tracing", "test_merge", 3, 0, False, False, outputs["test_merge"]),
        PropertyResult("ex1_merge_tracing", "test_raise", 1, 0, False, False, outputs["test_raise"]),
        PropertyResult("ex1_merge_tracing", "test_hidden", 4, 0, False, True, outputs["test_hidden"]),
        PropertyResult("ex1_merge_tracing", "test_trace", 2, 0, False, False, outputs["test_trace"], blocked=True),
        PropertyResult("ex1_merge_tracing", f"{LOCKED_PREFIX}a trace", 0, 0, False, False,
                       outputs["test_trace"], blocked=True),
    )
    with speaking(language):
        note = _("Student code ran in a sandbox: {layers}.").format(layers="bwrap + landlock")
    return Grade(results, (note,), 1.0)


def _expected() -> str:
    try:
        expect_equal([5, 5, 5], [1, 2, 1], "merge([1, 2, 1, 2], (1, 2), 5)")
    except AssertionError as error:
        return str(error)
    raise AssertionError("expect_equal passed unequal values")


def test_hidden_reasons_and_headlines_speak_persian():
    with speaking("fa"):
        assert hidden_reason(AssertionError()) == "نتیجه‌ی نادرست"
        assert hidden_reason(SandboxFailure("not_implemented", "")) == "هنوز نوشته نشده است"
        # the line starts with Persian, and each value it names is isolated in plain text: the
        # call by its first letter, as a suite's message (autograder.suite.say) may be Persian
        assert _expected() == (f"برای {F}merge([1, 2, 1, 2], (1, 2), 5){P} انتظار {L}[1, 2, 1]{P} می‌رفت، "
                               f"ولی {L}[5, 5, 5]{P} به دست آمد")


def test_persian_feedback_reads_right_to_left_with_its_code_intact():
    markdown = feedback_markdown(PERSIAN, "sara", grade_in("fa"))
    assert markdown.startswith(f'<div dir="rtl">\n\n# {PERSIAN.title}: بازخورد <span dir="ltr">`sara`</span>\n')
    assert "**امتیاز: 2 از 20**\n\nاین بار فقط ex1_merge_tracing نمره‌دهی شد." in markdown
    # every fenced block is outside the right-to-left blocks, and every right-to-left block is closed
    blocks = re.split(r"^ *```.*?^ *```$", markdown, flags=re.M | re.S)
    for prose in blocks:
        assert prose.count('<div dir="rtl">') == prose.count("</div>")
    code = "\n".join(re.findall(r"^ *```text\n(.*?)^ *```$", markdown, flags=re.M | re.S))
    for line in ["test_merge(", *FALSIFYING[1:]]:  # the falsifying example, line for line, left to right
        assert f"  {line}\n" in code + "\n"
    assert "\n  مثال نقض:\n" in markdown and "Falsifying" not in markdown  # hypothesis's heading, in Persian
    assert "<div" not in code and "<span" not in code
    # code inside a Persian headline: in code spans, those with edges that would move kept left to right
    assert ('برای <span dir="ltr">`merge([1, 2, 1, 2], (1, 2), 5)`</span> انتظار <span dir="ltr">`[1, 2, 1]`</span> '
            'می‌رفت، ولی <span dir="ltr">`[5, 5, 5]`</span> به دست آمد') in markdown
    assert ('<span dir="ltr">`ex1_merge_tracing.trace_merges`</span> هنوز نوشته نشده است: '
            '<span dir="ltr">`test_trace`</span>، مورد قفل‌شده: <span dir="ltr">`a trace`</span>') in markdown
    assert not bidi.CONTROLS.search(markdown)  # the page's markup keeps the direction, not the controls
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
    table = [line for line in map(bidi.visible, text.splitlines()) if line and line[0] in "┏┃┡│└"]
    assert len(table) >= 5 and any("\u200c" in line for line in table)
    assert {wcswidth(line) for line in table} == {wcswidth(table[0])}
    assert "خودسنجی" in text and "هنوز رد می‌شود" in text and "still failing" not in text


def test_spans_keep_code_between_persian_words():
    assert bidi.spans("f(x): انتظار [1] می‌رفت") == "`f(x)`: انتظار `[1]` می‌رفت"
    assert bidi.spans("a `b` c: هیچ") == "``a `b` c``: هیچ"


EX = "ex1_merge_tracing"


def test_nbgrader_feedback_speaks_persian_and_reads_back_in_either_language():
    """The grade cell's text in Persian, with no English word of the engine's, and read back (for
    the class report) to the same results as the English text."""
    texts = {}
    for language in ("en", "fa"):
        with speaking(language):
            texts[language] = feedback_text(EX, 20, grade_in(language))
    persian = texts["fa"].splitlines()
    assert persian[0] == f"ماژول {L}{EX}{P}: {F}2{P} از {F}20{P} امتیاز."
    assert persian[1].startswith("سلول‌های کد شما")
    assert persian[2] == f"کد شما در محیط ایزوله اجرا شد: {L}bwrap + landlock{P}."
    assert f"قبول شد  {F}test_ok{P} ({F}2{P} از {F}2{P})" in persian
    assert f"رد شد  {F}test_merge{P} ({F}0{P} از {F}3{P})" in persian
    assert persian[-1] == f"ویژگی‌های پنهان: {F}0{P} از {F}1{P} قبول‌شده ({F}0{P} از {F}4{P} امتیاز)."
    assert not ENGLISH_WORDS.search(texts["fa"])
    read = {language: read_feedback(EX, text) for language, text in texts.items()}
    assert read["en"] is not None and read["fa"] is not None
    for feedback in read.values():
        assert (feedback.hidden_passed, feedback.hidden_total, feedback.cut) == (0, 1, False)
        assert [(r.name, r.points, r.score, r.passed) for r in feedback.public] == \
            [(r.name, r.points, r.score, r.passed) for r in grade_in("en").results
             if not r.hidden and not r.name.startswith(LOCKED_PREFIX)]  # a locked case's line is not read back
    assert read["fa"].public[1].output == grade_in("fa").results[1].output


def test_the_nbgrader_feedback_page_reads_right_to_left_with_its_code_left_to_right():
    # here: importing nbconvert and nbgrader weighs on every collection
    from autograder.delivery.nbgrader.feedback_page import right_to_left
    from autograder.delivery.nbgrader.sanitize_html import clean

    with speaking("fa"):
        text = feedback_text(EX, 20, grade_in("fa"))
    page = right_to_left(nbformat.v4.new_output("stream", name="stdout", text=text))["data"]["text/html"]
    assert page.startswith('<div dir="rtl"><p>ماژول <bdi>ex1_merge_tracing</bdi>: <bdi>2</bdi> از <bdi>20</bdi> '
                           'امتیاز.</p>')
    assert not bidi.CONTROLS.search(page)
    assert "<p>قبول شد  <bdi>test_ok</bdi> (<bdi>2</bdi> از <bdi>2</bdi>)</p>" in page
    assert "<p>رد شد  <bdi>test_merge</bdi> (<bdi>0</bdi> از <bdi>3</bdi>)</p>" in page
    assert page.endswith("<p>ویژگی‌های پنهان: <bdi>0</bdi> از <bdi>1</bdi> قبول‌شده (<bdi>0</bdi> از <bdi>4</bdi> "
                         "امتیاز).</p></div>")
    # each property's output indented under its line; the falsifying example intact, left to right
    assert '<p>مثال نقض:</p>\n<pre dir="ltr">' + "\n".join(["test_merge(", *FALSIFYING[1:]]) + "</pre>" in page
    assert ('برای <code dir="ltr">merge([1, 2, 1, 2], (1, 2), 5)</code> انتظار <code dir="ltr">[1, 2, 1]</code> '
            'می‌رفت، ولی <code dir="ltr">[5, 5, 5]</code> به دست آمد') in page
    assert page.count("<blockquote>") == page.count("</blockquote>") >= 3
    assert clean(page) == page.replace("&quot;", "\"")  # what the page's sanitizer keeps: all of it
    assert clean('<p dir="rtl" onclick="x()">a</p><script>alert(1)</script>') == '<p dir="rtl">a</p>'
    assert clean('<img src="https://tracker.example/p.png" alt="a"><img src="data:image/png;base64,AA==">') == (
        '<img alt="a"><img src="data:image/png;base64,AA==">')  # nothing fetched from elsewhere
    assert clean('<a href="data:text/html,x">a</a><a href="https://example.org">b</a>') == (
        '<a rel="noopener noreferrer">a</a><a href="https://example.org" rel="noopener noreferrer">b</a>')


def test_the_check_cell_fails_in_the_course_s_language(tmp_path):
    """The check cell's module as nbgrader's Persian course ships it: its CheckFailed, which
    ``nbgrader validate`` shows, speaks Persian; the English one is the template as it is."""
    template = (TEMPLATES / "notebook_check.py").read_text(encoding="utf-8")
    assert engine_words(ENGLISH, template) == template
    (tmp_path / "grader.py").write_text(engine_words(PERSIAN, template), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("grader", tmp_path / "grader.py")
    assert spec is not None and spec.loader is not None
    grader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grader)
    assert grader.FAILED.format(module=EX) == (f"ماژول {L}{EX}{P}: همه‌ی سنجش‌ها قبول نشدند (بالا را ببینید)؛ "
                                              "درستش کنید، ذخیره کنید و این سلول را دوباره اجرا کنید")
    assert "\u2066" not in engine_words(PERSIAN, template)  # written escaped: no control in the source


def test_submission_notes_speak_the_course_s_language(tmp_path):
    folder = tmp_path / "sara"
    shutil.copytree(ROOT / "samples" / "partly_wrong", folder)
    (folder / "exercises" / "elsewhere.py").symlink_to("/etc/hostname")
    notes = {}
    for course in (ENGLISH, PERSIAN):
        staged = stage(course, folder)
        staged.remove()
        notes[course.language] = staged.notes
    assert notes == {"en": ["skipped 'exercises/elsewhere.py': links and special files are not graded"],
                     "fa": [f"{L}'exercises/elsewhere.py'{P} کنار گذاشته شد: پیوندها و فایل‌های ویژه نمره‌دهی "
                            "نمی‌شوند"]}


def test_gradescope_says_grading_failed_in_the_course_s_language():
    """What run_autograder writes when grading itself failed: valid JSON, in the course's language."""
    said = {}
    for course in (ENGLISH, PERSIAN):
        script = f"status=3\nwhy={_why(course)}\nprintf '{{\"score\": 0, \"output\": \"%s\"}}\\n' \"$why\""
        run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
        said[course.language] = json.loads(run.stdout)["output"]
    assert said["en"] == ("The autograder could not grade this submission (exit 3). This is not your mistake: tell "
                          "your instructor.")
    assert said["fa"].startswith("نمره‌دهنده‌ی خودکار نتوانست") and f"(کد خروج {F}3{P})" in said["fa"]
