"""Feedback shows nothing the student chose on hidden properties, every text is capped, and
``--course`` names the course everywhere (a course file of any name, beside another)."""

import ast
import json
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from autograder.config import CourseConfigError, Limits, load_course
from autograder.engine.feedback import description, hidden_reason, property_feedback
from autograder.engine.report_files import feedback_markdown
from autograder.errors import SandboxFailure, StudentError
from autograder.reports.terminal import print_check
from autograder.results import Grade, PropertyResult, clip
from tests.config.test_config import write_variant
from tests.conftest import ROOT, autograder

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow]

MARKER = "… [feedback cut at"


def student_error(type_name: str, mro: list[str], message: str = "", traceback: str = "") -> StudentError:
    return StudentError("f([1, 2])", {"type": type_name, "mro": mro, "message": message, "traceback": traceback})


@pytest.mark.parametrize("error, reason", [
    (student_error("ValueError", ["ValueError", "Exception", "BaseException", "object"]), "raised ValueError"),
    (student_error("KeyError", ["KeyError", "LookupError", "Exception", "BaseException", "object"]), "raised KeyError"),
    # a student class named like a builtin, but not one: its bases give it away
    (student_error("KeyError", ["KeyError", "Exception", "BaseException", "object"]),
     "raised a non-built-in exception"),
    (student_error("ValueError", ["ValueError", "ValueError", "Exception", "BaseException", "object"]),
     "raised a non-built-in exception"),
    (student_error("input_was_[1, 2]", ["input_was_[1, 2]", "Exception", "BaseException", "object"]),
     "raised a non-built-in exception"),
    (student_error("print", ["print", "Exception", "BaseException", "object"]), "raised a non-built-in exception"),
    (student_error("X" * 3_000_000, ["X" * 3_000_000, "Exception", "BaseException", "object"]),
     "raised a non-built-in exception"),
    (AssertionError("expected [1, 2]"), "wrong result"),
    (SandboxFailure("timeout", "f([1, 2]) took too long"), "timed out"),
    (SandboxFailure("crash", "killed"), "crashed"),
    (SandboxFailure("protocol", "the answer was larger than 8 MB"), "crashed"),
    (SandboxFailure("import", "f([1, 2]) failed with LEAK: [1, 2]"), "could not be imported"),
    (SandboxFailure("missing", "exercises.ex1 is missing from the submission"),
     "exercises.ex1 is missing from the submission"),
    (SandboxFailure("not_implemented", "f: not implemented yet"), "not implemented yet"),
    (SandboxFailure("budget", "used up"), "time budget used up"),
    (AttributeError("no f"), "a name is missing"),
])
def test_hidden_reasons_come_from_a_closed_set(error, reason):
    assert hidden_reason(error) == reason


def test_hidden_feedback_is_the_summary_and_the_reason():
    summary = description(SimpleNamespace(__doc__="Ties break to the left.\n\nMore."))
    error = student_error("LEAK_" + "[1, 2]" * 1000, ["LEAK", "Exception", "BaseException", "object"], "[1, 2]")
    assert property_feedback(summary, error, True, 4000) == "Ties break to the left. — raised a non-built-in exception."


def suite_docstrings(course_file: Path = ROOT / "course.yaml"):
    """``(exercise.property, docstring)`` of every property of every suite of the course."""
    course = load_course(course_file)
    for exercise in course.exercises:
        tree = ast.parse(course.path(exercise.suite).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                yield f"{exercise.module}.{node.name}", ast.get_docstring(node, clean=False) or ""


def test_every_description_is_shown_whole():
    """A docstring wraps its sentence over lines: feedback shows all of it, never a first line
    that stops mid-sentence (the same text for a hidden and a public failure)."""
    cut = []
    for name, doc in suite_docstrings():
        summary = description(SimpleNamespace(__doc__=doc))
        hidden = property_feedback(summary, AssertionError("wrong"), True, 4000).rsplit(" — ", 1)[0]
        public = property_feedback(summary, AssertionError("wrong"), False, 4000).split("\n", 1)[0]
        paragraph = doc.strip().split("\n\n", 1)[0]
        if not (hidden == public == " ".join(paragraph.split()) and public.endswith((".", "!", "?"))):
            cut.append(f"{name}: {public!r}")
    assert not cut, "descriptions shown cut:\n" + "\n".join(cut)


def test_public_feedback_caps_the_students_message_and_traceback_but_keeps_the_example():
    error = student_error("Boom", ["Boom", "Exception", "BaseException", "object"], "M" * 1_000_000, "T" * 1_000_000)
    error.add_note("Falsifying example: test(ids=[1, 2])")
    text = property_feedback("Merges replace left to right.", error, False, 4000)
    assert len(text) < 4000 + 100
    assert text.startswith("Merges replace left to right.") and text.count(MARKER) == 2
    assert "Falsifying example: test(ids=[1, 2])" in text


def test_clip_marks_the_cut():
    assert clip("short", 10) == "short"
    assert clip("x" * 11, 10) == "x" * 10 + "… [feedback cut at 10 characters]"


def test_reports_cap_each_output_and_all_of_them():
    limits = Limits(feedback_chars=1000, report_chars=2500)
    result = PropertyResult(exercise="ex1", name="p", points=1, score=0, passed=False, hidden=False, output="y" * 5000)
    grade = Grade((result,) * 4, ("n" * 5000,), 0.0).capped(limits)
    sizes = [len(grade.notes_text)] + [len(r.output) for r in grade.results]
    assert all(size <= 1000 + 40 for size in sizes) and sum(sizes) <= 2500 + 5 * 40
    assert all(r.output.endswith("characters]") for r in grade.results)


def test_limits_are_validated(tmp_path):
    with pytest.raises(CourseConfigError, match=r"limits.feedback_chars: Input should be greater than or equal to 200"):
        load_course(write_variant(tmp_path, lambda c: c["limits"].update(feedback_chars=10)))
    assert load_course(ROOT / "course.yaml").limits.feedback_chars == 4000


def result(exercise: str, name: str, points: int, passed: bool, output: str = "", hidden: bool = False,
           blocked: bool = False) -> PropertyResult:
    return PropertyResult(exercise=exercise, name=name, points=points, score=points if passed else 0, passed=passed,
                          hidden=hidden, output=output, blocked=blocked)


EX1, EX2 = "ex1_merge_tracing", "ex2_special_tokens"
NOT_WRITTEN = "Counts pairs.\n\nex1_merge_tracing.get_pair_counts is not implemented yet"


def screen_of(grade: Grade, width: int = 250) -> str:
    console = Console(record=True, width=width)
    print_check(console, load_course(ROOT / "course.yaml"), grade)
    return " ".join(console.export_text().split())


def test_self_check_says_what_its_numbers_mean():
    """Full public points on a 20-point exercise once read '2 / 2 │ 4 / 5' under 'points out of
    100 + 10 bonus': the table now says what each number counts, and the words under it what
    public properties and locked cases are."""
    locked = result(EX1, "locked case: c", 0, False, "Locked case 'c': the answer of this call differs")
    screen = screen_of(Grade((result(EX1, "p", 2, True), result(EX1, "q", 1, False, "Q.\n\nwrong"), locked), (), 0.0))
    assert "ex1_merge_tracing │ 20 │ 2 of 3 points │ 0 of 1 pass │ 1 property, 1 locked case" in screen
    assert "Public properties: the properties this check runs" in screen
    assert "full public points do not mean full marks" in screen
    assert "Locked cases: fixed calls whose answers are compared with the reference's" in screen
    assert "locked case" not in screen_of(Grade((result(EX1, "p", 2, True),), (), 0.0)).lower()


def test_self_check_says_how_much_of_each_exercise_it_sees():
    """A wrong merge_pair once showed "2 of 2 points" with nothing to say that ex1 is worth 20:
    the words under the table name each exercise's share, and what decides the rest."""
    course = load_course(ROOT / "course.yaml")
    grade = Grade((result(EX1, "p", 2, True), result(EX2, "q", 25, True)), (), 0.0)
    for release, rest in ((False, "decides the rest with hidden properties"),
                          (True, "decides the rest with properties that compare your results with the reference")):
        console = Console(record=True, width=250)
        print_check(console, course.model_copy(update={"solutions": None} if release else {}), grade)
        screen = " ".join(console.export_text().split())
        assert "What this check sees: its properties are worth 2 of the 20 points of ex1_merge_tracing." in screen
        assert rest in screen and "of ex2_special_tokens" not in screen, screen  # all of ex2 is seen


def test_self_check_says_once_what_is_not_written_and_puts_the_exercise_in_progress_first():
    untouched = [result(EX1, f"p{i}", 1, False, NOT_WRITTEN, blocked=True) for i in range(3)]
    in_progress = [result(EX2, "a", 2, True), result(EX2, "b", 2, False, "B holds.\n\nb(1): expected 2, got 3")]
    screen = screen_of(Grade((*untouched, *in_progress), (), 0.0))
    assert screen.index("ex2_special_tokens │ 25") < screen.index("ex1_merge_tracing │ 20")
    assert screen.count("get_pair_counts is not implemented yet") == 1
    assert "ex1_merge_tracing.get_pair_counts is not implemented yet: p0, p1, p2" in screen
    assert "check --exercise ex2_special_tokens checks it alone" in screen


@pytest.mark.parametrize("language", ["en", "fa"])
def test_the_closing_tip_is_the_command_the_release_readme_teaches(language):
    """It once printed ``python -m autograder check --exercise …``, which outside an activated
    venv stops with "No module named 'rich'"; the README runs the venv's Python by its path."""
    from autograder import STUDENT_COMMAND
    from autograder.delivery.release import student_readme

    course = load_course(ROOT / "course.yaml").model_copy(update={"language": language})
    in_progress = [result(EX2, "a", 2, True), result(EX2, "b", 2, False, "B holds.\n\nb(1): expected 2, got 3"),
                   result(EX1, "p", 1, False, NOT_WRITTEN, blocked=True)]
    console = Console(record=True, width=250)
    print_check(console, course, Grade(tuple(in_progress), (), 0.0))
    screen = console.export_text()
    assert f"{STUDENT_COMMAND} check --exercise {EX2}" in screen
    assert " python -m autograder" not in screen.replace(STUDENT_COMMAND, "")
    assert f"{STUDENT_COMMAND} check --exercise {course.exercises[0].module}" in student_readme(course)


def test_feedback_says_once_what_is_not_written():
    """An untouched exercise's feedback once had an entry per property (74 for the stubs, each
    with its example): a cause that stops several properties is one line."""
    course = load_course(ROOT / "course.yaml")
    hidden = [result(EX1, f"h{i}", 1, False, f"H{i} holds. — not implemented yet.", hidden=True, blocked=True)
              for i in range(2)]
    grade = Grade((*(result(EX1, f"p{i}", 1, False, NOT_WRITTEN, blocked=True) for i in range(3)), *hidden,
                   result(EX1, "r", 2, False, "R holds.\n\nr(1): expected 2, got 3")), (), 0.0)
    text = feedback_markdown(course, "s", grade)
    assert ("- FAILED (0/3) ex1_merge_tracing.get_pair_counts is not implemented yet: `p0`, `p1`, `p2`\n"
            "- FAILED (0/2) hidden, not implemented yet: `h0`, `h1`\n"
            "- FAILED (0/2) `r`\n\n  ```text\n  R holds.\n  \n  r(1): expected 2, got 3\n  ```") in text


def test_a_missing_module_reads_the_same_on_public_and_hidden_properties(tmp_path):
    """The public ones once said "missing" and the hidden ones "could not be imported"."""
    (tmp_path / "grace" / "exercises").mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / f"{EX1}.py", tmp_path / "grace" / "exercises")
    run = autograder("grade", str(tmp_path / "grace"), "--out", str(tmp_path / "out"), "--exercise", EX2)
    assert run.returncode == 0, run.stderr
    feedback = (tmp_path / "out" / "grace" / "feedback.md").read_text(encoding="utf-8")
    lines = [line for line in feedback.splitlines() if line.startswith("- FAILED")]
    said = f"exercises.{EX2} is missing from the submission:"
    assert len(lines) == 2 and said in lines[0] and f"hidden, {said}" in lines[1], lines


def hostile_submission(folder: Path) -> Path:
    """The reference, but ex1's ``render_trace`` raises a class named after its input (3 MB of
    name and message), and ``merge_pair`` raises ValueError with its input as the message."""
    shutil.copytree(ROOT / "solutions", folder, ignore=shutil.ignore_patterns("__pycache__"))
    with (folder / "ex1_merge_tracing.py").open("a") as module:
        module.write('''

def render_trace(steps):
    leak = type("LEAK_" + repr(steps) + "Z" * 1_500_000, (Exception,), {})
    raise leak("M" * 1_500_000)


def merge_pair(ids, pair, new_id):
    raise ValueError("SECRET" + repr(ids))
''')
    return folder


def test_hostile_names_and_messages_stay_out_of_hidden_feedback_and_reports_stay_small(tmp_path):
    submission = hostile_submission(tmp_path / "hostile")
    run = autograder("grade", str(submission), "--out", str(tmp_path / "out"), "--exercise", "ex1_merge_tracing")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = tmp_path / "out" / "hostile" / "results.json"
    feedback = (tmp_path / "out" / "hostile" / "feedback.md").read_text()
    assert results.stat().st_size < 200_000 and len(feedback) < 200_000
    tests = json.loads(results.read_text())["tests"]
    hidden = [t["output"] for t in tests if t["visibility"] == "after_published" and t["status"] == "failed"]
    assert hidden and not any("LEAK" in text or "SECRET" in text for text in hidden), hidden
    assert any(text.endswith("— raised a non-built-in exception.") for text in hidden)
    assert any(text.endswith("— raised ValueError.") for text in hidden)
    public = [t["output"] for t in tests if t["visibility"] == "visible" and t["status"] == "failed"]
    assert any("LEAK_" in text and MARKER in text for text in public), "public feedback shows the error, cut"
    assert all(len(text) < 4000 + 200 for text in public)


def printing_submission(folder: Path) -> Path:
    """The reference, but ex1's ``merge_pair`` and ``trace_merges`` print their input (and
    ``merge_pair`` 100,000 characters to stderr), then answer in reverse order."""
    shutil.copytree(ROOT / "solutions", folder, ignore=shutil.ignore_patterns("__pycache__"))
    with (folder / "ex1_merge_tracing.py").open("a") as module:
        module.write('''

_merge_pair, _trace_merges = merge_pair, trace_merges


def merge_pair(ids, pair, new_id):
    print("PRINTED-BY-STUDENT ids=" + repr(ids))
    print("x" * 100_000, file=__import__("sys").stderr)
    return _merge_pair(ids, pair, new_id)[::-1]


def trace_merges(text, num_merges):
    print("PRINTED-BY-STUDENT text=" + repr(text))
    return _trace_merges(text, num_merges)[::-1]
''')
    return folder


def test_public_feedback_shows_what_the_failing_example_printed_and_hidden_feedback_nothing(tmp_path):
    submission = printing_submission(tmp_path / "printer")
    run = autograder("grade", str(submission), "--out", str(tmp_path / "out"), "--exercise", "ex1_merge_tracing")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    tests = json.loads((tmp_path / "out" / "printer" / "results.json").read_text())["tests"]
    failed = {t["name"].split(": ")[1]: t for t in tests if t["status"] == "failed"}
    merge = failed["test_merge_pair_replaces_left_to_right_without_overlap"]["output"]
    assert "ids=[5, 5, 5]," in merge  # the falsifying example, and its own print alone:
    assert merge.count("PRINTED-BY-STUDENT") == 1
    assert "What your code printed during this example:\nPRINTED-BY-STUDENT ids=[5, 5, 5]\nxxx" in merge
    assert MARKER in merge and len(merge) < 4000 + 200
    trace = failed["test_trace_merges_matches_reference"]["output"]
    assert trace.endswith("What your code printed during this example:\nPRINTED-BY-STUDENT text='the then there'")
    runs = failed["test_overlapping_runs_merge_without_overlap"]["output"]  # 'aaa' passed first: its print is gone
    assert runs.endswith("\nPRINTED-BY-STUDENT text='aaaa'") and runs.count("PRINTED-BY-STUDENT") == 1, runs
    hidden = [t["output"] for t in failed.values() if t["visibility"] != "visible"]
    assert hidden and not any("PRINTED" in text or "xxx" in text for text in hidden), hidden


def course_b(tmp_path: Path, beside_a: bool) -> Path:
    """``course-b.yaml`` titled "Course B" in a folder of the course's files; with ``beside_a``
    the real ``course.yaml`` (another title) lies next to it."""
    tmp_path.mkdir()
    path = write_variant(tmp_path, lambda c: c.update(title="Course B"))
    for name in ("data", ".cache"):
        (tmp_path / name).symlink_to(ROOT / name)
    path = path.rename(tmp_path / "course-b.yaml")
    if beside_a:
        shutil.copy(ROOT / "course.yaml", tmp_path / "course.yaml")
    return path


@pytest.mark.parametrize("beside_a", [False, True], ids=["alone", "beside course.yaml"])
def test_grading_uses_the_course_file_named(tmp_path, beside_a):
    course = course_b(tmp_path / "course", beside_a)
    stubs = shutil.copytree(ROOT / "exercises", tmp_path / "stubs", ignore=shutil.ignore_patterns("__pycache__"))
    run = autograder("grade", str(stubs), "--out", str(tmp_path / "out"), "--exercise", "ex1_merge_tracing",
                     course=course, cwd=course.parent)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (tmp_path / "out" / "stubs" / "feedback.md").read_text().startswith("# Course B: feedback for stubs")
    assert load_course(course).file == course.resolve()


def test_headlines_show_the_call_made():
    """Insertion order decides tie-breaks (trace_word_merges) and columns (render_table), and a
    student pastes the call to see it fail: a headline writes the call out whole, dicts in their
    real order, a student object by its name; only an argument longer than SHOWN_CHARS is cut,
    where a marker says so."""
    from autograder.engine.session import SHOWN_CHARS, shown_call

    assert shown_call("f", ({"the": 3, "a": 1, "cat": 2},), {}) == "f({'the': 3, 'a': 1, 'cat': 2})"
    table = {index: 0 for index in range(9, 0, -1)}
    ids, text = list(range(40)), "x" * 90
    assert shown_call("f", (table, ids, text), {"k": (1,)}) == f"f({table!r}, {ids!r}, {text!r}, k=(1,))"
    cut = shown_call("f", ("y" * (SHOWN_CHARS + 100),), {})
    assert cut.endswith("…[102 more characters])") and len(cut) < SHOWN_CHARS + 40


def test_results_json_takes_its_visibility_from_the_course(tmp_path):
    result = PropertyResult(exercise="ex1_merge_tracing", name="p", points=1, score=0, passed=False, hidden=True,
                            output="wrong result")
    grade = Grade((result, replace(result, name="q", hidden=False)), ("notes",), 1.0)
    default = grade.to_gradescope(load_course(ROOT / "course.yaml"))
    assert default["visibility"] == "visible" and [t["visibility"] for t in default["tests"]] == [
        "after_published", "visible"]
    changed = load_course(write_variant(tmp_path, lambda c: c.update(
        visibility={"hidden_properties": "after_due_date", "score": "after_published"})))
    document = grade.to_gradescope(changed)
    assert document["visibility"] == "after_published"
    assert [t["visibility"] for t in document["tests"]] == ["after_due_date", "visible"]
    with pytest.raises(CourseConfigError, match="visibility.hidden_properties"):
        load_course(write_variant(tmp_path, lambda c: c.update(visibility={"hidden_properties": "visible"})))
