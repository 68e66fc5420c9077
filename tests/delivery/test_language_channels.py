"""One course, two languages: release, nbgrader and gradescope take ``--lang``, and each records
the language in the course file it ships. The English release is what it was before the course
had languages; the Persian one ships the package, the titles, the README and the notebooks in
Persian, code left to right; and the reference grades the same in both, test by test."""

import csv
import html
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder import STUDENT_COMMAND
from autograder.bidi import has_prose
from autograder.config import load_course
from autograder.delivery.gradescope import build_gradescope, replay
from autograder.delivery.nbgrader.course import build_nbgrader_course
from autograder.engine.report_files import write_reports
from autograder.engine.run import Scope, grade_staged, name_cells
from autograder.intake.staging import stage
from autograder.locked.run import check_locked
from autograder.results import split_feedback
from autograder.translation import module_source, title
from tests.conftest import ROOT, autograder, leaks
from tests.persian.prose import english_prose
from tests.reports.test_class_report import chromium, screenshot

# every test runs the commands on the course
pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.data, pytest.mark.xdist_group(__name__)]

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
    assert set(files(folder)) == set(files(releases["en"])) | {COURSE.suite_texts["fa"]}  # the suites' words
    assert leaks(folder) == []
    course = load_course(folder / "course.yaml")
    assert course.language == "fa" and course.title == title(PERSIAN)
    assert [e.title for e in course.exercises] == [title(PERSIAN, e) for e in COURSE.exercises]
    for relative in PACKAGE_FILES:
        shipped = (folder / relative).read_text(encoding="utf-8")
        assert shipped == module_source(PERSIAN, ROOT / relative) != (ROOT / relative).read_text(), relative
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(f'<div dir="rtl">\n\n# {title(PERSIAN)}\n')
    assert '| <span dir="ltr">`ex1_merge_tracing`</span> | ردگیری ادغام‌ها' in readme
    assert "| 10 امتیاز اضافی |" in readme
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
        grade = grade_staged(course, staged.root, staged.notes, Scope(public_only=True))
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
    assert english["score"] == persian["score"] == COURSE.max_score + COURSE.bonus_points
    stubs = {language: replay(course, releases[language] / "exercises", None, exercises=["ex1_merge_tracing"])
             for language, course in (("en", COURSE), ("fa", PERSIAN))}
    assert json.dumps(graded(stubs["en"].results)) == json.dumps(graded(stubs["fa"].results))
    assert all("هنوز نوشته نشده است" in test["output"] for test in stubs["fa"].results["tests"])
    assert stubs["fa"].results["output"].startswith("کد شما در محیط ایزوله اجرا شد: ")
    said = "\n".join([stubs["fa"].results["output"], *(test["output"] for test in stubs["fa"].results["tests"])])
    assert english_prose(said) == []  # what Gradescope shows a Persian student
    assert all("not implemented yet" in test["output"] for test in stubs["en"].results["tests"])


def test_a_partly_wrong_submission_grades_the_same_in_both_languages_with_persian_feedback(tmp_path):
    """samples/partly_wrong: the same ``tests`` names and scores; a Persian feedback.md whose
    falsifying examples are the English one's, line for line, in code blocks."""
    reports = {}
    for course in (COURSE, PERSIAN):
        staged = stage(course, ROOT / "samples" / "partly_wrong")
        try:
            grade = grade_staged(course, staged.root, staged.notes)
        finally:
            staged.remove()
        write_reports(course, tmp_path / course.language, "partly_wrong", grade)
        reports[course.language] = (json.loads((tmp_path / course.language / "results.json").read_text()),
                                    (tmp_path / course.language / "feedback.md").read_text(encoding="utf-8"))
    (english, english_md), (persian, persian_md) = reports["en"], reports["fa"]
    assert json.dumps(graded(english)) == json.dumps(graded(persian))
    assert english["score"] == persian["score"] and 0 < persian["score"] < COURSE.max_score + COURSE.bonus_points
    # Gradescope's texts: every failure's reason in Persian (the description before it is the course's)
    failed = [test["output"] for test in persian["tests"] if test["status"] == "failed"]
    assert failed and all(has_prose(split_feedback(text)[1] or text.rsplit(" — ", 1)[-1]) for text in failed)
    assert persian_md.startswith('<div dir="rtl">') and "امتیاز:" in persian_md and "Score:" not in persian_md
    examples = [line for line in english_md.splitlines() if line.startswith("      ")]  # inside the examples
    assert examples and all(f"{line}\n" in persian_md for line in examples)


def test_check_in_the_persian_release_speaks_persian(releases):
    """What ``check`` prints on the stubs, less code, names and numbers, has no English words left."""
    run = autograder("check", course=None, cwd=releases["fa"], inherit=False)
    assert run.returncode == 1, run.stderr + run.stdout
    said = " ".join(run.stdout.split())  # rich wraps long lines
    shipped = yaml.safe_load((releases["fa"] / COURSE.suite_texts["fa"]).read_text(encoding="utf-8"))
    cases = [name for texts in shipped.values() for name in texts["locked"].values()]
    assert "درخت یک توکن" in said  # a locked case by its Persian name
    for name in sorted(cases, key=len, reverse=True):  # a locked case's name is the course's, as a test's
        said = said.replace(name, "")
    said = re.sub(rf"{re.escape(STUDENT_COMMAND)} check --exercise \w+", "", said)
    said = re.sub(r"[\w.]*[_.0-9][\w.]*|\bexercises\b|bwrap|landlock|uid|cgroup", "", said)  # code and layers
    assert "خودسنجی" in said and "هنوز نوشته نشده است" in said
    assert re.findall(r"[A-Za-z]{2,}", said) == []
    assert english_prose(run.stdout) == []


def test_check_in_the_persian_release_on_a_partly_wrong_submission_speaks_persian(releases):
    """check's table, words and failures on samples/partly_wrong: no English prose (the failing
    calls, values and falsifying examples are code)."""
    run = autograder("check", str(ROOT / "samples" / "partly_wrong"), course=None, cwd=releases["fa"], inherit=False)
    assert run.returncode == 1, run.stderr + run.stdout
    assert "مورد قفل‌شده" in run.stdout
    assert english_prose(run.stdout) == []


def test_grade_lang_fa_writes_persian_feedback_and_the_english_grades(tmp_path):
    """``grade --lang fa`` on the course's English file: feedback.md and the texts of results.json
    (Gradescope's schema) in Persian, the titles too, with no English prose; the ``tests`` arrays,
    names and scores, as ``grade`` in English gives them."""
    submissions = [str(ROOT / "samples" / "partly_wrong"), str(ROOT / "exercises")]
    for language in ("en", "fa"):
        run = autograder("grade", *submissions, "--out", str(tmp_path / language), "--jobs", "2",
                         *(["--lang", language] if language == "fa" else []), timeout=900)
        assert run.returncode == 0, run.stderr + run.stdout
    for name in ("partly_wrong", "exercises"):
        english, persian = (json.loads((tmp_path / language / name / "results.json").read_text(encoding="utf-8"))
                            for language in ("en", "fa"))
        assert json.dumps(graded(english)) == json.dumps(graded(persian))
        assert english["score"] == persian["score"]
        feedback = (tmp_path / "fa" / name / "feedback.md").read_text(encoding="utf-8")
        assert feedback.startswith('<div dir="rtl">\n\n# ' + title(PERSIAN) + ": بازخورد ")
        assert "ویژگی‌های عمومی" not in feedback and "توکن‌های ویژه و پیش‌توکن‌سازی" in feedback  # a title
        assert english_prose(feedback) == []
        texts = "\n".join([persian["output"], *(test["output"] for test in persian["tests"])])
        assert english_prose(texts) == []
        assert "Score:" in (tmp_path / "en" / name / "feedback.md").read_text(encoding="utf-8")


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
    assert task.startswith('<div dir="rtl">\n\n# ردگیری ادغام‌ها: ببینید BPE چطور <span dir="ltr">`th`</span> و سپس '
                           '<span dir="ltr">`the`</span> را می‌سازد\n\nتمرین 1: ردگیری ادغام‌ها.')
    assert "**این نوت‌بوک چطور کار می‌کند.**" in task and "```python\n>>> steps = trace_merges(" in task
    assert "How this notebook works" not in task
    cells = {c.metadata["nbgrader"]["grade_id"]: c.source for c in notebook.cells}
    assert '"""BPE در سطح بایت را روی ``text`` آموزش دهید' in cells[f"{exercise.module}_trace_merges"]
    assert "### BEGIN SOLUTION" in cells[f"{exercise.module}_trace_merges"]
    grade_cell = cells[f"{exercise.module}_grade"]
    assert "# کارتان را بسنجید" in grade_cell and "امتیاز این تمرین: 20." in grade_cell
    assert grade_cell.endswith(f'grader.check("{exercise.module}")')
    bonus = nbformat.read(out / "source" / "ex6_unigram" / "ex6_unigram.ipynb", as_version=4)
    assert "امتیاز این تمرین: 10 امتیاز اضافی." in bonus.cells[-1].source
    for folder in (out / "grading", out / "source" / exercise.module / "grader"):
        assert load_course(folder / "course.yaml").language == "fa"
    beside = (out / "source" / exercise.module / "exercises" / "lesson.py").read_text(encoding="utf-8")
    assert beside == module_source(PERSIAN, ROOT / "exercises" / "lesson.py")


WRONG_MERGE = """def merge_pair(ids, pair, new_id):
    return [new_id if (a, b) == pair else a for a, b in zip(ids, [*ids[1:], None])]
"""  # replaces the pair's first id and keeps its second


@pytest.fixture(scope="module")
def persian_nbgrader(tmp_path_factory) -> Path:
    """The Persian nbgrader course with exercise 1 generated; the reference typed in by sara, and
    by ali with merge_pair wrong and render_trace not written; autograded, feedback made, exported."""
    from tests.delivery.test_nbgrader import SKIPPED, nbgrader, reference_answers, submit

    folder = tmp_path_factory.mktemp("nbgrader-fa") / "course"
    run = autograder("nbgrader", "--out", str(folder), "--lang", "fa", timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    module = COURSE.exercises[0].module
    nbgrader(folder, "generate_assignment", module)
    answers = reference_answers(folder, module)
    submit(folder, "sara", module, answers)
    wrong = {**answers, f"{module}_merge_pair": WRONG_MERGE}
    del wrong[f"{module}_{SKIPPED}"]
    submit(folder, "ali", module, wrong)
    nbgrader(folder, "autograde", module)
    nbgrader(folder, "generate_feedback", module)
    nbgrader(folder, "export")
    return folder


def test_a_persian_notebook_goes_through_nbgrader_and_grades_as_the_english_one(persian_nbgrader):
    """nbgrader generates the Persian student notebook (Persian task and docstrings, no solution)
    and autogrades the reference typed into it to the exercise's full points."""
    folder, module = persian_nbgrader, COURSE.exercises[0].module
    released = nbformat.read(folder / "release" / module / f"{module}.ipynb", as_version=4)
    assert released.cells[0].source.startswith('<div dir="rtl">')
    answer = next(c.source for c in released.cells if c.metadata["nbgrader"]["grade_id"] == f"{module}_trace_merges")
    assert '"""BPE در سطح بایت را روی ``text`` آموزش دهید' in answer and "raise NotImplementedError" in answer
    assert "BEGIN SOLUTION" not in answer and leaks(folder / "release") == []
    with open(folder / "grades.csv", newline="", encoding="utf-8") as table:
        (row,) = [r for r in csv.DictReader(table) if r["student_id"] == "sara"]
    assert float(row["score"]) == float(row["max_score"]) == COURSE.exercises[0].points


def persian_feedback_page(folder: Path, student: str) -> str:
    module = COURSE.exercises[0].module
    return (folder / "feedback" / student / module / f"{module}.html").read_text(encoding="utf-8")


def test_persian_nbgrader_feedback_reads_right_to_left_with_its_code_intact(persian_nbgrader):
    """Under ali's grade cell, the engine's feedback in Persian; on the page nbgrader makes of it,
    Persian prose right to left, names and numbers isolated, calls and falsifying examples left
    to right and whole; the task's Persian keeps its direction through the page's sanitizer."""
    module = COURSE.exercises[0].module
    graded = nbformat.read(persian_nbgrader / "autograded" / "ali" / module / f"{module}.ipynb", as_version=4)
    text = graded.cells[-1].outputs[0]["text"]
    assert re.match(rf"ماژول \u2066{module}\u2069: \u2068\d+\u2069 از \u206820\u2069 امتیاز\.\n", text)
    assert "points" not in text
    failed = "test_merge_pair_replaces_left_to_right_without_overlap"
    assert f"رد شد  \u2068{failed}\u2069 (\u20680\u2069 از \u20681\u2069)" in text
    page = persian_feedback_page(persian_nbgrader, "ali")
    assert page.count('<div dir="rtl">') >= 2  # the task, and the feedback
    assert "<p>رد شد  <bdi>test_merge_pair_replaces_left_to_right_without_overlap</bdi> (<bdi>0</bdi> از " \
           "<bdi>1</bdi>)</p>" in page
    examples = re.findall(r'<p>مثال نقض[^<]*:</p>\n<pre dir="ltr">(\w+\(.*?\))</pre>', page, flags=re.S)
    assert examples and all("\n    ids=" in example for example in examples)
    assert '<code dir="ltr">ex1_merge_tracing.render_trace</code> هنوز نوشته نشده است' in page
    assert "Hidden properties" not in page and "ویژگی‌های پنهان: <bdi>" in page
    assert english_prose(text) == []  # the grade cell's feedback
    feedback = page[page.rindex('<div dir="rtl">'):]  # the page's own words (Score:, Grade cell:) are nbgrader's
    assert "مثال نقض" in feedback and english_prose(feedback) == []


def test_persian_validate_fails_the_stubs_in_persian(persian_nbgrader):
    from tests.delivery.test_nbgrader import nbgrader

    module = COURSE.exercises[0].module
    said = nbgrader(persian_nbgrader, "validate", f"release/{module}/{module}.ipynb")
    assert "CheckFailed" in said and f"ماژول \u2066{module}\u2069: همه‌ی سنجش‌ها قبول نشدند" in said, said
    assert "not every check passed" not in said


def test_the_class_report_reads_persian_nbgrader_feedback(persian_nbgrader, tmp_path):
    """The class report of the Persian course: ali's failures read back from the Persian
    feedback, with the reference's answer; the course's and students' texts isolated."""
    from tests.reports.test_class_report import property_rows

    out = tmp_path / "report.html"
    grading = persian_nbgrader / "grading"
    shutil.copy(ROOT / "suites" / "mutant-catalog.yaml", grading / "suites")  # report.mutants: not in the copy
    done = autograder("report", str(persian_nbgrader), "--out", str(out), course=grading / "course.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    page = out.read_text(encoding="utf-8")
    module = COURSE.exercises[0].module
    merge = f"{module}.test_merge_pair_replaces_left_to_right_without_overlap"
    assert property_rows(page)[merge] == (1, 2)
    block = page.split(f'id="ex-{merge.replace(".", "-")}"')[1].split('<div class="example"')[0]
    assert 'class="expected"><code>' in block, block
    assert f"<h1><bdi>{title(PERSIAN)}</bdi>: class report</h1>" in page
    assert f"<td dir=auto>{title(PERSIAN, COURSE.exercises[0])}</td>" in page


# a copy of the feedback page with only its grade cell shown, and a probe of how Chromium lays the
# feedback out: each element's direction, and where each paragraph's text sits in its box
GRADE_CELL_ONLY = '<style>#notebook-container > .cell:not(:has(a[name$="_grade"])){display:none}</style>'
PROBE = """<script>addEventListener('load', () => {
  const box = [...document.querySelectorAll('div[dir=rtl]')].pop();
  const edges = p => { const range = document.createRange(); range.selectNodeContents(p);
    const text = range.getBoundingClientRect(), own = p.getBoundingClientRect();
    return [text.left - own.left, own.right - text.right]; };
  const out = {box: getComputedStyle(box).direction,
    pre: [...box.querySelectorAll('pre')].map(e => [getComputedStyle(e).direction, e.innerText]),
    code: [...box.querySelectorAll('code')].map(e => getComputedStyle(e).direction),
    p: [...box.querySelectorAll('p')].map(e => [getComputedStyle(e).direction, ...edges(e)])};
  const shown = document.createElement('pre'); shown.id = 'measured'; shown.textContent = JSON.stringify(out);
  document.body.appendChild(shown); });</script>"""


@pytest.mark.browser
@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (make setup installs it as root)")
def test_persian_nbgrader_feedback_renders_in_headless_chromium(persian_nbgrader, tmp_path, keep_screenshot):
    """ali's feedback page as Chromium lays it out: the feedback right to left, each paragraph at
    the right edge; every code block left to right and, as text, what the engine wrote; the
    grade cell's screenshot (outputs/persian/nbgrader-feedback.png, made by ``make screenshots``)."""
    page = persian_feedback_page(persian_nbgrader, "ali")
    copy = tmp_path / "feedback.html"
    copy.write_text(page.replace("</head>", GRADE_CELL_ONLY + "</head>"), encoding="utf-8")
    shot = tmp_path / "nbgrader-feedback.png"
    done = screenshot(copy.as_uri(), shot, tmp_path / "profile", "1100,1250")
    assert done.returncode == 0 and shot.stat().st_size > 50_000, done.stderr[-2000:]
    keep_screenshot(shot)
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    browser = chromium()
    assert browser is not None
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'p'}",
                          "--virtual-time-budget=5000", "--dump-dom", probed.as_uri()],
                         capture_output=True, text=True, timeout=180)
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout)
    assert found, dom.stderr[-2000:]
    laid = json.loads(html.unescape(found[1]))
    assert laid["box"] == "rtl" and laid["code"] and set(laid["code"]) == {"ltr"}
    assert {direction for direction, _ in laid["pre"]} == {"ltr"}
    assert any(text.startswith("test_merge_pair_") and "\n    ids=[" in text for _, text in laid["pre"])
    assert all(direction == "rtl" and right < 2 for direction, _, right in laid["p"]), laid["p"]
