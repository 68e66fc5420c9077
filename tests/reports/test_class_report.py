"""The class report (``python -m autograder report``, :mod:`autograder.reports.class_report`).

The fast tests build a grades folder by hand (the gradebook and results.json that ``grade``
writes) and check what the page makes of it; the slow ones grade a batch with a known answer
(stubs, a correct alternative, catalog mutants and two near-copies of another alternative,
made by renaming its local variables) on exercise 1, check the failure shares, the
counterexamples and the similarity ranking, and render the page in headless Chromium.

``suites/mutant-catalog.yaml`` (``report.mutants`` in course.yaml) is made from
``tests/course/catalog.py``: ``python -m tests.reports.test_class_report`` writes it again after the catalog
changes, and a test fails while the two disagree.
"""

from __future__ import annotations

import ast
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.batch.gradebook import Gradebook
from autograder.config import load_course
from autograder.delivery.nbgrader.feedback import feedback_text, read_feedback
from autograder.engine.report_files import write_reports
from autograder.errors import GraderError
from autograder.reports.class_report.load import load_batch
from autograder.reports.class_report.names import KEY_FILE, Names
from autograder.reports.class_report.page import CSP, build_report, open_batch
from autograder.reports.class_report.similarity import compare
from autograder.reports.class_report.stats import read_failure
from autograder.results import Grade, PropertyResult
from tests.conftest import COURSE, ROOT, autograder

# one process makes the real batch once (its fixture grades six submissions)
pytestmark = pytest.mark.xdist_group(__name__)

MUTANT_MAP = ROOT / "suites" / "mutant-catalog.yaml"
ALTERNATIVES = ROOT / "tests" / "course" / "alternatives"
MUTANT_MAP_HEADER = ("# Made from tests/course/catalog.py by `python -m tests.reports.test_class_report`: "
                     "per exercise,\n"
                     "# each property and the catalog mutants (mistakes planted in the reference, and\n"
                     "# one-bug variants of a submission written from the docstrings alone) named\n"
                     "# after what it catches. The class report (course.yaml: report.mutants) links\n"
                     "# each property to them.\n")


def mutant_map() -> dict[str, dict[str, list[str]]]:
    from tests.course.catalog import MUTANTS

    found: dict[str, dict[str, list[str]]] = {}
    for mutant in MUTANTS:
        found.setdefault(mutant.exercise, {}).setdefault(mutant.fails, []).append(mutant.name)
    return {exercise: dict(sorted(properties.items())) for exercise, properties in sorted(found.items())}


def mutant_map_text() -> str:
    return MUTANT_MAP_HEADER + yaml.safe_dump(mutant_map(), sort_keys=False, width=200)


# --------------------------------------------------------------------------- a hand-made batch

EX = "ex1_merge_tracing"
BONUS = "ex6_unigram"
MERGE_FAILURE = """merge_pair replaces the pair left to right, never reusing an id of the previous match.

merge_pair([5, 5, 5], (5, 5), 999): expected [999, 5], got [5, 999]

Falsifying explicit example: test_merge_pair_replaces_left_to_right_without_overlap(
    ids=[5, 5, 5],
    pair=(5, 5),
)"""
OTHER_FAILURE = MERGE_FAILURE.replace("[5, 5, 5]", "[7, 7, 7]").replace("(5, 5)", "(7, 7)").replace(
    "[999, 5]", "[999, 7]").replace("[5, 999]", "[7, 999]")
STUB_FAILURE = """merge_pair replaces the pair left to right, never reusing an id of the previous match.

ex1_merge_tracing.merge_pair([5, 5, 5], (5, 5), 999): not implemented yet"""
STUB_WITH_EXAMPLE = STUB_FAILURE + """

Falsifying explicit example: test_merge_pair_replaces_left_to_right_without_overlap(
    ids=[5, 5, 5],
    pair=(5, 5),
)"""  # what a stub's feedback says of an explicit @example: the same example a real mistake may hit
HIDDEN_FAILURE = "Among equally frequent pairs, trace_merges merges the leftmost. — wrong result."


def _grade(merge: str | None, hidden_passes: bool, bonus: int = 0) -> Grade:
    results = (
        PropertyResult(EX, "test_merge_pair_replaces_left_to_right_without_overlap", 2, 0 if merge else 2,
                       merge is None, False, merge or ""),
        PropertyResult(EX, "test_ties_break_to_leftmost_first_occurrence", 3, 3 if hidden_passes else 0,
                       hidden_passes, True, "" if hidden_passes else HIDDEN_FAILURE),
        PropertyResult(EX, "test_the_rest", 15, 15, True, False, ""),
        PropertyResult(BONUS, "test_viterbi", 10, bonus, bonus == 10, False, "" if bonus else STUB_FAILURE),
    )
    return Grade(results, ("isolation note",), 12.5)


BATCH = {  # name -> grade; 5 graded submissions, one unreadable
    "alice": _grade(MERGE_FAILURE, True),
    "bob": _grade(MERGE_FAILURE, False, bonus=10),
    "carol": _grade(OTHER_FAILURE, True),
    "dave": _grade(None, False),
    "erin": _grade(None, True, bonus=10),
}


@pytest.fixture
def grades(tmp_path):
    course = load_course(COURSE)
    folder = tmp_path / "grades"
    folder.mkdir()
    book = Gradebook(folder)
    key = {"course_digest": "c", "seed": 1, "engine_version": "t", "isolation": "test", "max_score": course.max_score}
    for name, grade in BATCH.items():
        write_reports(course, folder / name, name, grade)
        book.record(name, {**key, "digest": name}, grade, 10.0 + len(name))
    unreadable = Grade.unreadable(course, "The submission could not be read: bad zip")
    write_reports(course, folder / "zed", "zed", unreadable)
    book.record("zed", {**key, "digest": "unreadable"}, unreadable, 0.0, note="unreadable")
    book.write_csv(course, folder / "grades.csv")
    book.close()
    return folder


def property_rows(page: str) -> dict[str, tuple[int, int]]:
    """``exercise.property -> (failed, graded)`` from the property table's rows."""
    return {key: (int(failed), int(graded)) for key, failed, graded in
            re.findall(r'data-property="([^"]+)" data-failed="(\d+)" data-graded="(\d+)"', page)}


def test_read_failure_takes_the_example_the_call_and_the_reference_answer_apart():
    example = read_failure(MERGE_FAILURE)
    assert example.arguments == "ids=[5, 5, 5], pair=(5, 5)"
    assert example.call == "merge_pair([5, 5, 5], (5, 5), 999)"
    assert example.expected == "[999, 5]"
    stub = read_failure(STUB_FAILURE)
    assert (stub.arguments, stub.expected) == ("", "")
    assert stub.reason.endswith("not implemented yet")


def test_report_shares_counterexamples_bonus_and_privacy_note(grades, tmp_path):
    out = tmp_path / "report.html"
    found = build_report(load_course(COURSE), grades, out)
    page = out.read_text(encoding="utf-8")
    assert found["submissions"] == 6 and found["pairs"] is None
    rows = property_rows(page)
    # the unreadable submission is left out of the shares: 5 graded
    assert rows[f"{EX}.test_merge_pair_replaces_left_to_right_without_overlap"] == (3, 5)
    assert rows[f"{EX}.test_ties_break_to_leftmost_first_occurrence"] == (2, 5)
    assert rows[f"{EX}.test_the_rest"] == (0, 5)
    assert rows[f"{BONUS}.test_viterbi"] == (3, 5)
    shares = [failed / graded for failed, graded in rows.values()]
    assert shares == sorted(shares, reverse=True), "properties are not sorted by failure share"
    # the most common counterexample (2 of the 3), with the reference's answer; the other one below it
    block = page.split(f'id="ex-{EX}-test_merge_pair_replaces_left_to_right_without_overlap"')[1].split(
        '<div class="example"')[0]
    assert block.index("ids=[5, 5, 5], pair=(5, 5)") < block.index("ids=[7, 7, 7]")
    assert '<td class="count">2</td>' in block and "[999, 5]" in block
    # hidden: counts only, nothing of its feedback beyond the summary
    assert f'id="ex-{EX}-test_ties_break' not in page and "wrong result" not in page
    assert 'id="bonus"' in page and "2 of 6 submissions earned some" in page  # the unreadable one too, at 0
    assert "Contains student data" in page and "alice" in page
    assert "not a verdict" in page and "Not computed" in page
    for section in ("scores", "wrong", "similarity", "privacy"):
        assert f'<section id="{section}">' in page


def test_scores_count_every_submission_of_grades_csv_with_and_without_the_bonus(grades, tmp_path):
    """One definition of each number on the page and in grades.csv: every submission counts
    (an unreadable one at 0); a total is every point earned, bonus included (``score``), and
    beside it the points of the exercises that are not bonus (``score_without_bonus``)."""
    import csv

    out = tmp_path / "report.html"
    build_report(load_course(COURSE), grades, out)
    page = out.read_text(encoding="utf-8")
    with open(grades / "grades.csv", newline="", encoding="utf-8") as table:
        rows = list(csv.DictReader(table))
    found = re.findall(r'<tr class="submission" data-name="([^"]+)" data-total="([^"]+)" '
                       r'data-without-bonus="([^"]+)"', page)
    assert {name: (total, regular) for name, total, regular in found} == {
        row["submission"]: (row["score"], row["score_without_bonus"]) for row in rows}
    assert dict((name, total) for name, total, _ in found)["bob"] == "25"  # 15 of ex1 and the 10 of the bonus
    assert dict((name, regular) for name, _, regular in found)["bob"] == "15"
    assert "(n = 6)" in page and "unreadable submissions count with 0 points (here 1)" in page
    assert "bonus included" in page and "the score_without_bonus column of grades.csv" in page
    assert re.search(r"Total without the bonus, out of 20: median <b>[\d.]+</b>", page)  # ex1 and the bonus graded


def write_batch(folder: Path, grades: dict[str, Grade]) -> Path:
    """A grades folder as ``grade`` leaves it: each submission's reports and gradebook row."""
    course = load_course(COURSE)
    folder.mkdir()
    book = Gradebook(folder)
    for name, grade in grades.items():
        write_reports(course, folder / name, name, grade)
        book.record(name, {"course_digest": "c", "seed": 1, "engine_version": "t", "digest": name, "isolation": "test",
                           "max_score": course.max_score}, grade, grade.seconds or 0.0)
    book.close()
    return folder


def test_an_untouched_stub_is_no_counterexample(tmp_path):
    """Three students who have not written merge_pair and two with a real mistake: the most
    common counterexample is the mistake's, and the stubs are counted apart."""
    failures = {f"stub{i}": STUB_WITH_EXAMPLE for i in range(3)} | {"amy": OTHER_FAILURE, "ann": OTHER_FAILURE,
                                                                    "zoe": ""}
    folder = write_batch(tmp_path / "grades", {
        name: Grade((PropertyResult(EX, "test_merge_pair_replaces_left_to_right_without_overlap", 2,
                                    0 if output else 2, not output, False, output),), ("isolation note",), 1.0)
        for name, output in failures.items()})
    out = tmp_path / "report.html"
    build_report(load_course(COURSE), folder, out)
    page = out.read_text(encoding="utf-8")
    assert 'data-failed="5" data-graded="6" data-unwritten="3"' in page
    block = page.split(f'id="ex-{EX}-test_merge_pair_replaces_left_to_right_without_overlap"')[1]
    top = block.split("most common smallest counterexample", 1)[1].split("</table>")[0]
    assert "ids=[7, 7, 7]" in top and '<td class="count">2</td>' in top, top
    assert "ids=[5, 5, 5]" not in block and "3 of the 5 failed on a function not written yet" in block


def test_one_of_a_thing_is_counted_in_the_singular_and_only_what_is_shown_is_pointed_at(tmp_path, command_here):
    """A lone submission whose only failure is a stub: "1 submission", never "1 submissions",
    and no "counterexamples above" where none is shown."""
    folder = write_batch(tmp_path / "grades", {"stub": Grade((PropertyResult(
        EX, "test_merge_pair_replaces_left_to_right_without_overlap", 2, 0, False, False, STUB_WITH_EXAMPLE),),
        ("isolation note",), 1.0)})
    out = tmp_path / "report.html"
    found = build_report(load_course(COURSE), folder, out)
    page = " ".join(out.read_text(encoding="utf-8").split())
    assert found["submissions"] == 1 and "1 submission in" in page and "among the 1 submission whose code ran" in page
    assert not re.search(r"\b1 (submissions|pairs|students)\b", page)
    block = page.split(f'id="ex-{EX}-test_merge_pair_replaces_left_to_right_without_overlap"')[1].split("</div>")[0]
    assert "1 of the 1 failed on a function not written yet" in block and "above" not in block, block
    said = command_here("report", str(folder), "--out", str(tmp_path / "again.html"))
    assert "1 submission, 1 of 1 property failed by someone" in " ".join(said.stdout.split()), said.stdout


def test_report_keeps_a_page_already_there_unless_forced_and_names_a_folder_in_one_line(tmp_path, command_here):
    """Without --out the page is ./report.html, as --help says; a page already there (another
    class's, say) is kept unless --force; an --out that is a folder is one line, not a traceback."""
    folder = write_batch(tmp_path / "grades", {"stub": Grade((PropertyResult(
        EX, "test_merge_pair_replaces_left_to_right_without_overlap", 2, 0, False, False, STUB_FAILURE),),
        ("isolation note",), 1.0)})
    here = tmp_path / "here"
    here.mkdir()
    assert "(default: report.html, here)" in " ".join(command_here("report", "--help").stdout.split())
    kept = here / "report.html"
    kept.write_text("last term's page", encoding="utf-8")
    refused = command_here("report", str(folder), cwd=here)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip() == "error: --out report.html: already there; --force replaces it", refused.stderr
    assert kept.read_text(encoding="utf-8") == "last term's page"
    forced = command_here("report", str(folder), "--force", cwd=here)
    assert forced.returncode == 0 and "<html" in kept.read_text(encoding="utf-8"), forced.stderr
    into_folder = command_here("report", str(folder), "--out", str(here))
    assert into_folder.returncode == 2 and "Traceback" not in into_folder.stderr, into_folder.stderr
    assert into_folder.stderr.strip() == f"error: --out {here}: a folder; name the file to write in it"


def test_page_is_self_contained(grades, tmp_path):
    out = tmp_path / "report.html"
    build_report(load_course(COURSE), grades, out)
    page = out.read_text(encoding="utf-8")
    assert f'content="{CSP}"' in page
    assert not re.search(r'(src|href)="(?!data:|#)', page), "the page refers to something outside itself"
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert page.count('src="data:image/svg+xml;base64,') >= 3


def test_anonymise_gives_stable_pseudonyms_and_names_nobody(grades, tmp_path):
    course = load_course(COURSE)
    first, second = tmp_path / "a.html", tmp_path / "b.html"
    build_report(course, grades, first, anonymise=True)
    build_report(course, grades, second, anonymise=True)
    page = first.read_text(encoding="utf-8")
    for name in BATCH:
        assert not re.search(rf"\b{name}\b", page), f"{name} appears in the anonymised page"
    pseudonyms = sorted(set(re.findall(r"student-[0-9a-f]{8}", page)))
    assert len(pseudonyms) == 6
    assert pseudonyms == sorted(set(re.findall(r"student-[0-9a-f]{8}", second.read_text(encoding="utf-8"))))
    assert (grades / KEY_FILE).stat().st_mode & 0o077 == 0
    other = Names(tmp_path, ["alice"], anonymise=True)  # another key: other pseudonyms
    assert other("alice") not in pseudonyms


def test_mutant_catalog_links_each_property_to_its_mutants(grades, tmp_path):
    course = load_course(COURSE)
    assert course.report.mutants and course.path(course.report.mutants) == MUTANT_MAP
    out = tmp_path / "report.html"
    build_report(course, grades, out)
    page = out.read_text(encoding="utf-8")
    merge = mutant_map()[EX]["test_merge_pair_replaces_left_to_right_without_overlap"]
    marker = f'data-property="{EX}.test_merge_pair_replaces_left_to_right_without_overlap"'
    row = page.split(marker)[1].split("</tr>")[0]
    for mutant in merge:
        assert f'href="#mutant-{mutant}"' in row and f'id="mutant-{mutant}"' in page


def test_mutant_map_matches_the_catalog():
    assert MUTANT_MAP.read_text(encoding="utf-8") == mutant_map_text(), (
        "suites/mutant-catalog.yaml is stale: run `python -m tests.reports.test_class_report`")


def test_no_gradebook_is_one_clear_error(tmp_path, command_here):
    with pytest.raises(GraderError, match="no gradebook.sqlite"):
        load_batch(tmp_path)
    (tmp_path / "gradebook.db").write_bytes(b"")  # an nbgrader course's, but no gradebook
    with pytest.raises(GraderError, match="cannot be read as nbgrader's gradebook"):
        open_batch(load_course(COURSE), tmp_path)
    assert (tmp_path / "gradebook.db").stat().st_size == 0, "reading nbgrader's gradebook wrote to it"
    done = command_here("report", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r.html"))
    assert done.returncode == 2 and "no gradebook.sqlite" in done.stderr and "nor gradebook.db" in done.stderr


def test_nbgrader_feedback_reads_back_as_written():
    """What the report takes from an autograded notebook: the public results as the engine
    wrote them, the hidden ones as a count, and whether nbgrader cut the text."""
    grade = BATCH["bob"]
    text = feedback_text(EX, 20, grade)
    feedback = read_feedback(EX, text)
    assert feedback is not None and not feedback.cut
    assert feedback.public == tuple(r for r in grade.results if r.exercise == EX and not r.hidden)
    assert (feedback.hidden_passed, feedback.hidden_total) == (0, 1)
    assert read_feedback(BONUS, text) is None and read_feedback(EX, "FORGED\n") is None
    cut = text.splitlines()[:4] + ["... Output truncated ..."]
    assert read_feedback(EX, "\n".join(cut)).cut  # type: ignore[union-attr]


# --------------------------------------------------------------------------- near-copies


def rename_locals(source: str, suffix: str) -> str:
    """``source`` with every local variable of its functions renamed (``x`` -> ``x<suffix>``),
    parameters, globals and attributes left alone, so that it behaves the same: the near-copy a
    student makes of someone else's work."""
    tree = ast.parse(source)
    places: list[tuple[int, int, str]] = []
    for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        parameters = {a.arg for a in ast.walk(function) if isinstance(a, ast.arg)}  # nested ones too
        declared = {name for n in ast.walk(function) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        local = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        local -= parameters | declared
        places += [(n.lineno, n.col_offset, n.id) for n in ast.walk(function)
                   if isinstance(n, ast.Name) and n.id in local]
    lines = source.splitlines(keepends=True)
    for line, column, name in sorted(set(places), reverse=True):  # right to left: offsets stay right
        raw = lines[line - 1].encode("utf-8")
        assert raw[column:column + len(name)].decode() == name
        lines[line - 1] = (raw[:column] + (name + suffix).encode() + raw[column + len(name):]).decode("utf-8")
    return "".join(lines)


def test_renamed_copy_differs_in_text_and_ranks_first(tmp_path):
    source = (ALTERNATIVES / "naive_recount/exercises/ex1_merge_tracing.py").read_text(encoding="utf-8")
    copy = rename_locals(source, "_x")
    assert copy != source and "counts_x" in copy
    compile(copy, "copy", "exec")
    other = (ALTERNATIVES / "restructured/exercises/ex1_merge_tracing.py").read_text(encoding="utf-8")
    names = Names(tmp_path, [], anonymise=False)
    pairs = compare({"a": {EX: source}, "b": {EX: copy}, "c": {EX: other}}, [], 0.0, names)
    assert {pairs[0].first, pairs[0].second} == {"a", "b"} and pairs[0].score > 0.9
    assert all(p.score < pairs[0].score for p in pairs[1:])
    assert "<mark>" in pairs[0].regions[0].left


def test_stubs_and_lesson_are_boilerplate(tmp_path):
    """Two submissions that are the stubs as handed out share nothing that counts."""
    from autograder.reports.class_report.load import boilerplate_sources

    course = load_course(COURSE)
    stub = (ROOT / "exercises" / f"{EX}.py").read_text(encoding="utf-8")
    names = Names(tmp_path, [], anonymise=False)
    assert compare({"a": {EX: stub}, "b": {EX: stub}}, boilerplate_sources(course), 0.01, names) == []
    assert compare({"a": {EX: stub}, "b": {EX: stub}}, [], 0.01, names)  # without the boilerplate: identical


@pytest.mark.sandbox
@pytest.mark.slow
def test_code_past_the_helper_s_limits_is_left_out_alone(tmp_path, monkeypatch):
    """Student code is tokenised in limited helpers, never in the report's process: a submission
    whose fingerprints go past the helper's limits (here its answer's size) is left out of the
    comparison, and the others in its helper's group are still compared."""
    from autograder.isolation.helper import HelperLimits
    from autograder.reports.class_report import similarity

    source = (ALTERNATIVES / "naive_recount/exercises/ex1_merge_tracing.py").read_text(encoding="utf-8")
    large = "x = 1\n" * 40_000  # 240 KB, under the size compared: its fingerprints are megabytes
    monkeypatch.setattr(similarity, "SIMILARITY_LIMITS", HelperLimits(answer_mb=1))
    sources = {"a": {EX: source}, "b": {EX: rename_locals(source, "_x")}, "large": {EX: large}}
    assert sorted(similarity.fingerprinted(sources, [])) == ["a", "b"]
    pairs = compare(sources, [], 0.5, Names(tmp_path, [], anonymise=False))
    assert [(p.first, p.second) for p in pairs] == [("a", "b")]


# --------------------------------------------------------------------------- a real batch (slow)


@pytest.fixture(scope="module")
def real_batch(tmp_path_factory):
    """Six submissions graded on exercise 1: the stubs, the restructured alternative, two
    catalog mutants, and two near-copies of the naive alternative (locals renamed two ways)."""
    from tests.course.catalog import MUTANTS, build_alternative, build_mutant, build_stubs

    base = tmp_path_factory.mktemp("class-report")
    base.chmod(0o755)
    subs = base / "subs"
    subs.mkdir()
    build_stubs(subs / "untouched")
    build_alternative(subs / "restructured", "restructured")
    mutants = {m.name: m for m in MUTANTS if m.exercise == EX}
    for folder, name in (("mutant_1", "merge_pair_scans_right_to_left"), ("mutant_2", "ties_go_to_last_pair")):
        build_mutant(subs / folder, mutants[name])
    for copy, suffix in (("copy_a", "_1"), ("copy_b", "_tmp")):
        package = build_alternative(subs / copy, "naive_recount") / "exercises"
        for module in package.glob("ex*.py"):
            module.write_text(rename_locals(module.read_text(encoding="utf-8"), suffix), encoding="utf-8")
    grades = base / "grades"
    done = autograder("grade", *map(str, sorted(subs.iterdir())), "--out", str(grades), "--jobs", "2",
                      "--exercise", EX, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    out = base / "report.html"
    done = autograder("report", str(grades), "--out", str(out), "--submissions", *map(str, sorted(subs.iterdir())))
    assert done.returncode == 0, done.stdout + done.stderr
    return {"grades": grades, "subs": subs, "page": out.read_text(encoding="utf-8"), "out": out,
            "mutants": mutants}


@pytest.mark.sandbox
@pytest.mark.slow
def test_real_batch_shares_are_the_known_ones(real_batch):
    rows = property_rows(real_batch["page"])
    assert rows, "no property rows"
    assert all(graded == 6 for _, graded in rows.values()), rows
    # every property: the stubs fail it, the alternative and the near-copies pass it (full marks)
    assert all(failed >= 1 for failed, _ in rows.values())
    assert all(failed <= 3 for failed, _ in rows.values()), "a correct submission failed a property"
    for name, mutant in real_batch["mutants"].items():
        if name in ("merge_pair_scans_right_to_left", "ties_go_to_last_pair"):
            assert rows[f"{EX}.{mutant.fails}"][0] >= 2, f"{mutant.fails} should be failed by {name} and the stubs"
    # the scan from the right fails only its own property; ties to the last pair does not fail it
    assert rows[f"{EX}.test_merge_pair_replaces_left_to_right_without_overlap"] == (2, 6)
    assert rows[f"{EX}.test_ties_break_to_leftmost_first_occurrence"] == (2, 6)
    shares = [failed / graded for failed, graded in rows.values()]
    assert shares == sorted(shares, reverse=True)
    page = real_batch["page"]
    block = page.split(f'id="ex-{EX}-test_merge_pair_replaces_left_to_right_without_overlap"')[1].split("</div>")[0]
    assert "ids=[5, 5, 5], pair=(5, 5)" in block and html.escape("[999, 5]") in block


@pytest.mark.sandbox
@pytest.mark.slow
def test_real_batch_ranks_the_near_copies_first(real_batch):
    pairs = re.findall(r'class="pair" data-first="([^"]+)" data-second="([^"]+)" data-score="([0-9.]+)"',
                       real_batch["page"])
    assert pairs, "no similar pair listed"
    first, second, score = pairs[0]
    assert {first, second} == {"copy_a", "copy_b"}, pairs[:3]
    assert float(score) >= 0.9
    assert all(float(s) < float(score) for _, _, s in pairs[1:]), pairs[:3]
    assert "restructured" not in {first, second}


@pytest.mark.sandbox
@pytest.mark.slow
def test_real_batch_anonymised_names_nobody(real_batch, tmp_path):
    out = tmp_path / "anon.html"
    done = autograder("report", str(real_batch["grades"]), "--out", str(out), "--anonymise", "--submissions",
                      *map(str, sorted(real_batch["subs"].iterdir())))
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    for name in ("copy_a", "copy_b", "restructured", "mutant_1", "mutant_2", "untouched"):
        assert name not in page, name
    assert re.search(r'class="pair" data-first="student-[0-9a-f]{8}"', page)


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(url: str, shot: Path, profile: Path, size: str = "1300,2400") -> subprocess.CompletedProcess:
    """Headless Chromium's screenshot of ``url`` into ``shot``, with its console on stderr."""
    browser = chromium()
    assert browser is not None
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--hide-scrollbars", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=5000", f"--screenshot={shot}", f"--window-size={size}", url],
                          capture_output=True, text=True, timeout=180)


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (make setup installs it as root)")
def test_real_batch_renders_in_headless_chromium(real_batch, tmp_path):
    """The page loads in a real browser with nothing refused and no console error, and its
    sections are there once rendered."""
    browser = chromium()
    assert browser is not None
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
              f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    url = real_batch["out"].resolve().as_uri()
    shot = tmp_path / "report.png"
    done = subprocess.run([*common, f"--screenshot={shot}", "--window-size=1300,2400", url],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.is_file() and shot.stat().st_size > 20_000
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line or "Refused" in line]
    assert not console, console
    dom = subprocess.run([*common, "--dump-dom", url], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for section in ("scores", "wrong", "similarity", "privacy"):
        assert f'<section id="{section}">' in dom.stdout
    assert dom.stdout.count('<img class="plot"') >= 3


def measured(page: Path, tmp_path: Path, width: int) -> dict:
    """The page as headless Chromium lays it out in a window ``width`` pixels wide: the
    document's scroll width and the property table's right edge. A copy of the page is measured,
    with a script added (the page itself allows none)."""
    import json

    browser = chromium()
    assert browser is not None
    probe = ("<script>addEventListener('load', () => { const box = document.querySelector('table.properties')"
             ".getBoundingClientRect(); const out = document.createElement('pre'); out.id = 'measured'; "
             "out.textContent = JSON.stringify({page: document.documentElement.scrollWidth, table: box.right}); "
             "document.body.appendChild(out); });</script>")
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text(encoding="utf-8"))
    copy = tmp_path / "measured.html"
    copy.write_text(text.replace("</body>", probe + "</body>"), encoding="utf-8")
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},1200",
                           "--virtual-time-budget=5000", "--dump-dom", copy.as_uri()],
                          capture_output=True, text=True, timeout=180)
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout)
    assert found, done.stderr[-2000:]
    return json.loads(html.unescape(found[1]))


@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (make setup installs it as root)")
def test_the_property_table_fits_a_1400_pixel_window(tmp_path):
    """Every property of the course that the mutant catalog names, each failed with a long
    description: the page needs no horizontal scrolling in a window 1,400 pixels wide."""
    results = tuple(PropertyResult(exercise, name, 1, 0, False, False, f"{name.replace('_', ' ')} " * 6 + "\n\nwrong")
                    for exercise, properties in mutant_map().items() for name in properties)
    folder = write_batch(tmp_path / "grades", {name: Grade(results, ("isolation note",), 1.0) for name in ("a", "b")})
    out = tmp_path / "report.html"
    build_report(load_course(COURSE), folder, out)
    found = measured(out, tmp_path, 1400)
    assert found["page"] <= 1400 and found["table"] <= 1400, found


# --------------------------------------------------------------------------- a Persian course


def persian_report(tmp_path: Path) -> tuple[str, Path]:
    """The class report of a Persian course whose students' feedback is Persian, one of them
    with a Persian name: the page and its file."""
    from tests.persian.test_persian_feedback import PERSIAN, grade_in

    folder = write_batch(tmp_path / "grades", {"سارا": grade_in("fa"), "ali": grade_in("fa")})
    out = tmp_path / "report.html"
    build_report(PERSIAN, folder, out)
    return out.read_text(encoding="utf-8"), out


def test_a_persian_course_s_report_reads_persian_feedback_and_isolates_its_texts(tmp_path):
    """The report is the instructor's and its prose English; what comes from the Persian course
    and its students (titles, names, feedback) keeps its own direction, with code left to right,
    and the reference's answer is read from Persian feedback as from English."""
    from tests.persian.test_persian_feedback import PERSIAN

    page, _ = persian_report(tmp_path)
    assert f"<h1><bdi>{PERSIAN.title}</bdi>: class report</h1>" in page
    assert f"<td dir=auto>{PERSIAN.exercises[0].title}</td>" in page
    assert "<td><bdi>سارا</bdi></td>" in page
    merge = page.split(f'id="ex-{EX}-test_merge"')[1].split('<div class="example"')[0]
    assert '<td class="expected"><code>[1, 2, 1]</code>' in merge
    assert "<code>merge([1, 2, 1, 2], (1, 2), 5)</code>" in merge
    raised = page.split(f'id="ex-{EX}-test_raise"')[1].split('<div class="example"')[0]
    assert ('<li>2 × <bdi dir="rtl">فراخوانی <code dir="ltr">ex1_merge_tracing.merge([1, 2], (1, 2), 3)</code> '
            'خطای <code dir="ltr">ValueError</code> داد: <code dir="ltr">bad id</code></bdi></li>') in raised
    assert "\u2066" not in page and "\u2068" not in page  # the page's markup isolates, not the controls


@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (make setup installs it as root)")
def test_a_persian_course_s_report_renders_in_headless_chromium(tmp_path, keep_screenshot):
    """outputs/persian/class-report.png is this screenshot (``make screenshots``)."""
    _, out = persian_report(tmp_path)
    shot = tmp_path / "class-report.png"
    done = screenshot(out.resolve().as_uri(), shot, tmp_path / "profile", "1300,3400")
    assert done.returncode == 0 and shot.stat().st_size > 50_000, done.stderr[-2000:]
    keep_screenshot(shot)
    assert not [line for line in done.stderr.splitlines() if "CONSOLE" in line or "Refused" in line]


if __name__ == "__main__":
    MUTANT_MAP.write_text(mutant_map_text(), encoding="utf-8")
    print(f"wrote {MUTANT_MAP.relative_to(ROOT)}", file=sys.stderr)


def test_a_batch_of_the_bonus_exercise_alone_shows_no_total(tmp_path):
    folder = write_batch(tmp_path / "grades", {
        name: Grade((PropertyResult(BONUS, "test_viterbi", 10, score, score == 10, False,
                                    "" if score else STUB_FAILURE),), ("isolation note",), 3.0)
        for name, score in (("ann", 10), ("ben", 0))})
    out = tmp_path / "report.html"
    build_report(load_course(COURSE), folder, out)
    page = out.read_text(encoding="utf-8")
    assert f"This batch graded only {BONUS}" in page and 'id="bonus"' in page
    assert "Total (without bonus)" not in page and "points of 0" not in page
    assert "1 of 2 submissions earned some" in page
