"""The instructor's path as the documentation writes it, run as written.

Every ``sh`` block of the README's sections "For students" and "For instructors", and of the
pages of ``docs/`` that show commands to run (the channels step by step, the class report, the
course notes), is read from the page and run here by bash (``set -eo pipefail``: any command
that fails fails the test), in the order an instructor and a student take them, and what the
text says a step leaves behind is checked. The blocks run in a copy of the course made of links
to this repository (the documented commands write into the course folder), with a temporary
home folder and only the system's ``PATH``. A page whose first block sets variables
(``docs/nbgrader.md``) has that block run before each of its blocks, as the page asks of its
reader; of its variables only those naming places outside the temporary folders (the course,
the exchange) are pointed elsewhere.

Every ``sh`` block of every page of ``docs/`` is run here, listed in :data:`SAME` as the very
block another page shows (and run there), or listed in :data:`NOT_RUN` with the reason it
cannot be: a block that none claims fails :func:`test_every_documented_block_is_run`, so a
command added to the documentation needs a place in these scenarios or a reason.
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.config import load_course
from autograder.delivery.nbgrader.course import exercise_notebook
from tests.conftest import ROOT

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow]

COURSE = load_course(ROOT / "course.yaml")
FIRST = "ex1_merge_tracing"
DOCS = {"README.md": ("## For students", "## For instructors")}  # a page not named here: all its blocks
# page -> the text that picks each block out, in the order the scenarios below run them
STEPS = {
    "README.md": ["autograder release --out", "autograder check", "autograder grade", "autograder report"],
    "docs/release.md": ["--exercise ex1_merge_tracing"],
    "docs/class-report.md": ["autograder report"],
    "docs/nbgrader.md": ["EXCHANGE=", "chmod", "autograder nbgrader --out", "generate_assignment", "fetch_assignment",
                         "nbgrader submit", "nbgrader autograde", "nbgrader-autograde", "fetch_feedback",
                         "autograder report"],
    "docs/gradescope.md": ["gradescope --out autograder.zip", "--exercise ex1_merge_tracing"],
    "docs/course-notes.md": ["registry list"],
    "docs/authors.md": ["new-exercise"],
}
# page -> the text that picks out a block -> the page that shows the same block, whose scenario runs it
SAME = {
    "docs/release.md": {"autograder release --out": "README.md", "--out grades/ --jobs 2": "README.md"},
}
# page -> the text that picks out a block no scenario runs -> why
NOT_RUN = {
    "docs/index.md": {"make run": "the set-up it starts installs system packages and downloads the data, "
                                  "which the machine running these tests already has"},
    "docs/development.md": {"make test-unit": "runs the test suite, which holds this test",
                            ".venv/bin/pre-commit install": "installs a hook into the clone's .git"},
    "docs/cluster.md": {"dask scheduler": "starts a scheduler and workers that serve until stopped; "
                                          "tests/batch/test_cluster.py starts its own on 127.0.0.1 and grades "
                                          "over TLS"},
    "docs/course-notes.md": {"make multilingual": "each target starts with the set-up, which installs system "
                                                  "packages; tests/tokcourse/test_multilingual.py and "
                                                  "tests/tokcourse/test_analyzer.py run the tools"},
}

def pages() -> list[str]:
    """The README and every page of ``docs/``."""
    return ["README.md", *(path.relative_to(ROOT).as_posix() for path in sorted((ROOT / "docs").glob("*.md")))]


def blocks(page: str) -> list[str]:
    """The ``sh`` blocks of ``page`` (of its sections named in :data:`DOCS`, where it names some)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    sections = DOCS.get(page)
    if sections is not None:
        parts = re.split(r"^(?=## )", text, flags=re.M)
        text = "".join(part for part in parts if part.startswith(sections))
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.M | re.S)


def block(page: str, marker: str) -> str:
    """The one block of ``page`` that holds ``marker``."""
    found = [b for b in blocks(page) if marker in b]
    assert len(found) == 1, f"{page}: {len(found)} sh blocks hold {marker!r}"
    return found[0]


def test_every_documented_block_is_run():
    for page in pages():
        markers = [*STEPS.get(page, ()), *SAME.get(page, {}), *NOT_RUN.get(page, {})]
        claimed = [b for b in blocks(page) if any(marker in b for marker in markers)]
        assert claimed == blocks(page), \
            f"{page}: a block no scenario runs and NOT_RUN does not list: {set(blocks(page)) - set(claimed)}"
        assert all(block(page, marker) for marker in markers)


def test_a_block_two_pages_show_is_the_same_block():
    for page, others in SAME.items():
        for marker, other in others.items():
            assert block(page, marker) == block(other, marker), f"{page} and {other} show {marker!r} differently"


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> dict[str, Path]:
    """A home folder, and in it the course as a folder of links to this repository, with the
    class's submissions in ``submissions/``: the reference, the partly wrong sample, a file
    that is no zip, and exercise 1 alone as a notebook."""
    base = tmp_path_factory.mktemp("documented")
    base.chmod(0o755)
    home = base / "home"
    course = home / "tokenizer-course"
    course.mkdir(parents=True)
    for entry in ROOT.iterdir():
        if entry.name not in (".git", "out"):
            (course / entry.name).symlink_to(entry)
    submissions = course / "submissions"
    submissions.mkdir()
    for name, folder in (("alice", ROOT / "solutions"), ("bob", ROOT / "samples" / "partly_wrong")):
        with zipfile.ZipFile(submissions / f"{name}.zip", "w") as archive:
            for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
                archive.write(path, path.relative_to(folder).as_posix())
    (submissions / "carol.zip").write_bytes(b"not a zip")
    nbformat.write(exercise_notebook(COURSE, COURSE.exercise(FIRST)), submissions / f"{FIRST}.ipynb")
    return {"base": base, "home": home, "course": course}


def run(page: str, marker: str, place: dict[str, Path], cwd: Path | None = None,
        variables: dict[str, str] | None = None) -> str:
    """Run the block of ``page`` that holds ``marker`` in bash, as written, in ``cwd`` (the
    course); after the page's variables block, if ``variables`` names some to point elsewhere.
    Return what it printed."""
    done = bash(page, marker, place, cwd, variables)
    assert done.returncode == 0, f"{page}: this block failed ({done.returncode}):\n{block(page, marker)}\n" + \
        (done.stdout + done.stderr)[-5000:]
    return done.stdout + done.stderr


def bash(page: str, marker: str, place: dict[str, Path], cwd: Path | None = None,
         variables: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The block of ``page`` that holds ``marker``, run as :func:`run` says, whatever its exit status."""
    script = block(page, marker)
    if variables is not None:
        setup = blocks(page)[0]
        for name, value in variables.items():
            setup, count = re.subn(rf"^{name}=\S*", f"{name}={value}", setup, flags=re.M)
            assert count == 1, f"{page}'s first block sets no {name}"
        script = setup + "\n" + script
    env = {"HOME": str(place["home"]), "PATH": "/usr/local/bin:/usr/bin:/bin", "COLUMNS": "200",
           "LANG": "C.UTF-8", "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))}
    return subprocess.run(["bash", "-c", "set -eo pipefail\n" + script], cwd=cwd or place["course"], env=env,
                          capture_output=True, text=True, timeout=1500)


def test_the_readme_s_instructor_and_student_path(place):
    """Release, a student's self-check in the release, the batch and the class report."""
    course = place["course"]
    run("README.md", "autograder release --out", place)
    release = course / "student-course"
    assert (release / "README.md").is_file() and not (release / "solutions").exists()
    for module in COURSE.exercises:  # the student's finished work
        shutil.copy(ROOT / "solutions" / f"{module.module}.py", release / "exercises")
    for helper in ("_bpe.py", "_checks.py"):
        shutil.copy(ROOT / "solutions" / helper, release / "exercises")
    (release / ".venv").symlink_to(ROOT / ".venv")
    shutil.make_archive(str(release / "my-work"), "zip", release, "exercises")
    run("README.md", "autograder check", place, cwd=release)  # both checks pass: exit status 0

    said = run("README.md", "autograder grade", place)
    grades = course / "grades"
    for name in ("alice", "bob", "carol"):
        assert (grades / name / "results.json").is_file() and (grades / name / "feedback.md").is_file()
    rows = {row["submission"]: row for row in csv.DictReader((grades / "grades.csv").open())}
    assert rows["alice"]["score"] == f"{COURSE.max_score + COURSE.bonus_points}"
    assert rows["alice"]["max_score"] == rows["alice"]["score_without_bonus"] == f"{COURSE.max_score}"
    assert rows["carol"]["score"] == "0" and rows["carol"]["note"].startswith("unreadable: ")
    assert "could not be read" in (grades / "carol" / "feedback.md").read_text()

    for page in ("README.md", "docs/class-report.md"):
        (course / "report.html").unlink(missing_ok=True)
        said = run(page, "autograder report", place)
        assert "Class report written to report.html: 3 submissions" in " ".join(said.split())
        report = (course / "report.html").read_text(encoding="utf-8")
        totals = dict(re.findall(r'<tr class="submission" data-name="([^"]+)" data-total="([^"]+)"', report))
        assert totals == {name: row["score"] for name, row in rows.items()}, "the report's totals are grades.csv's"


def test_the_release_page_s_weekly_hand_in(place):
    """One exercise graded and recorded alone, into a folder of its own."""
    said = " ".join(run("docs/release.md", "--exercise ex1_merge_tracing", place).split())
    grades = place["course"] / "grades-ex1"
    rows = {row["submission"]: row for row in csv.DictReader((grades / "grades.csv").open())}
    assert rows["alice"]["score"] == "20" and rows["alice"]["max_score"] == "20", said
    assert rows["alice"][FIRST] == "20" and all(rows["alice"][e.module] == "" for e in COURSE.exercises[1:])
    feedback = (grades / "alice" / "feedback.md").read_text(encoding="utf-8")
    assert "**Score: 20 / 20**" in feedback and f"Only {FIRST} was graded" in feedback


def test_the_authors_page_s_new_exercise(place, tmp_path):
    """The scaffold as the page runs it, in a copy of the course (it writes into the course):
    the exercise is in the course file, its points in the full marks (tests/authoring/test_new_exercise.py
    grades it and runs the course checks on it)."""
    from tests.authoring.test_new_exercise import course_copy

    copy = course_copy(tmp_path / "course")
    (tmp_path / "course" / ".venv").symlink_to(ROOT / ".venv")
    said = " ".join(run("docs/authors.md", "new-exercise", place, cwd=tmp_path / "course").split())
    course = load_course(copy)
    (added,) = [e for e in course.exercises if e.module not in {e.module for e in COURSE.exercises}]
    assert course.max_score == COURSE.max_score + added.points and "docs/authors.md's checklist" in said, said
    assert (tmp_path / "course" / "suites" / f"{added.module}.py").is_file()


def test_the_course_notes_real_tokenizers(place):
    """The registry lists the lesson's tokenizers, and each loads offline and gives its known ids."""
    said = run("docs/course-notes.md", "registry list", place)
    for name in ("bert-base-uncased", "mistral-7b", "gpt2", "cl100k_base", "llama3", "o200k_base", "jurassic-2"):
        assert name in said
    assert "all 7 tokenizers load offline" in said


def test_the_nbgrader_page_from_the_course_to_the_export(place):
    """The exchange as the page makes it, a release, a student's fetch and submission, the
    instructor's collection, autograde, feedback and export, the student's feedback, the report."""
    variables = {"COURSE": str(place["course"]), "EXCHANGE": str(place["base"] / "exchange")}
    page = "docs/nbgrader.md"
    for marker in ("chmod", "autograder nbgrader --out", "generate_assignment"):
        said = run(page, marker, place, variables=variables)
    nbcourse = place["home"] / "nbcourse"
    assert (place["base"] / "exchange" / "how-language-model-tokenizers-work" / "outbound" / FIRST).is_dir()
    assert "Copying" not in said, "nbgrader's line per copied file is back"

    run(page, "fetch_assignment", place, variables=variables)  # the student: this machine's user
    fetched = place["home"] / FIRST / f"{FIRST}.ipynb"
    notebook = nbformat.read(fetched, as_version=4)
    source = nbformat.read(nbcourse / "source" / FIRST / f"{FIRST}.ipynb", as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells if c.metadata["nbgrader"]["solution"]}
    for cell in notebook.cells:
        cell.source = answers.get(cell.metadata.get("nbgrader", {}).get("grade_id"), cell.source)
    nbformat.write(notebook, fetched)
    run(page, "nbgrader submit", place, variables=variables)

    said = run(page, "nbgrader autograde", place, variables=variables)
    assert "Copying" not in said and "Student code ran in a sandbox" in said
    with open(nbcourse / "grades.csv", newline="") as table:
        (row,) = [row for row in csv.DictReader(table) if row["assignment"] == FIRST]
    from nbgrader.utils import get_username  # here: importing nbgrader weighs on every collection

    assert (row["student_id"], float(row["score"]), float(row["max_score"])) == (get_username(), 20.0, 20.0)
    said = " ".join(run(page, "nbgrader-autograde", place, variables=variables).split())
    assert "Autograded 0 submissions" in said and "1 already autograded and unchanged" in said, said

    run(page, "fetch_feedback", place, variables=variables)
    (feedback,) = (place["home"] / FIRST / "feedback").glob(f"*/{FIRST}.html")
    page_text = feedback.read_text(encoding="utf-8")
    assert f"{FIRST}: 20 / 20 points." in page_text
    feedback_lines = html.unescape(page_text.split(f"{FIRST}: 20 / 20 points.")[1].split("</pre>")[0]).splitlines()
    assert max(map(len, feedback_lines)) <= 100, "a line of the feedback runs off the page"
    assert "Out[" not in page_text.split(f'id="{FIRST}_grade"')[-1], "the bare score shows under the feedback"

    said = run(page, "autograder report", place, variables=variables)
    assert (nbcourse / "report.html").is_file() and "1 submission," in " ".join(said.split())


def test_the_gradescope_page(place):
    course = place["course"]
    page = "docs/gradescope.md"
    said = " ".join(run(page, "gradescope --out autograder.zip", place).split())
    assert (course / "autograder.zip").is_file()
    kept = course / "replay" / "results" / "results.json"
    full = COURSE.max_score + COURSE.bonus_points
    assert f"results.json kept in {kept}" in said and f"score {full} ({COURSE.max_score} without the bonus)" in said
    assert json.loads(kept.read_text())["score"] == full

    said = " ".join(run(page, "--exercise ex1_merge_tracing", place).split())
    kept = course / "replay-ex1" / "results" / "results.json"
    results = json.loads(kept.read_text())
    assert {t["extra_data"]["exercise"] for t in results["tests"]} == {FIRST} and results["score"] == 20, said
    assert "out of 20" in said


def test_a_course_with_a_module_removed_grades_and_builds_nothing(place):
    """The course with one reference module gone: every documented command that takes the course,
    and every other command that does, stops with one line naming the module, exit 2, and
    writes nothing anywhere."""
    broken = place["base"] / "broken-course"
    broken.mkdir()
    for entry in place["course"].iterdir():
        if entry.name not in ("course.yaml", "solutions"):
            (broken / entry.name).symlink_to(entry.resolve())
    shutil.copy(ROOT / "course.yaml", broken / "course.yaml")  # the course is where its file is
    (broken / "solutions").mkdir()
    for module in (ROOT / "solutions").glob("*.py"):
        if module.name != "ex3_wordpiece.py":
            (broken / "solutions" / module.name).symlink_to(module)
    said = (f"error: {broken / 'course.yaml'}: exercises[2]: no such file 'solutions/ex3_wordpiece.py' "
            "(the reference of ex3_wordpiece)")
    before = everything(place["base"])
    variables = {"COURSE": str(broken), "EXCHANGE": str(place["base"] / "exchange-broken")}
    for page, marker, names in (("README.md", "autograder release --out", None),
                                ("README.md", "autograder grade", None), ("README.md", "autograder report", None),
                                ("docs/gradescope.md", "gradescope --out autograder.zip", None),
                                ("docs/nbgrader.md", "autograder nbgrader --out", variables)):
        done = bash(page, marker, place, cwd=broken, variables=names)
        assert (done.returncode, done.stderr.strip(), done.stdout) == (2, said, ""), (page, marker, done.stderr)
    for command in (["check"], ["check", "solutions"], ["demo"], ["mutate", "--all"], ["bench"]):
        done = subprocess.run([str(ROOT / ".venv" / "bin" / "autograder"), *command], cwd=broken, text=True,
                              capture_output=True, env={**os.environ, "COLUMNS": "400"}, timeout=120)
        assert (done.returncode, done.stderr.strip(), done.stdout) == (2, said, ""), (command, done.stderr)
    assert everything(place["base"]) == before


def everything(folder: Path) -> set[str]:
    """Every path under ``folder``, links not followed."""
    return {os.path.join(where, name) for where, folders, files in os.walk(folder) for name in [*folders, *files]}
