"""The documentation: the site builds with no warning, the README stays a front door, its links
lead somewhere, and the engine's comments leave figures to the results page.

MkDocs in strict mode (``mkdocs.yml``'s ``validation``) refuses a page's link to a missing page
or heading, and a page left out of the nav; the README lives outside the site, so its relative
links are checked here, anchors by GitHub's rule for heading ids. Which ``sh`` blocks the
documentation's scenarios run is ``tests/delivery/test_documented_commands.py``'s business.
"""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

from tests.conftest import ROOT

README_LINES = 250  # a front door: what it is, the two commands, a short section per reader
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*$", flags=re.M)


def prose(text: str) -> str:
    """``text`` without its fenced code blocks and inline code, where a bracket is no link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: its text, lower case, without punctuation or formatting,
    each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {github_anchor(heading) for heading in HEADING.findall(prose(page.read_text(encoding="utf-8")))}


def broken_links(page: Path) -> list[str]:
    """Each relative link of ``page`` whose file, or heading in it, does not exist."""
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no such heading")
    return broken


def test_the_readme_is_a_front_door_and_the_rest_lives_in_the_docs():
    """Under :data:`README_LINES` lines, with its sections for the four readers, each linking
    into the docs."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < README_LINES, f"README.md has {len(text.splitlines())} lines: move detail to docs/"
    sections = {part.splitlines()[0]: part for part in re.split(r"^(?=## )", text, flags=re.M)}
    for reader in ("## For students", "## For instructors", "## For course authors", "## For developers"):
        assert reader in sections, f"README.md has no section {reader!r}"
        assert "](docs/" in sections[reader], f"README.md's {reader!r} links to no page of docs/"


def test_the_readme_s_links_lead_to_files_and_headings_that_exist():
    assert broken_links(ROOT / "README.md") == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "other.md").write_text("# The two commands — in short\n")
    page = tmp_path / "page.md"
    page.write_text("# Here\n[a](other.md#the-two-commands--in-short) [b](#here) [c](https://example.org)\n"
                    "`[d](nowhere.md)` [e](nowhere.md) [f](other.md#nowhere) [g](#nowhere)\n")
    assert broken_links(page) == ["nowhere.md: no such file", "other.md#nowhere: no such heading",
                                  "#nowhere: no such heading"]


def test_the_site_builds_with_no_warning(tmp_path):
    """``make docs``'s build, into a folder of its own."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_the_nbgrader_page_says_what_nbgrader_does_with_a_missing_exchange(tmp_path):
    """It once said the default exchange must exist before the first release; the pinned
    nbgrader's ``release_assignment`` makes a missing one, writable by everyone."""
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment

    release = ExchangeReleaseAssignment(coursedir=CourseDirectory())
    release.root = str(tmp_path / "exchange")
    release.ensure_root()
    assert (tmp_path / "exchange").stat().st_mode & 0o777 == 0o777
    page = " ".join((ROOT / "docs" / "nbgrader.md").read_text(encoding="utf-8").split())
    assert "must exist before the first release" not in page
    assert "A missing exchange is made by `nbgrader release_assignment` itself, writable by everyone" in page


def test_the_readme_says_how_much_of_each_exercise_the_check_sees():
    """As many points as the release's check runs (its public properties that need no reference)."""
    from autograder.config import load_course
    from autograder.delivery.release import check_reach

    course = load_course(ROOT / "course.yaml")
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    said = {module: (int(seen), int(points))
            for seen, points, module in re.findall(r"(\d+) of the (\d+) (?:points )?of `(\w+)`", text)}
    assert said == {e.module: (seen, e.points) for e, seen in zip(course.exercises, check_reach(course).values(),
                                                                   strict=True)}


def test_the_tests_readme_places_every_test_file():
    """tests/README.md says where a new test goes by naming the folder of each kind: a test outside
    the folders, or in one it does not name, is one a newcomer cannot find."""
    readme = (ROOT / "tests" / "README.md").read_text(encoding="utf-8")
    folders = {path.parent for path in (ROOT / "tests").rglob("test_*.py")}
    assert ROOT / "tests" not in folders
    assert sorted(folder.name for folder in folders if f"`{folder.name}/`" not in readme) == []


# A timing in the code's own words: sub-second units, or seconds someone measured ("about 6 s",
# "2 s here"). A limit ("killed after 120 s") is a fact of the code and stays.
TIMING = re.compile(r"\b\d+(?:\.\d+)? ?(?:µs|us|ms)\b|\babout \d+(?:\.\d+)? ?s\b|\b\d+(?:\.\d+)? ?s here\b")


def timings(source: str) -> list[str]:
    """The comments and docstrings of a module's ``source`` that give a timing."""
    found = [token.string for token in tokenize.generate_tokens(io.StringIO(source).readline)
             if token.type == tokenize.COMMENT and TIMING.search(token.string)]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [line for line in (ast.get_docstring(node) or "").splitlines() if TIMING.search(line)]
    return found


def test_the_engine_s_comments_say_why_and_the_results_page_how_fast():
    """Figures go to docs/results.md (or the page that explains the design), never into a
    comment or a docstring, where they go stale unseen."""
    assert timings('"""Starts in about 6 s here."""\nX = 1  # waits 50 ms\nY = 2  # killed after 120 s\n') == [
        "# waits 50 ms", "Starts in about 6 s here."]
    stale = {str(path.relative_to(ROOT)): found for path in sorted((ROOT / "autograder").rglob("*.py"))
             if (found := timings(path.read_text(encoding="utf-8")))}
    assert stale == {}, "timings in the code, which belong on docs/results.md"
