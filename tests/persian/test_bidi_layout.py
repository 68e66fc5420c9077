"""Every Persian text a student reads, laid out by a real implementation of the Unicode
bidirectional algorithm (python-bidi: Rust's unicode-bidi), as a terminal, an editor or a browser
lays it out: each line of prose reads right to left, each code span, call, formula and value in
it stays whole and left to right, and each cell of the self-check's table keeps its column
(docs/persian.md, "Right to left")."""

from __future__ import annotations

import ast
import io
import itertools
import re
import string
from functools import cache
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from bidi import get_base_level, get_display
from rich.console import Console

from autograder import bidi
from autograder.config import load_course
from autograder.delivery.release import student_readme
from autograder.engine.report_files import feedback_markdown
from autograder.engine.run import grade_staged
from autograder.i18n import LOCALE_DIR
from autograder.intake.staging import stage
from autograder.reports.terminal import print_check
from autograder.results import Grade
from autograder.translation import module_source, title
from tests.conftest import ROOT

ENGLISH = load_course(ROOT / "course.yaml")
_FA = ENGLISH.model_copy(update={"language": "fa"})
PERSIAN = _FA.model_copy(update={"title": title(_FA), "exercises": [e.model_copy(update={"title": title(_FA, e)})
                                                                     for e in ENGLISH.exercises]})
PERSIAN_LETTER = re.compile(r"[\u0620-\u064A\u066E-\u06D3\u06D5\u06FA-\u06FF]")  # a letter, not a comma or a digit
SPAN = re.compile(r"``.+?``")
EDGES = " \t.,:;،؛()«»!?؟-—"


# --- the algorithm's verdict on a line -------------------------------------------------------------


def shown(text: str, base: str | None = None) -> str:
    """``text`` (one line) as it is shown, left to right on screen, without the invisible controls."""
    return bidi.visible(get_display(text, base_dir=base) if base else get_display(text))


def isolates(line: str) -> list[tuple[str, str]]:
    """What each isolate of ``line`` holds (outermost first, then those inside), with its kind."""
    found, opened = [], []
    for at, char in enumerate(line):
        if char in (bidi.LRI, bidi.FSI):
            opened.append((char, at))
        elif char == bidi.PDI and opened:
            kind, start = opened.pop()
            found.append((kind, line[start + 1:at]))
    return found


def fragments(line: str) -> list[tuple[str, str | None]]:
    """The code and values of ``line``, each with the direction it is laid out in by itself
    (``L``, or None: its own first strong letter's): what its isolates hold, its code spans, and
    each run of Latin letters or digits between its Persian words."""
    found: list[tuple[str, str | None]] = [(text, "L" if kind == bidi.LRI else None) for kind, text in isolates(line)]
    plain = bidi.visible(line)
    found += [(span.group(0), "L") for span in SPAN.finditer(plain)]
    rest = SPAN.sub("ـ", re.sub("[\u2066\u2068].*?\u2069", "ـ", line))  # what no isolate or span marks
    rest = re.sub(r"^\s*(\d+\.|[-*])\s", "", bidi.visible(rest))  # a list's marker
    for run in re.split(r"[\u0600-\u06FF\u200c]+(?:[\s«»]+[\u0600-\u06FF\u200c]+)*", rest):
        run = run.strip(EDGES)
        # a formula or a call (words, and a number with its unit, are whole by themselves)
        if re.search(r"[\w)\]]\s*[-+*/=<>^]=?\s*[\w(\[]|\w[(\[]", run) and "ـ" not in run:
            found.append((run, "L"))
    # a signed number (its minus would go to the right of its digits after Persian text)
    found += [(number, "L") for number in re.findall(r"(?<![\w)\]ـ])-\d+(?:\.\d+)?", rest)]
    return found


def problems(line: str, base: str | None = None) -> list[str]:
    """Where the algorithm breaks ``line``: prose laid out left to right, a fragment not whole."""
    said = []
    if PERSIAN_LETTER.search(re.sub("[\u2066\u2068].*?\u2069", "", line)) and base is None \
            and get_base_level(line) != 1:
        said.append("its prose is laid out left to right (its first strong letter is Latin)")
    screen = shown(line, base)
    for fragment, direction in fragments(line):
        if shown(fragment, direction) not in screen:
            said.append(f"{bidi.visible(fragment)!r} is shown as {screen!r}")
    if base == "R" or (base is None and get_base_level(line) == 1):
        said += [f"{first!r} and {then!r} are shown in left-to-right order: {screen!r}"
                 for first, then in neighbours(bidi.visible(line)) if screen.find(first) < screen.rfind(then)]
    return said




def neighbours(plain: str) -> list[tuple[str, str]]:
    """The code spans and signed numbers of a line of prose that only punctuation sets apart
    (``a b a`` (-6)، ``ab a``): a reader of right-to-left prose reads the first of each pair
    first, on the right."""
    found = list(re.finditer(r"``[^`]+``|(?<![\w.`])-\d[\d.]*", plain))
    return [(first.group(0), then.group(0)) for first, then in itertools.pairwise(found)
            if re.fullmatch(r"[\s،؛:(]*", plain[first.end():then.start()])
            and plain.count(first.group(0)) == plain.count(then.group(0)) == 1]  # where each is found once


def text_problems(text: str, where: str) -> list[str]:
    """Where the lines of plain ``text`` with Persian in them break (a line of code whose Persian is
    its comment is code, laid out left to right)."""
    return [f"{where}: {line.strip()[:90]!r}: {problem}" for line in text.splitlines()
            if PERSIAN_LETTER.search(re.sub(r"  # .*$", "", line)) for problem in problems(line)]


def markdown_problems(text: str, where: str) -> list[str]:
    """Markdown as a page shows it: the prose of a ``<div dir="rtl">`` laid out right to left, a
    ``<span dir="ltr">`` isolated left to right, other tags unseen."""
    found, rtl = [], False
    for line in text.splitlines():
        if line.startswith("<div dir=") or line == "</div>":
            rtl = line == '<div dir="rtl">'
            continue
        if not rtl or not PERSIAN_LETTER.search(line):
            continue
        line = re.sub(r'<span dir="ltr">(.*?)</span>', f"{bidi.LRI}\\1{bidi.PDI}", line)
        line = re.sub(r"</?\w+[^>]*>|\*\*", "", line).strip()
        line = re.sub(r"^(#+|[-*]|\d+\.)\s+", "", line)
        cells = line.strip("|").split("|") if line.startswith("|") else [line]  # a table's cells: each its own box
        found += [f"{where}: {cell[:90]!r}: {problem}" for cell in cells
                  for problem in problems(cell.strip(), base="R")]
    return found


# --- the texts -----------------------------------------------------------------------------------


def docstring_lines(source: str) -> list[str]:
    """The lines of prose of every docstring in ``source`` (not its doctests, not its ``::`` blocks)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node, clean=False):
            block = None
            for line in ast.get_docstring(node, clean=False).splitlines():
                indent = len(line) - len(line.lstrip())
                if block is not None and (not line.strip() or indent > block):
                    continue
                block = indent if line.rstrip().endswith("::") else None
                if not line.lstrip().startswith((">>>", "...")):
                    lines.append(line)
    return lines


MODULES = [*sorted((ROOT / "exercises").glob("*.py")), *(ENGLISH.path(m) for m in ENGLISH.sandbox.support_modules)]


def bare_lines(lines: list[str]) -> list[str]:
    """The lines of a docstring's Persian paragraphs that have no Persian letter and no code span
    around them (a formula alone on its line): a page that lays the paragraph out right to left
    lays them out right to left too."""
    found, in_span = [], False
    for at, line in enumerate(lines):
        near = [lines[at + step] for step in (-1, 1) if 0 <= at + step < len(lines) and lines[at + step].strip()]
        if line.strip() and not in_span and "``" not in line and not PERSIAN_LETTER.search(line) \
                and any(PERSIAN_LETTER.search(other) for other in near):
            found.append(line)
        in_span = in_span != (line.count("``") % 2 == 1)
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_every_persian_docstring_reads_right_to_left_with_its_code_whole(path):
    source = module_source(PERSIAN, path)
    lines = docstring_lines(source)
    found = [problem for line in lines if PERSIAN_LETTER.search(line) for problem in problems(line)]
    found += [f"{line.strip()!r}: {problem}" for line in bare_lines(lines) for problem in problems(line, base="R")]
    assert not found, "\n".join(found)


def test_the_review_s_formulas_are_shown_as_written():
    """The formulas the review found reversed (ex3, ex2, ex5) are shown left to right."""
    sources = {path.stem: module_source(PERSIAN, path) for path in MODULES}
    for module, formula in [("ex3_wordpiece", "1 / (3 * 1)"), ("ex3_wordpiece", "``##u ##g``"),
                            ("ex2_special_tokens", "``0 .. vocab_size - 1``"), ("ex5_parity", "``0.5 * 1.1 = 0.55``")]:
        lines = [line for line in docstring_lines(sources[module]) if formula in bidi.visible(line)]
        assert lines, (module, formula)
        assert all(formula in shown(line) for line in lines), (module, formula, [shown(line) for line in lines])


def test_the_persian_readme_reads_right_to_left_with_its_code_isolated():
    readme = student_readme(PERSIAN)
    assert not markdown_problems(readme, "README.md"), "\n".join(markdown_problems(readme, "README.md"))
    # every code span in its prose is isolated, not only those whose edges would move
    assert '<span dir="ltr">`course.yaml`</span>' in readme and '<span dir="ltr">`check my-work.zip`</span>' in readme


def catalog_lines() -> list[tuple[str, str]]:
    """Each Persian text of the engine's catalog filled with values that the algorithm would move
    if they were not isolated (a call, a value with a neutral at each edge, a number)."""
    catalog = []
    for po in (LOCALE_DIR / "fa" / "LC_MESSAGES" / "autograder.po",
               ROOT / "tokcourse" / "locale" / "fa" / "LC_MESSAGES" / "tokcourse.po"):
        with po.open("rb") as file:
            catalog += list(read_po(file))
    filled = []
    for message in catalog:
        for text in message.string if isinstance(message.string, tuple) else [message.string] if message.id else []:
            values = {name: 1.5 if spec else "f('a', [1, 2]) + 1" for _, name, spec, _ in
                      string.Formatter().parse(text) if name}
            filled.append((str(message.id), text.format(**values)))
    return filled


CATALOG = catalog_lines()
with (LOCALE_DIR / "fa" / "LC_MESSAGES" / "autograder.po").open("rb") as _po:
    CATALOG_TEXTS = [(str(m.id), m.string) for m in read_po(_po) if isinstance(m.string, str) and m.id]


@pytest.mark.parametrize("message, text", CATALOG, ids=[message[:40] for message, _ in CATALOG])
def test_every_persian_message_isolates_what_it_names_and_reads_right_to_left(message, text):
    assert not text_problems(text, message)


def test_an_unisolated_call_is_found():
    """The check can fail: the review's failure line, as the catalog wrote it before."""
    line = "compression_ratio('aaaa'): انتظار 1.0 می‌رفت (با رواداری 1e-09)، ولی 0.5 به دست آمد"
    assert problems(line)
    assert problems("آستانه 1 / (3 * 1) است")
    assert problems("هر دو -4: در تساوی") and problems("از -5 به -6 پایین می‌آورد")  # the reader's M5
    assert bare_lines(["پس امتیازش", "  1 / (3 * 1)", "بیشتر است"]) == ["  1 / (3 * 1)"]  # M7
    assert problems("  1 / (3 * 1)", base="R")
    # M6: spans and scores that only a comma sets apart are read in the wrong order
    assert problems("سه قطعه‌بندی دارد: \u200e``a b a``\u200e (-6)، \u200e``ab a``\u200e (-5) و")
    assert not problems(f"برای {bidi.LRI}compression_ratio('aaaa'){bidi.PDI} انتظار {bidi.LRI}1.0{bidi.PDI} می‌رفت")


# --- what grading writes -----------------------------------------------------------------------------


@cache
def persian_grade(sample: str) -> Grade:
    staged = stage(PERSIAN, ROOT / sample)
    try:
        return grade_staged(PERSIAN, staged.root, staged.notes)
    finally:
        staged.remove()


SAMPLES = ["samples/partly_wrong", "exercises"]  # graded with the course's data, in workers: sandbox and data


@pytest.mark.sandbox
@pytest.mark.data
@pytest.mark.parametrize("sample", SAMPLES)
def test_persian_feedback_reads_right_to_left_with_its_code_whole(sample):
    grade = persian_grade(sample)
    found = markdown_problems(feedback_markdown(PERSIAN, Path(sample).name, grade), "feedback.md")
    found += [problem for result in grade.results for problem in text_problems(result.output, result.name)]
    assert not found, "\n".join(found[:20])


def check_output(grade: Grade, width: int = 120) -> list[str]:
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    print_check(console, PERSIAN, grade)
    return console.export_text().splitlines()


TABLE_BORDERS = re.compile("[│┃]")


@pytest.mark.sandbox
@pytest.mark.data
@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("width", [120, 72, 60])  # 72 and 60: rich wraps the cells, each on two lines or more
def test_the_persian_self_check_keeps_each_cell_in_its_column(sample, width):
    rows = [line for line in check_output(persian_grade(sample), width) if TABLE_BORDERS.search(line)]
    assert rows
    assert width > 100 or len(rows) > len([row for row in rows if re.search(r"ex\d_", row)]) + 1  # it wrapped
    for row in rows:
        assert_cells_kept(row)


def assert_cells_kept(row: str) -> None:
    """Each cell of ``row`` (one physical line) shown in its own column, and the row left to right
    whatever the terminal's own direction (a continuation line starts with Persian)."""
    cells = [shown(cell).strip() for cell in TABLE_BORDERS.split(row)]
    for base in (None, "R"):
        assert [cell.strip() for cell in TABLE_BORDERS.split(shown(row, base))] == cells, (row, shown(row, base))


def test_a_table_row_without_isolates_scrambles():
    """The check can fail: the review's row, as the table printed it before."""
    row = "│ ex5_parity │ 20 │ 3 از 5 امتیاز │ 2 از 2 قبول │ 1 ویژگی │"
    assert [c.strip() for c in TABLE_BORDERS.split(shown(row))] != [shown(c).strip() for c in TABLE_BORDERS.split(row)]


@pytest.mark.sandbox
@pytest.mark.data
@pytest.mark.parametrize("sample", SAMPLES)
def test_the_persian_self_check_s_words_read_right_to_left_with_their_code_whole(sample):
    lines = [line for line in check_output(persian_grade(sample)) if not TABLE_BORDERS.search(line)]
    found = text_problems("\n".join(lines), "check")
    assert not found, "\n".join(found[:20])


def test_a_bad_input_failure_reads_its_rule_in_persian_order():
    """The reader's finding H2: the rule after a call (``f(x) (a tuple where a list is expected)``)
    is prose, laid out right to left beside the call, not inside the call's left-to-right isolate;
    and no catalog text for plain text writes Markdown's backticks, which a terminal prints as they are."""
    texts = dict(CATALOG_TEXTS)
    rule = texts["a tuple where a list is expected"]
    what = texts["{call} ({rule})"].format(call="get_pair_counts((2, 2))", rule=rule)
    line = texts["{what}: expected {expected}, but it returned {result}"].format(
        what=what, expected="TypeError", result="{(2, 2): 1}")
    assert shown(rule, "R") in shown(line), shown(line)
    assert not problems(line)
    assert not [text for message, text in CATALOG_TEXTS if "`" in text and not message.startswith("#")]
