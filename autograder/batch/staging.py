"""Submissions: a folder or a ``.zip``, laid out either way, staged into one normal form.

A submission holds the course's package folder (``exercises/``), or the exercise modules
directly at its top (a zip may wrap either in one folder); a single ``.py`` or ``.ipynb``
file is a submission too. An exercise may come as a notebook, ``<module>.ipynb``: its code
cells become ``<module>.py`` (:mod:`autograder.batch.notebook`), and where each line came from is
kept in ``NOTEBOOKS`` beside the package, so that feedback names the notebook's cells.
:func:`stage` copies it into a
fresh folder as ``<package>/...``, adds the course's provided files where the student left
them out, and hashes the result, so both layouts grade the same and an unchanged
submission is recognised. The staged folder is private to the grader's user (0700, files
0600): the sandbox copies what a worker needs. Zips are read member by member: no absolute
paths, no ``..``, no links, and caps on the number of entries (checked before they are
parsed), of files and of their size. Folders that are never graded (``.git``, ``.venv``,
``__MACOSX``, caches) are skipped and do not count against the caps on files. Links inside
a folder are skipped, and so is a file whose name (or whose folder's name, inside the package)
is not valid UTF-8 (what ``unzip`` makes of an old Windows zip): no code can import it or
name it. Each skipped file is named in the feedback. Anything unreadable raises :class:`SubmissionError` with a one-line
message for the instructor, and leaves no staged folder behind.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import lzma
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..config import Course
from ..engine.cells import NOTEBOOKS, CellMap
from ..errors import SubmissionError
from ..i18n import _, in_course_language
from ..isolation.inside.cpython import zip_directory_size
from .converting import notebook_module
from .notebook import NotebookError, NotebookModule

MAX_FILES = 500
MAX_BYTES = 20 << 20
MAX_ENTRIES = 4 * MAX_FILES  # entries of any kind (folders, links) read, outside the skipped folders
MAX_DIRECTORY = 8 << 20      # bytes of a zip's table of contents (skipped folders too), checked before parsing
SKIPPED_PARTS = {"__pycache__", "__MACOSX", ".git", ".hg", ".svn", ".ipynb_checkpoints", ".venv", "venv",
                 "site-packages", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
                 ".tox", ".idea", ".vscode"}
ENCRYPTED = 0x1              # the zip flag bit of an encrypted member


@dataclass
class Staged:
    """A submission ready to grade: ``root`` holds ``<package>/``; ``digest`` identifies it."""

    name: str
    root: Path
    digest: str
    notes: list[str] = field(default_factory=list)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def submission_name(path: Path) -> str:
    """The name a submission is filed under: the folder's name or the file's stem."""
    return path.stem if path.suffix.lower() in LOOSE | {".zip"} else path.resolve().name


LOOSE = {".py", ".ipynb"}  # a single file that is a submission by itself


@in_course_language
def stage(course: Course, path: Path) -> Staged:
    """Copy the submission at ``path`` into a new private staging folder and hash it; its notes
    for the student are in the course's language."""
    path = Path(path)
    root = Path(tempfile.mkdtemp(prefix="autograder-submission-"))
    try:
        files, notes = _read(path)
        try:
            chosen = _choose_package(course, files, path)
        except SubmissionError as error:
            raise SubmissionError("; ".join([str(error), *notes])) from None
        chosen = _utf8_paths(chosen, notes)
        package = PurePosixPath(course.package)
        chosen, notebooks = _from_notebooks(course, chosen, notes)
        for relative, content in chosen.items():
            _write(path, root, package / relative, content)
        if notebooks:
            _write(path, root, PurePosixPath(NOTEBOOKS), json.dumps(notebooks).encode())
        for provided in course.provided:
            if not (root / provided).exists():
                _write(path, root, PurePosixPath(provided), course.path(provided).read_bytes())
        return Staged(submission_name(path), root, _digest(root), notes)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def _read(path: Path) -> tuple[dict[PurePosixPath, bytes], list[str]]:
    """The submission's files by relative path, and notes on what was skipped."""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise SubmissionError(f"{path}: no such folder, .zip, .py or .ipynb file") from None
    except OSError as error:
        raise SubmissionError(f"{path}: cannot read ({error.strerror})") from None
    if stat.S_ISDIR(status.st_mode):
        return _read_folder(path)
    if stat.S_ISREG(status.st_mode) and path.suffix.lower() == ".zip":
        return _read_zip(path)
    if stat.S_ISREG(status.st_mode) and path.suffix.lower() in LOOSE:
        _check_caps(path, 1, status.st_size)
        return {PurePosixPath(path.name): path.read_bytes()}, []
    raise SubmissionError(f"{path}: not a folder, a .zip, a .py or an .ipynb file")


def _from_notebooks(course: Course, files: dict[PurePosixPath, bytes],
                    notes: list[str]) -> tuple[dict[PurePosixPath, bytes], dict[str, dict]]:
    """``files`` with each exercise notebook ``<module>.ipynb`` made into ``<module>.py``, and
    the line maps by module. A ``.py`` beside its notebook wins; an unreadable notebook is noted."""
    out = dict(files)
    maps: dict[str, dict] = {}
    for exercise in course.exercises:
        notebook, module = PurePosixPath(f"{exercise.module}.ipynb"), PurePosixPath(f"{exercise.module}.py")
        if notebook not in files:
            continue
        del out[notebook]
        if module in files:
            notes.append(_("{module} and {notebook} were both submitted: {module} was graded").format(
                module=module, notebook=notebook))
            continue
        try:
            converted = notebook_module(files[notebook])
        except NotebookError as error:
            notes.append(_("{notebook} could not be read, so {module} was not graded: {error}").format(
                notebook=notebook, module=exercise.module, error=error))
            continue
        out[module] = converted.source.encode("utf-8")
        maps[exercise.module] = CellMap(converted.spans).to_json()
        notes.extend(_copied(str(notebook), converted))
    return out, maps


def _copied(notebook: str, converted: NotebookModule) -> list[str]:
    """One line per copied answer cell of the notebook, for the student's feedback."""
    return [_("{notebook}: cells {cells} are all the answer cell {grade_id} (one was copied); all were graded, "
              "in order, so the last one's definitions count").format(
                  notebook=notebook, cells=", ".join(map(str, cells)), grade_id=repr(grade_id))
            for grade_id, cells in converted.duplicates]


def _read_folder(path: Path) -> tuple[dict[PurePosixPath, bytes], list[str]]:
    """The folder's regular files; links and special files are skipped with a note."""
    files: dict[PurePosixPath, bytes] = {}
    notes: list[str] = []
    total = 0
    for relative, status in _walk(path):
        if not _utf8(relative.name):
            notes.append(_not_utf8(relative))
            continue
        if not stat.S_ISREG(status.st_mode):
            notes.append(_("skipped {file}: links and special files are not graded").format(file=_quote(relative)))
            continue
        if relative.name.endswith(".pyc"):
            continue
        total += status.st_size
        _check_caps(path, len(files) + 1, total)
        try:
            files[relative] = (path / relative).read_bytes()
        except OSError as error:
            raise SubmissionError(f"{path.name}: cannot read {_quote(relative)} ({error.strerror})") from None
    return files, notes


def _walk(path: Path) -> Iterator[tuple[PurePosixPath, os.stat_result]]:
    """Everything below ``path`` but folders, in name order, without entering links or skipped
    folders; stops listing as soon as more than MAX_ENTRIES entries of any kind are seen."""
    count = 0
    pending = [PurePosixPath()]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(path / folder) as listing:
                entries = sorted(itertools.islice(listing, MAX_ENTRIES + 1 - count), key=lambda e: e.name)
            count += len(entries)
            _check_entries(path, count)
            for entry in entries:
                relative = folder / entry.name
                status = entry.stat(follow_symlinks=False)
                if not stat.S_ISDIR(status.st_mode):
                    yield relative, status
                elif entry.name not in SKIPPED_PARTS:
                    pending.append(relative)
        except OSError as error:
            raise SubmissionError(f"{path.name}: cannot read {_quote(folder)} ({error.strerror})") from None


def _utf8(name: str) -> bool:
    """Whether a name read from a folder is valid UTF-8 (Python gives undecodable bytes as surrogates)."""
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


def _not_utf8(relative: PurePosixPath) -> str:
    return _("skipped {file}: its name is not valid UTF-8, so no code can import or open it").format(
        file=_quote(relative))


def _utf8_paths(files: dict[PurePosixPath, bytes], notes: list[str]) -> dict[PurePosixPath, bytes]:
    """``files`` without those under a folder whose name is not valid UTF-8, each noted. Such a
    folder outside the package (the one a zip was unpacked into, say) costs nothing."""
    kept = {relative: content for relative, content in files.items() if _utf8(str(relative))}
    notes.extend(_not_utf8(relative) for relative in files if relative not in kept)
    return kept


def _read_zip(path: Path) -> tuple[dict[PurePosixPath, bytes], list[str]]:
    """The zip's files, read member by member; links are skipped with a note."""
    files: dict[PurePosixPath, bytes] = {}
    notes: list[str] = []
    total = 0
    with _open_zip(path) as archive:
        _check_entries(path, sum(not _skipped(info.filename) for info in archive.infolist()))
        for info in archive.infolist():
            relative = _safe_member(path, info.filename)
            if info.is_dir() or relative is None or info.filename.endswith(".pyc"):
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                notes.append(_("skipped {file}: links are not graded").format(file=_quote(relative)))
                continue
            total += info.file_size
            _check_caps(path, len(files) + 1, total)
            files[relative] = _read_member(path, archive, info, relative)
    _check_tree(path, files)
    return files, notes


def _open_zip(path: Path) -> zipfile.ZipFile:
    """The open zip; one whose table of contents is too large is refused before it is parsed."""
    try:
        with path.open("rb") as file:
            size = zip_directory_size(file)
        if size is not None and size > MAX_DIRECTORY:
            raise SubmissionError(f"{path.name}: the zip's table of contents is over {MAX_DIRECTORY >> 20} MB "
                                  f"(at most {MAX_ENTRIES} entries are read)")
        archive = zipfile.ZipFile(path)
    except OSError as error:
        raise SubmissionError(f"{path.name}: cannot read ({error.strerror})") from None
    except (zipfile.BadZipFile, ValueError, NotImplementedError) as error:
        raise SubmissionError(f"{path.name}: not a readable zip file ({error})") from None
    return archive


def _read_member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, relative: PurePosixPath) -> bytes:
    """The member's content, at most MAX_BYTES and one; an unreadable member is refused."""
    member = f"{path.name}: member {_quote(relative)}"
    if info.flag_bits & ENCRYPTED:
        raise SubmissionError(f"{member} is encrypted")
    try:
        with archive.open(info) as opened:
            content = opened.read(MAX_BYTES + 1)
    except NotImplementedError as error:
        raise SubmissionError(f"{member} uses a compression method this grader cannot read ({error})") from None
    except EOFError:
        raise SubmissionError(f"{member} is cut short") from None
    except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, OSError, UnicodeDecodeError) as error:
        raise SubmissionError(f"{member} is corrupt ({error})") from None
    if len(content) > info.file_size:
        raise SubmissionError(f"{member} is larger than its zip entry says")
    return content


def _safe_member(archive: Path, name: str) -> PurePosixPath | None:
    """The member's relative path; an absolute or escaping path is an error; skipped parts
    and the top folder itself give None."""
    member = PurePosixPath(name.replace("\\", "/"))
    if member.is_absolute() or ".." in member.parts or (member.parts and ":" in member.parts[0]):
        raise SubmissionError(f"{archive.name}: refuses member {_quote(name)}, which points outside the submission")
    if not member.parts or any(part in SKIPPED_PARTS for part in member.parts):
        return None
    return member


def _skipped(name: str) -> bool:
    return any(part in SKIPPED_PARTS for part in PurePosixPath(name.replace("\\", "/")).parts)


def _check_tree(where: Path, files: dict[PurePosixPath, bytes]) -> None:
    """Refuse a path that is a file and also holds files (only a zip can say so)."""
    ordered = sorted(files, key=lambda p: p.parts)  # a folder's files follow it directly
    for path, following in itertools.pairwise(ordered):
        if following.parts[:len(path.parts)] == path.parts:
            raise SubmissionError(f"{where.name}: a file and a folder share the path {_quote(path)}")


def _check_entries(where: Path, count: int) -> None:
    if count > MAX_ENTRIES:
        raise SubmissionError(f"{where.name}: more than {MAX_ENTRIES} entries (files, folders and skipped ones)")


def _check_caps(where: Path, count: int, total: int) -> None:
    if count > MAX_FILES:
        raise SubmissionError(f"{where.name}: more than {MAX_FILES} files")
    if total > MAX_BYTES:
        raise SubmissionError(f"{where.name}: more than {MAX_BYTES >> 20} MB of files")


def _choose_package(course: Course, files: dict[PurePosixPath, bytes], where: Path) -> dict[PurePosixPath, bytes]:
    """The files of the package, relative to the package folder, whichever layout was used."""
    modules = {f"{e.module}{suffix}" for e in course.exercises for suffix in LOOSE}
    while True:
        if PurePosixPath(course.package) in files:
            raise SubmissionError(f"{where.name}: {course.package!r} is a file, not a folder")
        inside = {p.relative_to(course.package): c for p, c in files.items() if p.parts[:1] == (course.package,)}
        if inside:
            return inside
        if modules & {str(p) for p in files}:
            return files
        tops = {p.parts[0] for p in files if len(p.parts) > 1}
        if len(tops) != 1 or any(len(p.parts) == 1 for p in files):
            raise SubmissionError(
                f"{where.name}: found no {course.package}/ folder and none of "
                f"{', '.join(sorted(f'{e.module}.py' for e in course.exercises))} (or their .ipynb notebooks) "
                "at the top of the submission")
        top = tops.pop()
        files = {p.relative_to(top): c for p, c in files.items()}


def _write(where: Path, root: Path, relative: PurePosixPath, content: bytes) -> None:
    """Write ``root / relative`` readable by its owner only, naming what the file system refused."""
    try:
        for folder in reversed(relative.parents[:-1]):
            (root / folder).mkdir(mode=0o700, exist_ok=True)
        with open(os.open(root / relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
            file.write(content)
    except OSError as error:
        reason = "file name too long" if error.errno == errno.ENAMETOOLONG else error.strerror
        raise SubmissionError(f"{where.name}: cannot stage {_quote(relative)}: {reason}") from None


def _quote(path: PurePosixPath | str) -> str:
    """A path for a one-line message: quoted, escaped, and shortened if long; a name that is
    not valid UTF-8 is shown as its bytes (``b'caf\\xe9.txt'``)."""
    text = str(path)
    text = text if len(text) <= 80 else text[:77] + "..."
    try:
        text.encode()
    except UnicodeEncodeError:
        return repr(os.fsencode(text))
    return repr(text)


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()
