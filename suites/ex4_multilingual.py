"""Exercise 4: a multilingual benchmark. Properties of tokens_per_char,
tokenization_premium, benchmark and render_table, graded against the docstrings' rules.

Encoders are passed as worker-side handles (``sandbox.module("encoders")``) to the
student's code and as the same functions from ``tokcourse.grading.encoders`` to the reference.
"""

import functools
import json
import math
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.errors import StudentError
from autograder.signatures import graded_functions
from autograder.suite import (
    expect,
    expect_bad_input_rules,
    expect_close,
    expect_equal,
    expect_error,
    say,
    show,
    together,
)
from tokcourse.grading import encoders
from tokcourse.grading import strategies as S

points = pytest.mark.points
hidden = pytest.mark.hidden
docstring_examples = pytest.mark.examples  # the stub's >>> examples a property checks (autograder.engine.examples)
LAMBDAS = {"utf8": "encoders.utf8_bytes", "chars": "encoders.characters"}  # the docstring's encoders, in the sandbox
# what the docstring's benchmark gives: its example of render_table runs on these, to test render_table alone
EXAMPLE_ROWS = [{"encoder": encoder, "language": language, "tokens": tokens, "chars": 6, "bytes": size,
                 "tokens_per_char": tokens / 6, "premium": premium}
                for encoder, language, tokens, size, premium in [
                    ("chars", "en", 6, 6, 1.0), ("chars", "ru", 6, 12, 1.0), ("utf8", "en", 6, 6, 1.0),
                    ("utf8", "ru", 12, 12, 2.0)]]

SIMPLE = ("characters", "utf8_bytes", "whitespace_words")
simple_encoders = st.sampled_from(SIMPLE)


def _check_premium(got, expected, what):
    """The premiums of ``expected``, in any order (the order has a property of its own)."""
    expect(isinstance(got, dict), say("{what}: expected a dict, got {got}", what=what, got=show(got)))
    expect_equal(set(got), set(expected), say("the languages of {what}", what=what))
    for lang, value in expected.items():
        expect_close(got[lang], value, f"{what}[{lang!r}]")


def _check_rows(got, expected, what, premiums=None):
    """``got`` has the rows of ``expected``; with ``premiums`` (``encoder -> language -> premium``, what
    the student's own ``tokenization_premium`` gives, where it gives one), a row's premium may be that
    one too: the premium is another property's, and a row copies it."""
    expect(isinstance(got, list), say("{what}: expected a list of rows, got {got}", what=what, got=show(got)))
    expect_equal([(r.get("encoder"), r.get("language")) if isinstance(r, dict) else r for r in got],
                 [(r["encoder"], r["language"]) for r in expected],
                 say("the {pair} of each row of {what}", pair="(encoder, language)", what=what))
    for row, want in zip(got, expected, strict=True):
        where = say("{what}: row {row}", what=what, row=f"({want['encoder']!r}, {want['language']!r})")
        expect_equal(list(row), list(want), say("{where}: the keys", where=where))
        for key in ("tokens", "chars", "bytes"):
            expect_equal(row[key], want[key], f"{where}[{key!r}]")
        expect_close(row["tokens_per_char"], want["tokens_per_char"], f"{where}['tokens_per_char']")
        own = (premiums or {}).get(want["encoder"], {}).get(want["language"])
        if not (type(own) in (int, float) and type(row["premium"]) in (int, float)
                and math.isclose(row["premium"], own, rel_tol=1e-9)):
            expect_close(row["premium"], want["premium"],
                         say("{where}{key}, as {function} gives it", where=where, key="['premium']",
                             function="tokenization_premium"))


def _value_error(call, what, naming=()):
    """The check that ``call()`` raises a ValueError (:func:`expect_error`), to run side by side with others."""
    return functools.partial(expect_error, call, ("ValueError",), what, naming=naming)


def _own_premiums(student, encoders_, parallel, baseline="en"):
    """``encoder -> language -> premium``: what the student's ``tokenization_premium`` gives, where it
    gives a dict (an error or another answer is that property's to report)."""
    def premiums(encode):
        try:
            return student.tokenization_premium(encode, parallel, baseline)
        except StudentError:
            return None

    found = together([functools.partial(premiums, encode) for encode in encoders_.values()])
    return {name: got for name, got in zip(encoders_, found, strict=True) if isinstance(got, dict)}


def _cell(value) -> str:
    """A cell as the docstring writes it: floats with three decimals, pipes escaped."""
    return (format(value, ".3f") if type(value) is float else str(value)).replace("|", "\\|")


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def _check_table(table, rows, what):
    expect(type(table) is str, say("{what}: expected a str, got {got}", what=what, got=show(table)))
    lines = table.rstrip("\n").split("\n")
    expect(len(lines) == len(rows) + 2,
           say("{what}: expected {lines} lines (header, separator, one per row), got {got}: {table}", what=what,
               lines=len(rows) + 2, got=len(lines), table=show(table)))
    columns = list(rows[0])
    _in_order(lines[0], [_cell(c) for c in columns], say("{what}: the header line", what=what))
    expect("-" in lines[1] and set(lines[1]) <= set("|-: "),
           say("{what}: the second line should be the separator, got {line!r}", what=what, line=lines[1]))
    for i, (line, row) in enumerate(zip(lines[2:], rows, strict=True)):
        _in_order(line, [_cell(row[c]) for c in columns], say("{what}: the line of row {row}", what=what, row=i))
    pipes = {_unescaped_pipes(line) for line in lines}
    expect(len(pipes) == 1, say("{what}: every line should have the same number of cell separators {pipe} "
                                "(a {pipe} inside a cell is written {escaped}): {table}", what=what, pipe="'|'",
                                escaped="'\\|'", table=show(table)))


def _in_order(line, cells, what):
    start = 0
    for cell in cells:
        found = line.find(cell, start)
        expect(found >= 0, say("{what} should show {cell!r} (after the cells before it): {line!r}", what=what,
                               cell=cell, line=line))
        start = found + len(cell)


_rows = st.lists(st.fixed_dictionaries({
    "encoder": st.sampled_from(["utf8_bytes", "characters", "cl100k_base"]),
    "language": st.sampled_from(["en", "es", "fa", "ko", "zh"]),
    "tokens": st.integers(0, 5000), "chars": st.integers(1, 5000), "bytes": st.integers(1, 20000),
    "tokens_per_char": st.floats(0, 8, allow_nan=False), "premium": st.floats(0, 8, allow_nan=False),
}), min_size=1, max_size=6)


@st.composite
def _parallel_with_baseline(draw, min_languages=1):
    baseline = draw(st.sampled_from(S.LANGUAGES))
    return draw(S.parallel(min_languages=min_languages, baseline=baseline)), baseline


# --------------------------------------------------------------------------- tokens_per_char


@points(2)
@docstring_examples("tokens_per_char(utf8, ['héllo'])", using=LAMBDAS)
@given(name=simple_encoders, texts=S.text_lists())
@example(name="utf8_bytes", texts=["héllo"])
@example(name="utf8_bytes", texts=["a", "中文中文"])
def test_tokens_per_char_is_total_tokens_over_total_chars(student, sandbox, name, texts):
    ("""tokens_per_char is the total tokens of all texts over their total characters (not bytes, not a mean of """
     """ratios).""")
    enc = sandbox.module("encoders")
    expect_close(student.tokens_per_char(getattr(enc, name), texts),
                 sum(len(getattr(encoders, name)(t)) for t in texts) / sum(len(t) for t in texts),
                 f"tokens_per_char({name}, {texts!r})")


# --------------------------------------------------------------------------- tokenization_premium


@points(2)
@docstring_examples("tokenization_premium(utf8, parallel)", using=LAMBDAS)
@given(name=simple_encoders, data=_parallel_with_baseline())
def test_premium_is_language_tokens_over_baseline_tokens(student, reference, sandbox, name, data):
    """tokenization_premium is each language's total tokens over the baseline's total tokens."""
    parallel, baseline = data
    enc = sandbox.module("encoders")
    _check_premium(student.tokenization_premium(getattr(enc, name), parallel, baseline),
                   reference.tokenization_premium(getattr(encoders, name), parallel, baseline),
                   f"tokenization_premium({name}, {parallel!r}, {baseline!r})")


@points(1)
@given(name=simple_encoders, data=_parallel_with_baseline())
@example(name="utf8_bytes", data=({"ru": ["кот", "пёс"], "en": ["cat", "dog"]}, "en"))
def test_baseline_premium_is_exactly_one_and_languages_keep_order(student, sandbox, name, data):
    ("""The baseline's premium is exactly 1.0, the others relative to it, and the result lists the languages in the """
     """order of parallel.""")
    parallel, baseline = data
    got = student.tokenization_premium(getattr(sandbox.module("encoders"), name), parallel, baseline=baseline)
    what = f"tokenization_premium({name}, {parallel!r}, baseline={baseline!r})"
    expect(isinstance(got, dict), say("{what}: expected a dict, got {got}", what=what, got=show(got)))
    expect_equal(list(got), list(parallel), say("the languages of {what}", what=what))
    expect_equal(got[baseline], 1.0, f"{what}[{baseline!r}]")
    tokens = {lang: sum(len(getattr(encoders, name)(t)) for t in parallel[lang]) for lang in parallel}
    for lang in parallel if tokens[baseline] else ():  # every other language relative to the baseline
        expect_close(got[lang], tokens[lang] / tokens[baseline], f"{what}[{lang!r}]")


@hidden
@points(1)
@given(name=simple_encoders, data=_parallel_with_baseline(min_languages=2))
@example(name="characters", data=({"en": ["a", "bbbb"], "xx": ["cc", "dd"]}, "en"))
def test_premium_sums_tokens_not_mean_of_sentence_ratios(student, reference, sandbox, name, data):
    """The premium divides total tokens (all sentences summed), not the mean of per-sentence ratios."""
    parallel, baseline = data
    _check_premium(student.tokenization_premium(getattr(sandbox.module("encoders"), name), parallel, baseline),
                   reference.tokenization_premium(getattr(encoders, name), parallel, baseline),
                   f"tokenization_premium({name}, {parallel!r}, {baseline!r})")


@hidden
@points(1)
@given(data=_parallel_with_baseline(min_languages=2))
def test_bad_parallel_or_baseline_raises(student, sandbox, data):
    ("""Unequal sentence counts, an empty language, an empty dict, an unknown or zero-token baseline, a language """
     """without characters (benchmark) or rows with other keys (render_table) are ValueErrors.""")
    parallel, baseline = data
    enc = sandbox.module("encoders")
    other = next(lang for lang in parallel if lang != baseline)
    unknown = next(lang for lang in ("xx", "yy", "zz") if lang not in parallel)
    silent = {**parallel, baseline: [""] * len(parallel[baseline])}  # the baseline has no tokens at all
    blank = {**parallel, other: [""] * len(parallel[other])}  # a language without a character
    row = {"encoder": "e", "language": "en", "premium": 1.0}
    checks = [
        *(_value_error(lambda bad=bad: student.tokenization_premium(enc.characters, bad, baseline),
                       f"tokenization_premium(characters, <{label}: {bad!r}>, {baseline!r})")
          for label, bad in (("a sentence more", {**parallel, other: parallel[other] + ["one more"]}),
                             ("a sentence less", {**parallel, other: parallel[other][:-1]}),
                             ("an empty language", {**parallel, other: []}))),
        _value_error(lambda: student.tokenization_premium(enc.characters, {}, baseline),
                     f"tokenization_premium(characters, {{}}, {baseline!r})"),
        _value_error(lambda: student.tokenization_premium(enc.characters, parallel, unknown),
                     f"tokenization_premium(characters, {parallel!r}, {unknown!r})"),
        _value_error(lambda: student.tokens_per_char(enc.characters, []), "tokens_per_char(characters, [])"),
        _value_error(lambda: student.tokens_per_char(enc.characters, ["", ""]),
                     "tokens_per_char(characters, ['', ''])"),
        _value_error(lambda: student.benchmark({}, parallel, baseline),
                     f"benchmark({{}}, {parallel!r}, {baseline!r})"),
        _value_error(lambda: student.tokenization_premium(enc.characters, silent, baseline),
                     f"tokenization_premium(characters, {silent!r}, {baseline!r})", naming=("parallel",)),
        _value_error(lambda: student.benchmark({"characters": enc.characters}, blank, baseline),
                     f"benchmark({{'characters': characters}}, {blank!r}, {baseline!r})", naming=("parallel",)),
        *(_value_error(lambda rows=rows: student.render_table(rows), f"render_table({rows!r})", naming=("rows",))
          for rows in ([row, {**row, "extra": 1}], [row, {"encoder": "e", "language": "en"}],
                       [row, {"encoder": "e", "language": "en", "premium2": 1.0}])),
    ]
    together(checks)


# --------------------------------------------------------------------------- benchmark


def _check_example_rows(shown, names):
    """The docstring's rows: sorted by encoder then language, each premium the docstring's, or the
    student's own tokenization_premium (the premium is another property's)."""
    what = say("{call}, the docstring's example", call="[(r['encoder'], r['language'], r['premium']) for r in rows]")
    expect_equal([row[:2] for row in shown], [("chars", "en"), ("chars", "ru"), ("utf8", "en"), ("utf8", "ru")],
                 say("{what}: the {pair} of each row", what=what, pair="(encoder, language)"))
    docstring = {("chars", "en"): 1.0, ("chars", "ru"): 1.0, ("utf8", "en"): 1.0, ("utf8", "ru"): 2.0}
    for encoder, language, premium in shown:
        try:
            mine = names["tokenization_premium"](names[encoder], names["parallel"]).get(language)
        except (StudentError, AttributeError):
            mine = None
        if not (type(mine) in (int, float) and type(premium) in (int, float) and math.isclose(premium, mine)):
            expect_close(premium, docstring[encoder, language],
                         say("{what}: the premium of {row}", what=what, row=f"({encoder!r}, {language!r})"))


@points(2)
@docstring_examples("[(r['encoder'], r['language'], r['premium']) for r in rows]", using=LAMBDAS,
                    check=_check_example_rows)
@given(names=st.lists(simple_encoders, min_size=1, max_size=3, unique=True),
       labels=st.permutations(["utf8", "chars", "words"]), data=_parallel_with_baseline())
def test_benchmark_rows_sorted_by_encoder_then_language(student, reference, sandbox, names, labels, data):
    """benchmark gives one row per (encoder, language), sorted, with the totals, tokens_per_char and premium."""
    parallel, baseline = data
    enc = sandbox.module("encoders")
    mine = {label: getattr(enc, name) for label, name in zip(labels, names, strict=False)}
    ref = {label: getattr(encoders, name) for label, name in zip(labels, names, strict=False)}
    shown = {label: name for label, name in zip(labels, names, strict=False)}
    _check_rows(student.benchmark(mine, parallel, baseline), reference.benchmark(ref, parallel, baseline),
                f"benchmark({shown!r}, {parallel!r}, {baseline!r})", _own_premiums(student, mine, parallel, baseline))


@hidden
@points(2)
def test_benchmark_on_course_parallel_data_with_cl100k(student, reference, sandbox, course):
    """benchmark on the course's parallel sentences with the four encoders, cl100k_base included."""
    from tokcourse.assets import use_offline_tiktoken

    use_offline_tiktoken(course.root)
    parallel = json.loads(course.path(course.data["parallel"]).read_text(encoding="utf-8"))
    enc = sandbox.module("encoders")
    mine = {"cl100k_base": enc.cl100k, "utf8_bytes": enc.utf8_bytes, "characters": enc.characters,
            "whitespace_words": enc.whitespace_words}
    sentences = say("<the course's parallel sentences>")
    _check_rows(student.benchmark(mine, parallel), reference.benchmark(encoders.ENCODERS, parallel),
                f"benchmark({say('<the four encoders>')}, {sentences})",
                _own_premiums(student, mine, parallel))


# --------------------------------------------------------------------------- render_table


def _check_example_table(table, names):
    """The docstring's table, checked for its cells in order, as any table is."""
    _check_table(table, names["rows"][2:], say("{call}, the docstring's example", call="render_table(rows[2:])"))


@points(2)
@docstring_examples("print(render_table(rows[2:]))", check=_check_example_table, given={"rows": EXAMPLE_ROWS})
@given(rows=_rows)
def test_render_table_contains_header_and_every_cell(student, rows):
    """render_table writes a header, a separator and one line per row showing each cell (floats with 3 decimals)."""
    _check_table(student.render_table(rows), rows, f"render_table({rows!r})")


@hidden
@points(1)
@given(label=st.sampled_from(["a|b", "|", "x || y", "plain"]), value=st.sampled_from([1.5, 2, "p|q"]))
def test_render_table_escapes_pipes(student, label, value):
    """A '|' inside a cell or a column name is written as '\\|' so every line keeps its cells."""
    rows = [{"encoder": label, "a|b": value, "premium": 1.0}, {"encoder": "e", "a|b": 3, "premium": 2.25}]
    _check_table(student.render_table(rows), rows, f"render_table({rows!r})")


# --------------------------------------------------------------------------- bad input


@points(1)
def test_bad_argument_types_raise_type_errors_by_the_shared_rules(student, sandbox, course):
    ("""Every graded function, on every parameter, follows the type rules of exercises/__init__.py: a tuple is not """
     """a list, a number is not an encoder, one key, value or item of the wrong type is a TypeError too, each naming """
     """the argument.""")
    expect_bad_input_rules(student, graded_functions(course, "ex4_multilingual"),
                           callable_value=sandbox.module("encoders").characters)
