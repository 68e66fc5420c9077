"""Staging submissions: both layouts grade the same, zips are read safely, problems are named."""

import io
import os
import stat
import zipfile
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.submission import MAX_FILES, SubmissionError, stage, submission_name

ROOT = Path(__file__).resolve().parent.parent
COURSE = load_course(ROOT / "course.yaml")
MODULE = "def trace_merges(text, num_merges):\n    return []\n"


def make_zip(path: Path, members: dict[str, bytes], links: dict[str, str] = {}) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
        for name, target in links.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return path


def staged_files(staged) -> dict[str, bytes]:
    return {p.relative_to(staged.root).as_posix(): p.read_bytes() for p in staged.root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("layout", ["package", "flat", "wrapped", "wrapped-package"])
def test_layouts_stage_identically(tmp_path, layout):
    prefix = {"package": "exercises/", "flat": "", "wrapped": "alice/", "wrapped-package": "alice/exercises/"}[layout]
    archive = make_zip(tmp_path / "alice.zip", {prefix + "ex1_merge_tracing.py": MODULE.encode()})
    staged = stage(COURSE, archive)
    try:
        files = staged_files(staged)
        assert files["exercises/ex1_merge_tracing.py"] == MODULE.encode()
        assert files["exercises/lesson.py"] == (ROOT / "exercises" / "lesson.py").read_bytes(), "provided file added"
        assert staged.name == "alice"
        reference = stage(COURSE, make_zip(tmp_path / "b.zip", {"ex1_merge_tracing.py": MODULE.encode()}))
        assert reference.digest == staged.digest
        reference.remove()
    finally:
        staged.remove()


def test_folder_submission_keeps_students_lesson_and_skips_links(tmp_path):
    folder = tmp_path / "bob" / "exercises"
    folder.mkdir(parents=True)
    (folder / "ex1_merge_tracing.py").write_text(MODULE)
    (folder / "lesson.py").write_text("# my own lesson\n")
    (tmp_path / "secret.txt").write_text("outside")
    (folder / "secret.py").symlink_to(tmp_path / "secret.txt")
    staged = stage(COURSE, tmp_path / "bob")
    try:
        files = staged_files(staged)
        assert files["exercises/lesson.py"] == b"# my own lesson\n"
        assert "exercises/secret.py" not in files
        assert any("secret.py" in note for note in staged.notes)
        assert all(oct(os.stat(staged.root / f).st_mode)[-3:] == "644" for f in files)
    finally:
        staged.remove()


@pytest.mark.parametrize("member", ["../evil.py", "/etc/evil.py", "exercises/../../evil.py", "C:/evil.py", "..\\evil.py"])
def test_zip_members_outside_are_refused(tmp_path, member):
    archive = make_zip(tmp_path / "evil.zip", {"ex1_merge_tracing.py": MODULE.encode(), member: b"x"})
    with pytest.raises(SubmissionError, match="points outside the submission"):
        stage(COURSE, archive)
    assert not (tmp_path.parent / "evil.py").exists()


def test_zip_links_are_skipped(tmp_path):
    archive = make_zip(tmp_path / "links.zip", {"ex1_merge_tracing.py": MODULE.encode()}, links={"lesson.py": "/etc/passwd"})
    staged = stage(COURSE, archive)
    try:
        assert staged_files(staged)["exercises/lesson.py"] == (ROOT / "exercises" / "lesson.py").read_bytes()
        assert any("links are not graded" in note for note in staged.notes)
    finally:
        staged.remove()


def test_zip_caps(tmp_path):
    many = {f"exercises/f{i}.py": b"" for i in range(MAX_FILES + 1)}
    with pytest.raises(SubmissionError, match="more than 500 files"):
        stage(COURSE, make_zip(tmp_path / "many.zip", many))
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("exercises/ex1_merge_tracing.py", b"#" * (30 << 20))
    with pytest.raises(SubmissionError, match="more than 20 MB"):
        stage(COURSE, bomb)


@pytest.mark.parametrize("content, message", [
    (b"this is not a zip", "not a readable zip file"),
    (b"PK\x03\x04" + b"\0" * 40, "not a readable zip file"),
])
def test_corrupt_zip(tmp_path, content, message):
    path = tmp_path / "broken.zip"
    path.write_bytes(content)
    with pytest.raises(SubmissionError, match=message):
        stage(COURSE, path)


def test_truncated_zip(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("exercises/ex1_merge_tracing.py", MODULE * 200)
    path = tmp_path / "cut.zip"
    path.write_bytes(buffer.getvalue()[: len(buffer.getvalue()) // 2])
    with pytest.raises(SubmissionError, match="not a readable zip file"):
        stage(COURSE, path)


def test_no_exercises_found(tmp_path):
    with pytest.raises(SubmissionError, match="found no exercises/ folder and none of ex1_merge_tracing.py"):
        stage(COURSE, make_zip(tmp_path / "x.zip", {"notes.txt": b"hi", "other/a.py": b""}))
    with pytest.raises(SubmissionError, match="no such folder or .zip"):
        stage(COURSE, tmp_path / "missing")


def test_names():
    assert submission_name(Path("/x/carol.zip")) == "carol"
    assert submission_name(Path("/x/dave")) == "dave"
