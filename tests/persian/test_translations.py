"""The course in Persian: every docstring of the student package has its Persian text, which
quotes what the English quotes (examples, code spans, parameters, exception types, numbers);
a text that drifts or is missing stops a Persian channel; Persian prose is Persian (Latin
digits, Persian yeh and kaf); and Markdown keeps code left to right in right-to-left prose."""

import ast
import doctest
import json
import re
import types
from pathlib import Path

import pytest
import yaml

from autograder.config import load_course
from autograder.errors import GraderError
from autograder.translation import (
    ADDITIONS,
    docstrings,
    documented,
    markdown,
    module_source,
    quoted,
    title,
    translate,
    written,
)
from tests.conftest import ROOT

COURSE = load_course(ROOT / "course.yaml")
PERSIAN = COURSE.model_copy(update={"language": "fa"})
PACKAGE = COURSE.path(COURSE.package)
LOCALE = COURSE.path(COURSE.delivery.translations) / "fa"
MODULES = sorted(PACKAGE.glob("*.py"))
SUPPORT = [COURSE.path(module) for module in COURSE.sandbox.support_modules]  # their docstrings a student reads too
TRANSLATED = [*MODULES, *SUPPORT]


def docstrings_of(path: Path) -> list[tuple[str, ast.Expr, tuple[str, ...]]]:
    """``(key, docstring statement, parameters)`` of every docstring of the module at ``path``."""
    return [(key, doc.node, doc.parameters) for key, doc in documented(ast.parse(path.read_text())).items()]


def texts(path: Path) -> dict:
    """The Persian texts of a package module (by its name) or a support module (by its path)."""
    relative = path.name if path.parent == PACKAGE else path.relative_to(ROOT)
    return yaml.safe_load((LOCALE / Path(relative).with_suffix(".yaml")).read_text(encoding="utf-8"))


EVERY_DOCSTRING = [(path.relative_to(ROOT).as_posix(), key) for path in TRANSLATED for key, _, _ in docstrings_of(path)]


def test_every_module_of_the_package_and_every_exercise_is_covered():
    assert {p.stem for p in MODULES} >= {e.module for e in COURSE.exercises} | {"__init__", "lesson"}
    assert len(EVERY_DOCSTRING) > 50
    assert {p.stem for p in MODULES} == {p.stem for p in LOCALE.glob("*.yaml") if p.stem not in ("titles", "suites")}


@pytest.mark.parametrize("module, key", EVERY_DOCSTRING)
def test_each_docstring_has_a_persian_text_that_quotes_what_the_english_quotes(module, key):
    path = ROOT / module
    (_, node, parameters), = [d for d in docstrings_of(path) if d[0] == key]
    persian = texts(path)
    assert isinstance(persian.get(key), str) and persian[key].strip(), f"{module}: no Persian text for {key}"
    english = written(path.read_text(), node)
    added = persian.get(ADDITIONS, {}).get(key, "")
    theirs, ours = quoted(persian[key], parameters), quoted(f"{english}\n\n{added}", parameters)
    for kind in ("examples", "code spans", "parameters", "exception types", "numbers"):
        assert theirs[kind] == ours[kind], f"{module} {key}: {kind}"
    assert re.search(r"[\u0600-\u06ff]", persian[key]), f"{module} {key}: not Persian"


@pytest.mark.parametrize("path", TRANSLATED, ids=lambda p: p.name)
def test_the_persian_module_is_the_english_code_with_persian_docstrings(path):
    english, persian = path.read_text(encoding="utf-8"), module_source(PERSIAN, path)
    assert persian != english

    def code(tree: ast.Module) -> str:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
                node.body[0] = ast.Pass()
        return ast.dump(tree)

    assert code(ast.parse(persian)) == code(ast.parse(english))
    # the worked examples parse to the same doctest examples, docstring by docstring
    parser = doctest.DocTestParser()
    examples = [[[(e.source, e.want) for e in parser.get_examples(ast.get_docstring(node) or "")]
                 for node in ast.walk(ast.parse(text)) if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))]
                for text in (english, persian)]
    overviews = ("__init__.py", "lesson.py")  # the package's and the lesson's, without examples
    assert examples[0] == examples[1] and (any(examples[0]) or path.name in overviews)


def test_the_persian_lesson_passes_its_doctests():
    """Each module of the lesson, with its Persian docstrings, in the package beside the English
    ones (its relative imports take theirs)."""
    attempted = 0
    for path in sorted(PACKAGE.glob("lesson*.py")):
        module = types.ModuleType(f"{COURSE.package}.{path.stem}_fa")
        module.__package__ = COURSE.package
        exec(compile(module_source(PERSIAN, path), f"{path.stem}_fa.py", "exec"), module.__dict__)
        results = doctest.testmod(module)
        assert results.failed == 0, path.name
        attempted += results.attempted
    assert attempted > 40


def test_persian_prose_writes_latin_digits_and_persian_yeh_and_kaf():
    """Latin digits, as the lesson writes numbers; the Persian letters, never their Arabic twins
    (which the lesson's step 5 shows are other bytes), outside code."""
    for path in sorted(LOCALE.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key, text in raw.items():
            for value in leaves(text):
                prose = re.sub(r"``.+?``", "", value, flags=re.S)
                prose = "\n".join(line for line in prose.splitlines() if not line.startswith((" ", ">>>")))
                assert not re.search(r"[\u0660-\u0669\u06f0-\u06f9]", prose), f"{path.name} {key}: Persian digits"
                assert not re.search(r"[\u064a\u0643]", prose), f"{path.name} {key}: Arabic yeh or kaf"
                assert "\u200c" in prose or len(prose) < 200 or not re.search(r"[\u0600-\u06ff]", prose), \
                    f"{path.name} {key}: no zero-width non-joiner in a long Persian text"


def leaves(value) -> list[str]:
    """The texts of a translation file's entry, however deep its mappings go."""
    return [text for item in value.values() for text in leaves(item)] if isinstance(value, dict) else [value]


def test_every_title_has_its_persian_text():
    assert re.search(r"[\u0600-\u06ff]", title(PERSIAN))
    for exercise in COURSE.exercises:
        assert title(PERSIAN, exercise) != exercise.title and title(COURSE, exercise) == exercise.title


def test_the_persian_benchmark_hint_quotes_what_the_benchmark_measures(fetched, monkeypatch):
    """Exercise 4's Persian hint points at data/parallel.json and quotes Persian's premium with
    cl100k_base: the figure a student gets from the reference benchmark on it."""
    from solutions.ex4_multilingual import benchmark
    from tokcourse import assets
    from tokcourse.grading import encoders

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(assets.tiktoken_cache_dir(ROOT)))
    parallel = json.loads(COURSE.path(COURSE.data["parallel"]).read_text(encoding="utf-8"))
    rows = benchmark({"cl100k_base": encoders.cl100k}, parallel)
    premium = {row["language"]: row["premium"] for row in rows}
    hint = texts(PACKAGE / "ex4_multilingual.py")["__module__"]
    assert "``data/parallel.json``" in hint and f"{len(parallel['fa'])} جمله" in hint
    assert f"مالیات {premium['fa']:.3f} است" in hint
    assert premium["fa"] == max(premium.values())  # "more than any other language of this data"


# --- what the checks catch ------------------------------------------------------------------------


SOURCE = '''"""A module.

Example::

    >>> f(2)
    4
"""


def f(count: int) -> int:
    """Double ``count``; 3 is ``6``.

    Raises ``TypeError`` when ``count`` is not an int.
    """
    return 2 * count
'''
FAITHFUL = {"__module__": "یک ماژول.\n\nمثال::\n\n    >>> f(2)\n    4",
            "f": "``count`` را دو برابر کنید؛ 3 می‌شود ``6``.\n\nاگر ``count`` int نباشد ``TypeError`` می‌دهد."}


def test_a_faithful_translation_replaces_the_docstrings_only():
    persian = translate(SOURCE, FAITHFUL)
    assert '"""``count`` را دو برابر کنید؛ 3 می‌شود ``6``.\n\n    اگر' in persian
    assert persian.endswith('int نباشد ``TypeError`` می‌دهد.\n    """\n    return 2 * count\n')
    assert translate(SOURCE, docstrings(SOURCE)) == SOURCE  # the English is its own faithful translation


@pytest.mark.parametrize("change, problem", [
    (lambda t: t.pop("f"), "no text for f, a docstring of"),
    (lambda t: t.update(g="متن"), "g: the module has no such docstring"),
    (lambda t: t.update(f=t["f"].replace("3", "4")), "f: numbers: the translation lacks '3' and adds '4'"),
    (lambda t: t.update(f=t["f"].replace("3", "۳")), "f: digits other than 0-9 (۳)"),
    (lambda t: t.update(f=t["f"].replace("``6``", "6")), "f: code spans: the translation lacks '6'"),
    (lambda t: t.update(f=t["f"].replace("TypeError", "ValueError")), "f: exception types: the translation lacks"),
    (lambda t: t.update(f=t["f"].replace("``count`` را", "عدد را").replace("اگر ``count``", "اگر عدد")),
     "f: parameters: the translation lacks 'count'"),
    (lambda t: t.update(__module__=t["__module__"].replace("    4", "    5")), "__module__: examples:"),
    (lambda t: t.update(f=""), "f: not a text, or an empty one"),
    (lambda t: t.update(f=t["f"] + ' """ + x'), "a text changes the code of the module"),
    (lambda t: t.update(f=t["f"] + ' """ + x + """'), "a text changes the code of the module"),
])
def test_a_missing_or_drifting_text_stops_the_channel_naming_it(change, problem):
    persian = dict(FAITHFUL)
    change(persian)
    with pytest.raises(GraderError) as caught:
        translate(SOURCE, persian)
    assert problem in str(caught.value)


def test_what_a_text_adds_on_purpose_is_declared():
    added = {**FAITHFUL, "f": FAITHFUL["f"] + " داده‌ها در ``data.json`` است."}
    with pytest.raises(GraderError, match="code spans: the translation adds 'data.json'"):
        translate(SOURCE, added)
    assert "``data.json``" in translate(SOURCE, {**added, ADDITIONS: {"f": "``data.json``"}})


def test_a_persian_channel_without_the_course_s_texts_says_so(tmp_path):
    (tmp_path / "translations" / "fa").mkdir(parents=True)
    (tmp_path / "translations" / "fa" / "lesson_chars.yaml").write_text("__module__: فقط این\n", encoding="utf-8")
    raw = yaml.safe_load((ROOT / "course.yaml").read_text())
    raw["delivery"]["translations"] = str(tmp_path / "translations")
    raw.pop("suite_texts")
    for name in ("suites", "solutions", "exercises", "tokcourse", "samples"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "course.yaml").write_text(yaml.safe_dump(raw))
    course = load_course(tmp_path / "course.yaml").model_copy(update={"language": "fa"})
    with pytest.raises(GraderError, match=r"translations/fa/ex1_merge_tracing.yaml: no such file \(the fa docstrings"):
        module_source(course, course.path("exercises/ex1_merge_tracing.py"))
    with pytest.raises(GraderError, match=r"translations/fa/lesson_chars.yaml: no text for CharTokenizer"):
        module_source(course, course.path("exercises/lesson_chars.py"))
    with pytest.raises(GraderError, match=r"translations/fa/titles.yaml: no such file"):
        title(course)
    no_folder = course.model_copy(update={"delivery": course.delivery.model_copy(update={"translations": None})})
    with pytest.raises(GraderError, match=r"has no texts in 'fa': name the folder"):
        title(no_folder)


# --- right to left in Markdown -------------------------------------------------------------------


def test_persian_markdown_is_right_to_left_with_code_left_to_right():
    text = "# عنوان\n\nپوشه‌ی `exercises/` و `check` و `[5, 5, 5]`.\n\n```sh\nls  # فهرست\n```\n\nپایان.\n"
    shown = markdown(PERSIAN, text)
    assert shown == ('<div dir="rtl">\n\n# عنوان\n\nپوشه‌ی <span dir="ltr">`exercises/`</span> و '
                     '<span dir="ltr">`check`</span> و '
                     '<span dir="ltr">`[5, 5, 5]`</span>.\n\n</div>\n\n```sh\nls  # فهرست\n```\n\n'
                     '<div dir="rtl">\n\nپایان.\n\n</div>\n')
    assert markdown(COURSE, text) == text
