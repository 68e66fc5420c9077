"""The suites' own words in Persian (translations/fa/suites.yaml): every property, every locked case and
every message template a suite writes its failures with (``say``) has a text, no text is left for
one that is gone, each text quotes only code the English quotes and a message keeps its English's
fields; grading and the self-check show them in a Persian course and the English ones otherwise,
with the results' names unchanged; a release ships only the texts of the properties it keeps."""

import ast
import shutil
import string

import pytest
import yaml

from autograder import bidi, suite_texts
from autograder.config import load_course
from autograder.delivery.release import build_release
from autograder.engine.feedback import description
from autograder.engine.report_files import feedback_markdown, shown_name
from autograder.errors import GraderError
from autograder.i18n import speaking
from autograder.locked.cases import load_cases
from autograder.locked.run import check_locked
from autograder.results import LOCKED_PREFIX, Grade, PropertyResult
from autograder.suite import WORDING, say
from tests.conftest import ROOT, hidden_properties, leaks

COURSE = load_course(ROOT / "course.yaml")
PERSIAN = COURSE.model_copy(update={"language": "fa"})
TEXTS = yaml.safe_load(COURSE.path(COURSE.suite_texts["fa"]).read_text(encoding="utf-8"))


def english_descriptions() -> dict[tuple[str, str], str]:
    """``(exercise, property) -> description`` of every property of every suite, as feedback shows it."""
    found = {}
    for exercise in COURSE.exercises:
        for node in ast.parse(COURSE.path(exercise.suite).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                doc = type("F", (), {"__doc__": ast.get_docstring(node, clean=False)})
                found[exercise.module, node.name] = description(doc)
    return found


ENGLISH = english_descriptions()
CASES = {(case.exercise, case.name) for case in load_cases(COURSE)}


TEMPLATES = {(exercise.module, template) for exercise in COURSE.exercises
             for template in suite_texts.templates(COURSE.path(exercise.suite).read_text(encoding="utf-8"))}


def persian(kind: str) -> dict[tuple[str, str], str]:
    return {(exercise, name): text for exercise, kinds in TEXTS.items()
            for name, text in kinds.get(kind, {}).items()}


def test_every_property_and_every_locked_case_has_a_persian_text():
    assert len(ENGLISH) > 70 and len(CASES) > 10
    assert sorted(set(ENGLISH) - set(persian("properties"))) == []
    assert sorted(CASES - set(persian("locked"))) == []


def test_every_message_of_the_suites_has_a_persian_text():
    assert len(TEMPLATES) > 100
    assert sorted(TEMPLATES - set(persian("messages"))) == []


def fields(template: str) -> list[tuple[str | None, str | None, str | None]]:
    """A template's fields, each as its name, conversion and format spec, sorted."""
    return sorted((name, conversion, spec) for _, name, spec, conversion in string.Formatter().parse(template)
                  if name is not None)


@pytest.mark.parametrize("key", sorted(TEMPLATES))
def test_a_message_keeps_its_english_fields_and_quotes_only_its_code(key):
    english, text = key[1], persian("messages")[key]
    assert fields(text) == fields(english)
    assert [f for f in suite_texts.code_fragments(text) if f not in english] == []
    assert bidi.has_prose(text) and "``" not in english


def test_say_is_str_format_in_english_and_isolates_each_value_in_persian():
    template = "{what}: expected a list, got {got}"
    assert say(template, what="f(1)", got="[1]") == template.format(what="f(1)", got="[1]")
    token = WORDING.set(("fa", {template: "برای {what} انتظار یک ``list`` می‌رفت، ولی {got!r} به دست آمد",
                                "after {what}": "پس از {what}"}))
    try:
        after = say("after {what}", what="train('a', 1)")
        assert after == f"پس از {L}train('a', 1){P}"
        assert say(template, what=after, got="x") == (f"برای {F}{after}{P} انتظار یک {L}list{P} می‌رفت، "
                                                     f"ولی {L}'x'{P} به دست آمد")
        assert say("not translated {x}", x=1) == "not translated 1"
    finally:
        WORDING.reset(token)


L, F, P = bidi.LRI, bidi.FSI, bidi.PDI


def test_no_persian_text_is_left_for_a_property_or_case_that_is_gone():
    assert sorted(set(persian("properties")) - set(ENGLISH)) == []
    assert sorted(set(persian("locked")) - CASES) == []
    assert sorted(set(persian("messages")) - TEMPLATES) == []


@pytest.mark.parametrize("key", sorted(ENGLISH))
def test_a_description_quotes_only_code_its_english_quotes(key):
    text = persian("properties")[key]
    fragments = suite_texts.code_fragments(text)
    assert [f for f in fragments if f not in ENGLISH[key]] == [], ENGLISH[key]
    assert bidi.has_prose(text) and "`" not in suite_texts.description(PERSIAN, *key, ENGLISH[key])


def test_the_check_of_fragments_sees_a_drifted_one():
    assert suite_texts.code_fragments("``merge_pair`` جفت را ``(5, 5)`` می‌کند") == ["merge_pair", "(5, 5)"]
    assert "merge_pairs" not in ENGLISH["ex1_merge_tracing", "test_merge_pair_replaces_left_to_right_without_overlap"]


def test_a_persian_course_shows_the_persian_texts_and_an_english_one_the_english():
    key = ("ex1_merge_tracing", "test_merge_pair_replaces_left_to_right_without_overlap")
    english = ENGLISH[key]
    assert suite_texts.description(COURSE, *key, english) == english
    shown = suite_texts.description(PERSIAN, *key, english)
    assert shown.startswith("\u2066merge_pair\u2069 ") and "جایگزین" in shown and "\n" not in shown
    assert suite_texts.description(PERSIAN, "ex1_merge_tracing", "test_gone", english) == english
    assert suite_texts.case_name(PERSIAN, "ex1_merge_tracing", "a token's tree") == "درخت یک توکن"
    assert suite_texts.case_name(COURSE, "ex1_merge_tracing", "a token's tree") == "a token's tree"


def test_a_locked_case_is_shown_by_its_persian_name_and_keeps_its_english_one():
    result = PropertyResult("ex1_merge_tracing", f"{LOCKED_PREFIX}a token's tree", 0, 0, False, False, "x")
    assert shown_name(COURSE, result, code=True) == "locked case: `a token's tree`"
    with speaking("fa"):  # as a report that shows it speaks
        assert shown_name(PERSIAN, result, code=True) == "مورد قفل‌شده: \u2068درخت یک توکن\u2069"
    markdown = feedback_markdown(PERSIAN, "s", Grade((result,), (), 1.0))
    assert "مورد قفل‌شده: درخت یک توکن" in markdown and "a token's tree" not in markdown


@pytest.mark.sandbox  # check_locked runs the locked cases in workers
def test_a_persian_check_of_locked_cases_names_them_in_persian(tmp_path):
    release = tmp_path / "release"
    build_release(PERSIAN, release)
    course = load_course(release / "course.yaml")
    submission = shutil.copytree(ROOT / "exercises", tmp_path / "mine" / "exercises")
    results = check_locked(course, submission.parent)
    assert {r.name for r in results} == {f"{LOCKED_PREFIX}{name}" for _, name in CASES}
    assert any(r.output.startswith("مورد قفل‌شده‌ی \u2068«درخت یک توکن»\u2069") for r in results)
    shipped = yaml.safe_load((release / COURSE.suite_texts["fa"]).read_text(encoding="utf-8"))
    kept = {name for kinds in shipped.values() for name in kinds["properties"]}
    assert kept and not kept & set(hidden_properties()) and leaks(release) == []
    assert {(e, n) for e, kinds in shipped.items() for n in kinds["locked"]} == CASES
    said = {(e, t) for e, kinds in shipped.items() for t in kinds.get("messages", {})}
    assert said and said < TEMPLATES and said == {
        (e.module, t) for e in course.exercises for t in suite_texts.templates(course.path(e.suite).read_text())}


def test_a_persian_release_refuses_a_property_without_its_text(tmp_path):
    partial = tmp_path / "suites.yaml"
    texts = yaml.safe_load(yaml.safe_dump(TEXTS))
    del texts["ex2_special_tokens"]["properties"]["test_decode_encode_round_trips"]
    partial.write_text(yaml.safe_dump(texts, allow_unicode=True), encoding="utf-8")
    course = PERSIAN.model_copy(update={"suite_texts": {"fa": str(partial)}})
    with pytest.raises(GraderError, match=r"no fa text for ex2_special_tokens.properties: "
                                          r"'test_decode_encode_round_trips'"):
        suite_texts.kept(course, {"ex2_special_tokens": ["test_decode_encode_round_trips"]}, {})


def test_a_malformed_file_of_texts_is_one_clear_line(tmp_path):
    bad = tmp_path / "suites.yaml"
    bad.write_text("ex1_merge_tracing:\n  descriptions: {}\n", encoding="utf-8")
    course = PERSIAN.model_copy(update={"suite_texts": {"fa": str(bad)}})
    with pytest.raises(GraderError, match=r"ex1_merge_tracing: a mapping of properties, locked and messages"):
        suite_texts.texts(course)


def test_prose_runs_through_a_closing_parenthesis_and_a_hidden_line_s_dash():
    assert bidi.spans("ادغام هم‌پوشانی ندارد (طول این را نشان می‌دهد).") == \
        "ادغام هم‌پوشانی ندارد (طول این را نشان می‌دهد)."
    assert bidi.spans("باشد. — نتیجه‌ی نادرست.") == "باشد. — نتیجه‌ی نادرست."
