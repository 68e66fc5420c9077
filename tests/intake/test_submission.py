"""Staging submissions: both layouts grade the same, zips are read safely, problems are named."""

import io
import json
import os
import stat
import struct
import tempfile
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.config import load_course
from autograder.engine.cells import cell_maps
from autograder.errors import SubmissionError
from autograder.intake.staging import MAX_ENTRIES, MAX_FILES, stage, submission_name
from tests.conftest import ROOT, autograder

COURSE = load_course(ROOT / "course.yaml")
MODULE = "def trace_merges(text, num_merges):\n    return []\n"
LESSON = sorted(p for p in COURSE.provided if p.startswith("exercises/lesson"))  # the lesson, provided


def make_zip(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return path


def staged_files(staged) -> dict[str, bytes]:
    return {p.relative_to(staged.root).as_posix(): p.read_bytes() for p in staged.root.rglob("*") if p.is_file()}


@pytest.fixture
def refused(tmp_path, monkeypatch):
    """``refused(path, message)``: staging ``path`` fails with one line that names the submission
    and matches ``message``, and leaves no staged folder behind."""
    staging = tmp_path / "staging"
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))

    def check(path: Path, message: str) -> str:
        with pytest.raises(SubmissionError, match=message) as caught:
            stage(COURSE, path)
        text = str(caught.value)
        assert "\n" not in text and path.name in text
        assert not any(staging.iterdir()), "a staged folder was left behind"
        return text
    return check


def one_member_zip(compression: int = zipfile.ZIP_STORED) -> tuple[bytearray, int, int]:
    """A zip of one module, its bytes editable, with the offsets of the member's data and of
    its central directory entry."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        archive.writestr("exercises/ex1_merge_tracing.py", MODULE * 50)
    data = bytearray(buffer.getvalue())
    name_length, extra_length = struct.unpack_from("<HH", data, 26)
    return data, 30 + name_length + extra_length, data.index(b"PK\x01\x02")


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
    finally:
        staged.remove()


@pytest.mark.parametrize("kind", ["zip", "folder"])
def test_staged_copy_is_private(tmp_path, kind):
    if kind == "zip":
        path = make_zip(tmp_path / "erin.zip", {"erin/exercises/ex1_merge_tracing.py": MODULE.encode()})
    else:
        path = tmp_path / "erin"
        (path / "exercises" / "sub").mkdir(parents=True)
        (path / "exercises" / "ex1_merge_tracing.py").write_text(MODULE)
        (path / "exercises" / "sub" / "data.txt").write_text("x")
        os.chmod(path / "exercises" / "ex1_merge_tracing.py", 0o644)
    staged = stage(COURSE, path)
    try:
        assert stat.S_IMODE(staged.root.stat().st_mode) == 0o700
        below = list(staged.root.rglob("*"))
        assert len(below) >= 3
        assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in below), "nobody else may read the copy"
    finally:
        staged.remove()


@pytest.mark.parametrize("member",
                         ["../evil.py", "/etc/evil.py", "exercises/../../evil.py", "C:/evil.py", "..\\evil.py"])
def test_zip_members_outside_are_refused(tmp_path, member):
    archive = make_zip(tmp_path / "evil.zip", {"ex1_merge_tracing.py": MODULE.encode(), member: b"x"})
    with pytest.raises(SubmissionError, match="points outside the submission"):
        stage(COURSE, archive)
    assert not (tmp_path.parent / "evil.py").exists()


def test_zip_member_naming_the_top_folder_is_skipped(tmp_path):
    archive = make_zip(tmp_path / "dot.zip", {".": b"x", "jo/ex1_merge_tracing.py": MODULE.encode()})
    staged = stage(COURSE, archive)
    try:
        assert staged_files(staged)["exercises/ex1_merge_tracing.py"] == MODULE.encode()
    finally:
        staged.remove()


def test_zip_links_are_skipped(tmp_path):
    archive = make_zip(tmp_path / "links.zip", {"ex1_merge_tracing.py": MODULE.encode()},
                       links={"lesson.py": "/etc/passwd"})
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


def test_no_exercises_found(tmp_path, refused):
    refused(make_zip(tmp_path / "x.zip", {"notes.txt": b"hi", "other/a.py": b""}),
            "found no exercises/ folder and none of ex1_merge_tracing.py")
    refused(tmp_path / "missing", "no such folder, .zip, .py or .ipynb file")
    refused(tmp_path / "missing.zip", "no such folder, .zip, .py or .ipynb file")
    (tmp_path / "notes.txt").write_text("hi")
    refused(tmp_path / "notes.txt", "notes.txt: not a folder, a .zip, a .py or an .ipynb file")


def test_folder_named_like_a_zip_is_a_folder(tmp_path):
    folder = tmp_path / "frank.zip" / "exercises"
    folder.mkdir(parents=True)
    (folder / "ex1_merge_tracing.py").write_text(MODULE)
    staged = stage(COURSE, tmp_path / "frank.zip")
    try:
        assert staged_files(staged)["exercises/ex1_merge_tracing.py"] == MODULE.encode()
    finally:
        staged.remove()


def test_encrypted_member(tmp_path, refused):
    data, _, central = one_member_zip()
    data[6] |= 0x1  # the encrypted flag, in the member's own header
    data[central + 8] |= 0x1  # and in the central directory
    (tmp_path / "locked.zip").write_bytes(data)
    refused(tmp_path / "locked.zip", "member 'exercises/ex1_merge_tracing.py' is encrypted")


@pytest.mark.parametrize("compression, at, reason", [
    (zipfile.ZIP_DEFLATED, 0, "invalid block type"),  # zlib.error
    (zipfile.ZIP_BZIP2, 4, "Invalid data stream"),  # OSError
    (zipfile.ZIP_LZMA, 4, "Invalid or unsupported options"),  # lzma.LZMAError
    (zipfile.ZIP_STORED, 0, "Bad CRC-32"),  # zipfile.BadZipFile
])
def test_corrupt_member(tmp_path, refused, compression, at, reason):
    data, start, _ = one_member_zip(compression)
    data[start + at:start + at + 8] = b"\xff" * 8
    (tmp_path / "corrupt.zip").write_bytes(data)
    refused(tmp_path / "corrupt.zip", rf"member 'exercises/ex1_merge_tracing.py' is corrupt \(.*{reason}")


def test_member_cut_short(tmp_path, refused):
    data, _, central = one_member_zip()
    size = len(MODULE * 50) + 1000  # the central directory claims more data than the file holds
    struct.pack_into("<II", data, central + 20, size, size)
    (tmp_path / "short.zip").write_bytes(data)
    refused(tmp_path / "short.zip", "member 'exercises/ex1_merge_tracing.py' is cut short")


def test_unsupported_compression(tmp_path, refused):
    data, _, central = one_member_zip()
    struct.pack_into("<H", data, 8, 9)  # deflate64, in both headers
    struct.pack_into("<H", data, central + 10, 9)
    (tmp_path / "deflate64.zip").write_bytes(data)
    refused(tmp_path / "deflate64.zip", "member 'exercises/ex1_merge_tracing.py' uses a compression method")


def test_zip_name_not_utf8(tmp_path, refused):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("exercises/b\u00ffd.py", b"")  # flagged as UTF-8
    (tmp_path / "names.zip").write_bytes(buffer.getvalue().replace("\u00ff".encode(), b"\xff\xff"))
    refused(tmp_path / "names.zip", "not a readable zip file .*utf-8")


@pytest.mark.parametrize("members, shared", [
    (["exercises/a", "exercises/a/b.py"], "exercises/a"),
    (["exercises/a/b.py", "exercises/a"], "exercises/a"),
    (["exercises/a.py", "exercises/a.py/b/c.py", "exercises/a.pyx"], "exercises/a.py"),
])
def test_file_and_folder_share_a_path(tmp_path, refused, members, shared):
    archive = make_zip(tmp_path / "both.zip", {"exercises/ex1_merge_tracing.py": MODULE.encode(),
                                                **{m: b"" for m in members}})
    refused(archive, f"a file and a folder share the path '{shared}'")


@pytest.mark.parametrize("kind", ["folder", "zip", "wrapped zip"])
def test_exercises_is_a_file(tmp_path, refused, kind):
    members = {"exercises": b"not a folder", "ex1_merge_tracing.py": MODULE.encode()}
    if kind == "folder":
        path = tmp_path / "gina"
        path.mkdir()
        for name, content in members.items():
            (path / name).write_bytes(content)
    else:
        prefix = "gina/" if kind == "wrapped zip" else ""
        path = make_zip(tmp_path / "gina.zip", {prefix + name: content for name, content in members.items()})
    refused(path, "'exercises' is a file, not a folder")


def test_file_name_too_long(tmp_path, refused):
    archive = make_zip(tmp_path / "long.zip", {"exercises/ex1_merge_tracing.py": MODULE.encode(),
                                                "exercises/" + "a" * 300 + ".py": b""})
    text = refused(archive, r"cannot stage 'exercises/aaa.*': file name too long")
    assert len(text) < 200, "the long name is shortened"


def touch(path: bytes, content: bytes = b"x = 1\n") -> None:
    with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as file:
        file.write(content)


def test_names_that_are_not_utf8_are_skipped_and_named(tmp_path):
    """What Linux ``unzip`` makes of a Windows student's zip: no code can name such a file, so it
    is skipped with a note, and the rest is staged; a wrapping folder so named costs nothing."""
    top = os.fsencode(tmp_path / "hal") + b"/Devoir_caf\xe9"
    os.makedirs(top + b"/exercises/donn\xe9es")
    (Path(os.fsdecode(top)) / "exercises" / "ex1_merge_tracing.py").write_text(MODULE)
    touch(top + b"/exercises/notes_caf\xe9.txt")
    touch(top + b"/exercises/donn\xe9es/corpus.txt")
    touch(top + b"/r\xe9ponses.txt")
    staged = stage(COURSE, tmp_path / "hal")
    try:
        assert sorted(staged_files(staged)) == [".stubs.json", "exercises/__init__.py",
                                                "exercises/ex1_merge_tracing.py", *LESSON]
        why = "its name is not valid UTF-8, so no code can import or open it"
        assert sorted(staged.notes) == [f"skipped b'Devoir_caf\\xe9/exercises/notes_caf\\xe9.txt': {why}",
                                        f"skipped b'Devoir_caf\\xe9/r\\xe9ponses.txt': {why}",
                                        f"skipped b'donn\\xe9es/corpus.txt': {why}"]
    finally:
        staged.remove()


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_folder_with_a_name_that_is_not_utf8_grades_as_its_zip(tmp_path):
    """The folder ``unzip`` made and the zip it came from grade the same; the folder's feedback
    names the file it skipped."""
    toy = ROOT / "tests" / "fixtures" / "toy_course"
    answer = (toy / "answers" / "ex_sum.py").read_bytes()
    os.makedirs(os.fsencode(tmp_path / "folder" / "toy"))
    (tmp_path / "folder" / "toy" / "ex_sum.py").write_bytes(answer)
    touch(os.fsencode(tmp_path / "folder") + b"/notes_caf\xe9.txt", b"done\n")
    make_zip(tmp_path / "zipped.zip", {"toy/ex_sum.py": answer, "notes_caf\u00e9.txt": b"done\n"})
    graded = autograder("grade", str(tmp_path / "folder"), str(tmp_path / "zipped.zip"), "--out", str(tmp_path / "out"),
                        course=toy / "course.yaml")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    results = {name: json.loads((tmp_path / "out" / name / "results.json").read_text())
               for name in ("folder", "zipped")}
    assert results["folder"]["score"] == results["zipped"]["score"] == 10
    assert [(t["name"], t["score"]) for t in results["folder"]["tests"]] == \
        [(t["name"], t["score"]) for t in results["zipped"]["tests"]]
    feedback = (tmp_path / "out" / "folder" / "feedback.md").read_text()
    assert "skipped b'notes_caf\\xe9.txt': its name is not valid UTF-8" in feedback


@pytest.mark.parametrize("member", ["exercises/f{}.pyc", "exercises/d{}/"])
def test_zip_entry_cap_counts_entries_outside_skipped_folders(tmp_path, refused, member):
    entries = {member.format(i): b"" for i in range(MAX_ENTRIES + 1)}
    archive = make_zip(tmp_path / "entries.zip", {"exercises/ex1_merge_tracing.py": MODULE.encode(), **entries})
    refused(archive, f"more than {MAX_ENTRIES} entries")


def test_a_committed_venv_and_git_folder_are_skipped_not_counted(tmp_path):
    skipped = {f"{top}/lib/f{i}.py": b"x = 1\n" for top in (".venv", ".git", "__MACOSX") for i in range(MAX_FILES)}
    archive = make_zip(tmp_path / "repo.zip", {"exercises/ex1_merge_tracing.py": MODULE.encode(), **skipped})
    staged = stage(COURSE, archive)
    try:
        assert sorted(p.name for p in (staged.root / "exercises").iterdir()) == \
            ["__init__.py", "ex1_merge_tracing.py", *(Path(p).name for p in LESSON)]
    finally:
        staged.remove()


def test_a_notebook_becomes_its_module_and_a_loose_file_is_a_submission(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# mine"),
                                               nbformat.v4.new_code_cell("%matplotlib inline\n" + MODULE)])
    path = tmp_path / "ex1_merge_tracing.ipynb"
    nbformat.write(notebook, path)
    staged = stage(COURSE, path)
    try:
        source = (staged.root / "exercises" / "ex1_merge_tracing.py").read_text()
        assert source.startswith("get_ipython().run_line_magic('matplotlib', 'inline')\n") and MODULE in source
        spans = cell_maps(staged.root)["ex1_merge_tracing"]
        assert spans.locate(2) == (2, 2)
    finally:
        staged.remove()
    assert submission_name(path) == "ex1_merge_tracing"


def test_an_unreadable_notebook_is_noted_and_the_rest_still_staged(tmp_path):
    folder = tmp_path / "nia" / "exercises"
    folder.mkdir(parents=True)
    (folder / "ex1_merge_tracing.ipynb").write_text("{not json")
    (folder / "ex2_special_tokens.py").write_text(MODULE)
    staged = stage(COURSE, tmp_path / "nia")
    try:
        assert not (staged.root / "exercises" / "ex1_merge_tracing.py").exists()
        (note,) = [note for note in staged.notes if "ex1_merge_tracing.ipynb could not be read" in note]
        assert "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 2" in note
        assert "))" not in note, "json's own words end in a parenthesis, which a parenthesis once closed again"
    finally:
        staged.remove()


def test_zip_entry_cap_comes_before_parsing(tmp_path, refused, monkeypatch):
    names = {f"exercises/__pycache__/{'x' * 2000}{i}.pyc": b"" for i in range(4400)}  # an 8.8 MB table of contents
    archive = make_zip(tmp_path / "toc.zip", names)

    def parse(*args, **kwargs):
        raise AssertionError("the table of contents was parsed")
    monkeypatch.setattr(zipfile, "ZipFile", parse)
    refused(archive, "table of contents is over 8 MB")


def test_folder_entry_cap_counts_every_entry(tmp_path, refused):
    folder = tmp_path / "ida" / "exercises"
    folder.mkdir(parents=True)
    (folder / "ex1_merge_tracing.py").write_text(MODULE)
    for i in range(MAX_ENTRIES):
        (folder / f"f{i}.pyc").touch()
    refused(tmp_path / "ida", f"more than {MAX_ENTRIES} entries")


def test_names():
    assert submission_name(Path("/x/carol.zip")) == "carol"
    assert submission_name(Path("/x/dave")) == "dave"


def test_a_batch_stages_its_submissions_jobs_at_once_each_alone(tmp_path, monkeypatch):
    """Staging is the limited helper's work: a batch runs ``jobs`` of them at once, so a
    submission slow to read holds up none of the others' staging, and what one could not have
    read is its own."""
    import threading

    from autograder.intake import staging

    jobs = 3
    together = threading.Barrier(jobs, timeout=60)  # broken unless all three stage at once
    staged_alone = staging.stage

    def slow(course, path):
        if path.name != "unreadable.zip":
            together.wait()
        return staged_alone(course, path)

    monkeypatch.setattr(staging, "stage", slow)
    paths = [make_zip(tmp_path / f"s{i}.zip", {"ex1_merge_tracing.py": MODULE.encode()}) for i in range(2)]
    paths.insert(1, tmp_path / "unreadable.zip")
    (tmp_path / "unreadable.zip").write_bytes(b"not a zip")
    paths.append(make_zip(tmp_path / "s2.zip", {"ex1_merge_tracing.py": MODULE.encode()}))
    found = staging.stage_many(COURSE, paths, jobs)
    try:
        assert [type(item).__name__ for item in found] == ["Staged", "SubmissionError", "Staged", "Staged"]
        assert [item.name for item in found if isinstance(item, staging.Staged)] == ["s0", "s1", "s2"]
        assert "not a readable zip file" in str(found[1])
    finally:
        for item in found:
            if isinstance(item, staging.Staged):
                item.remove()


def test_a_link_the_helper_left_is_refused_before_anything_is_written_through_it(tmp_path, monkeypatch):
    """Should the helper ever be made to plant a link (it writes none), staging neither writes the
    course's provided files through it nor hashes what it points to."""
    from autograder.intake import staging

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def planted(task, request, **limits):
        (Path(request["root"]) / "exercises").symlink_to(elsewhere)
        return {"notes": [], "notebooks": {}, "stubs": {}}

    monkeypatch.setattr(staging, "run_helper", planted)
    with pytest.raises(SubmissionError, match="staged something that is not a file: 'exercises'"):
        stage(COURSE, make_zip(tmp_path / "ivy.zip", {"ex1_merge_tracing.py": MODULE.encode()}))
    assert list(elsewhere.iterdir()) == []
