"""One course, two languages: release, nbgrader and gradescope take ``--lang``, and each records
the language in the course file it ships. The English release is what it was before the course
had languages; the Persian one ships the package, the titles, the README and the notebooks in
Persian, code left to right; and the reference grades the same in both, test by test."""

import csv
import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.config import load_course
from autograder.delivery.gradescope import build_gradescope, replay
from autograder.delivery.nbgrader_course import build_nbgrader_course
from autograder.delivery.translation import module_source, title
from autograder.grading import grade_staged, name_cells
from autograder.locked import check_locked
from autograder.report import write_reports
from autograder.submission import stage
from tests.conftest import ROOT, autograder, leaks

pytestmark = pytest.mark.slow

COURSE = load_course(ROOT / "course.yaml")
PERSIAN = COURSE.model_copy(update={"language": "fa"})
PACKAGE_FILES = sorted(p.relative_to(ROOT) for p in (ROOT / "exercises").glob("*.py"))


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Path]:
    """The release as the course file says (English), with ``--lang en`` and with ``--lang fa``."""
    base = tmp_path_factory.mktemp("languages")
    built = {}
    for name, flags in (("default", []), ("en", ["--lang", "en"]), ("fa", ["--lang", "fa"])):
        run = autograder("release", "--out", str(base / name), *flags, timeout=300)
        assert run.returncode == 0, run.stderr + run.stdout
        built[name] = base / name
    return built


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its relative path; the locked cases without their salted
    hashes, which are new in every release."""
    found = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    sealed = yaml.safe_load(found["suites/locked.yaml"])
    for entries in sealed.values():
        for entry in entries:
            entry.pop("salt"), entry.pop("sha256")
            entry["parts"] = [part["calls"] for part in entry.get("parts", [])]
    found["suites/locked.yaml"] = yaml.safe_dump(sealed).encode()
    return found


def test_the_english_release_is_as_it_was(releases):
    """Byte for byte, but for the salts; its README is the one the engine wrote before courses had
    a language (update tests/fixtures/release_readme_en.md when the English README is to change)."""
    default, english = files(releases["default"]), files(releases["en"])
    assert default == english
    for relative in PACKAGE_FILES:  # the stubs and the lesson, byte for byte
        assert english[relative.as_posix()] == (ROOT / relative).read_bytes(), relative
    before = (ROOT / "tests" / "fixtures" / "release_readme_en.md").read_text(encoding="utf-8")
    assert english["README.md"].decode("utf-8") == before  # written by the engine before languages
    shipped = yaml.safe_load(english["course.yaml"])
    assert shipped["language"] == "en" and shipped["title"] == COURSE.title
    assert load_course(releases["en"] / "course.yaml").language == "en"


def test_the_persian_release_speaks_persian_with_code_left_to_right(releases):
    folder = releases["fa"]
    assert set(files(folder)) == set(files(releases["en"]))
    assert leaks(folder) == []
    course = load_course(folder / "course.yaml")
    assert course.language == "fa" and course.title == title(PERSIAN)
    assert [e.title for e in course.exercises] == [title(PERSIAN, e) for e in COURSE.exercises]
    for relative in PACKAGE_FILES:
        shipped = (folder / relative).read_text(encoding="utf-8")
        assert shipped == module_source(PERSIAN, ROOT / relative) != (ROOT / relative).read_text(), relative
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f'<div dir="rtl">\n\n# {title(PERSIAN)}\n')
    assert "| `ex1_merge_tracing` | ردگیری ادغام‌ها" in readme and "| 10 (امتیاز اضافی) |" in readme
    assert '<span dir="ltr">`exercises/`</span>: کار شما.' in readme
    assert "```sh\n.venv/bin/python -m tokcourse.assets fetch corpus cl100k_base\n```" in readme
    assert "Your copy of the course" not in readme and "Fetch the data" not in readme
    for block in readme.split("```")[1::2]:  # code blocks stay outside the right-to-left prose
        assert "<div" not in block and "<span" not in block


def results_of_check(release: Path, submission: Path) -> list[tuple]:
    """What ``check`` finds in ``release`` on ``submission``: each public property and locked case
    with its exercise, score, points and whether it passed."""
    course = load_course(release / "course.yaml")
    staged = stage(course, submission)
    try:
        grade = grade_staged(course, staged, public_only=True)
        locked = name_cells(course, staged.root, check_locked(course, staged.root))
    finally:
        staged.remove()
    return [(r.exercise, r.name, r.score, r.points, r.passed) for r in (*grade.results, *locked)]


def test_the_reference_checks_the_same_in_both_releases(releases, tmp_path):
    found = {}
    for language in ("en", "fa"):
        reference = shutil.copytree(ROOT / "solutions", tmp_path / language / "exercises",
                                    ignore=shutil.ignore_patterns("__pycache__"))
        found[language] = results_of_check(releases[language], reference.parent)
    assert found["en"] == found["fa"]
    assert len(found["en"]) > 30 and all(passed for *_, passed in found["en"])


def graded(results: dict) -> list[dict]:
    """A ``results.json``'s ``tests`` without the texts students read, which are in their language."""
    return [{key: value for key, value in test.items() if key != "output"} for test in results["tests"]]


def test_the_reference_and_the_persian_stubs_grade_the_same_in_both_languages(releases, tmp_path):
    """Official grading (Gradescope's bundle, replayed): the ``tests`` arrays byte for byte but for
    the texts, which Gradescope shows in the course's language."""
    english = replay(COURSE, ROOT / "solutions", None).results
    persian = replay(PERSIAN, ROOT / "solutions", None).results
    assert json.dumps(english["tests"]) == json.dumps(persian["tests"])
    assert english["score"] == persian["score"] == 110
    stubs = {language: replay(course, releases[language] / "exercises", None, exercises=["ex1_merge_tracing"])
             for language, course in (("en", COURSE), ("fa", PERSIAN))}
    assert json.dumps(graded(stubs["en"].results)) == json.dumps(graded(stubs["fa"].results))
    assert all("هنوز نوشته نشده است" in test["output"] for test in stubs["fa"].results["tests"])
    assert all("not implemented yet" in test["output"] for test in stubs["en"].results["tests"])


def test_a_partly_wrong_submission_grades_the_same_in_both_languages_with_persian_feedback(tmp_path):
    """samples/partly_wrong: the same ``tests`` names and scores; a Persian feedback.md whose
    falsifying examples are the English one's, line for line, in code blocks."""
    reports = {}
    for course in (COURSE, PERSIAN):
        staged = stage(course, ROOT / "samples" / "partly_wrong")
        try:
            grade = grade_staged(course, staged)
        finally:
            staged.remove()
        write_reports(course, tmp_path / course.language, "partly_wrong", grade)
        reports[course.language] = (json.loads((tmp_path / course.language / "results.json").read_text()),
                                    (tmp_path / course.language / "feedback.md").read_text(encoding="utf-8"))
    (english, english_md), (persian, persian_md) = reports["en"], reports["fa"]
    assert json.dumps(graded(english)) == json.dumps(graded(persian))
    assert english["score"] == persian["score"] and 0 < persian["score"] < 110
    assert persian_md.startswith('<div dir="rtl">') and "امتیاز:" in persian_md and "Score:" not in persian_md
    examples = [line for line in english_md.splitlines() if line.startswith("      ")]  # inside the examples
    assert examples and all(f"{line}\n" in persian_md for line in examples)


def test_check_in_the_persian_release_speaks_persian(releases):
    """What ``check`` prints on the stubs, less code, names and numbers, has no English words left."""
    run = autograder("check", course=None, cwd=releases["fa"], inherit=False)
    assert run.returncode == 1, run.stderr + run.stdout
    said = " ".join(run.stdout.split())  # rich wraps long lines
    cases = [entry["name"] for entries in yaml.safe_load((releases["fa"] / "suites/locked.yaml").read_text()).values()
             for entry in entries]
    for name in sorted(cases, key=len, reverse=True):  # a locked case's name is the course's, as a test's
        said = said.replace(name, "")
    said = re.sub(r"python -m autograder check --exercise \w+", "", said)
    said = re.sub(r"[\w.]*[_.0-9][\w.]*|\bexercises\b|bwrap|landlock|uid|cgroup", "", said)  # code and layers
    assert "خودسنجی" in said and "هنوز نوشته نشده است" in said
    assert re.findall(r"[A-Za-z]{2,}", said) == []


def test_the_gradescope_bundle_records_its_language(tmp_path):
    for course in (COURSE, PERSIAN):
        out = tmp_path / f"{course.language}.zip"
        build_gradescope(course, out)
        with zipfile.ZipFile(out) as bundle:
            shipped = yaml.safe_load(bundle.read("course.yaml"))
            lesson = bundle.read("exercises/lesson.py").decode("utf-8")
        assert shipped["language"] == course.language and shipped["title"] == title(course)
        assert lesson == module_source(course, ROOT / "exercises" / "lesson.py")


def test_the_persian_nbgrader_course(tmp_path):
    out = tmp_path / "nbgrader"
    build_nbgrader_course(PERSIAN, out)
    exercise = COURSE.exercises[0]
    notebook = nbformat.read(out / "source" / exercise.module / f"{exercise.module}.ipynb", as_version=4)
    task = notebook.cells[0].source
    assert task.startswith(f'<div dir="rtl">\n\n# {title(PERSIAN, exercise)}\n\nتمرین 1: ردگیری ادغام‌ها.')
    assert "**این نوت‌بوک چطور کار می‌کند.**" in task and "```python\n>>> steps = trace_merges(" in task
    assert "How this notebook works" not in task
    cells = {c.metadata["nbgrader"]["grade_id"]: c.source for c in notebook.cells}
    assert '"""BPE در سطح بایت را روی ``text`` آموزش دهید' in cells[f"{exercise.module}_trace_merges"]
    assert "### BEGIN SOLUTION" in cells[f"{exercise.module}_trace_merges"]
    grade_cell = cells[f"{exercise.module}_grade"]
    assert "# کارتان را بسنجید" in grade_cell and "امتیاز این تمرین: 20." in grade_cell
    assert grade_cell.endswith(f'grader.check("{exercise.module}")')
    bonus = nbformat.read(out / "source" / "ex6_unigram" / "ex6_unigram.ipynb", as_version=4)
    assert "امتیاز این تمرین: 10 (امتیاز اضافی)." in bonus.cells[-1].source
    for folder in (out / "grading", out / "source" / exercise.module / "grader"):
        assert load_course(folder / "course.yaml").language == "fa"
    beside = (out / "source" / exercise.module / "exercises" / "lesson.py").read_text(encoding="utf-8")
    assert beside == module_source(PERSIAN, ROOT / "exercises" / "lesson.py")


def test_a_persian_notebook_goes_through_nbgrader_and_grades_as_the_english_one(tmp_path):
    """nbgrader generates the Persian student notebook (Persian task and docstrings, no solution)
    and autogrades the reference typed into it to the exercise's full points."""
    from tests.test_nbgrader import nbgrader, reference_answers, submit

    folder = tmp_path / "course"
    run = autograder("nbgrader", "--out", str(folder), "--lang", "fa", timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    module = COURSE.exercises[0].module
    nbgrader(folder, "generate_assignment", module)
    released = nbformat.read(folder / "release" / module / f"{module}.ipynb", as_version=4)
    assert released.cells[0].source.startswith('<div dir="rtl">')
    answer = next(c.source for c in released.cells if c.metadata["nbgrader"]["grade_id"] == f"{module}_trace_merges")
    assert '"""BPE در سطح بایت را روی ``text`` آموزش دهید' in answer and "raise NotImplementedError" in answer
    assert "BEGIN SOLUTION" not in answer and leaks(folder / "release") == []
    submit(folder, "sara", module, reference_answers(folder, module))
    nbgrader(folder, "autograde", module)
    nbgrader(folder, "export")
    with open(folder / "grades.csv", newline="", encoding="utf-8") as table:
        (row,) = [r for r in csv.DictReader(table) if r["student_id"] == "sara"]
    assert float(row["score"]) == float(row["max_score"]) == COURSE.exercises[0].points
