"""Submissions: a folder or a ``.zip``, laid out either way, staged into one normal form.

A submission holds the course's package folder (``exercises/``), or the exercise modules
directly at its top (a zip may wrap either in one folder). :func:`stage` copies it into a
fresh folder as ``<package>/...``, adds the course's provided files where the student left
them out, and hashes the result, so both layouts grade the same and an unchanged
submission is recognised. Zips are read member by member: no absolute paths, no ``..``, no
links, and caps on the number of files and their size. Links inside a folder are skipped.
Anything unreadable raises :class:`SubmissionError` with a message for the instructor.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .config import Course

MAX_FILES = 500
MAX_BYTES = 20 << 20
SKIPPED_PARTS = {"__pycache__", "__MACOSX", ".git", ".ipynb_checkpoints"}


class SubmissionError(Exception):
    """The submission cannot be read or has no exercise modules."""


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
    """The name a submission is filed under: the folder's name or the zip's stem."""
    return path.stem if path.suffix.lower() == ".zip" else path.resolve().name


def stage(course: Course, path: Path) -> Staged:
    """Copy the submission at ``path`` into a new staging folder and hash it."""
    path = Path(path)
    root = Path(tempfile.mkdtemp(prefix="autograder-submission-"))
    try:
        files, notes = _read_zip(path) if path.suffix.lower() == ".zip" else _read_folder(path)
        try:
            chosen = _choose_package(course, files, path)
        except SubmissionError as error:
            raise SubmissionError("; ".join([str(error), *notes])) from None
        package = root / course.package
        for relative, content in chosen.items():
            _write(package / relative, content)
        for provided in course.provided:
            target = root / provided
            if not target.exists():
                _write(target, course.path(provided).read_bytes())
        _open_up(root)
        return Staged(submission_name(path), root, _digest(root), notes)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def _read_folder(path: Path) -> tuple[dict[PurePosixPath, bytes], list[str]]:
    if not path.is_dir():
        raise SubmissionError(f"{path}: no such folder or .zip file")
    files: dict[PurePosixPath, bytes] = {}
    notes: list[str] = []
    total = 0
    for current, folders, names in os.walk(path):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_PARTS and not (Path(current) / f).is_symlink())
        for name in sorted(names):
            full = Path(current) / name
            relative = PurePosixPath(full.relative_to(path).as_posix())
            if full.is_symlink() or not full.is_file():
                notes.append(f"skipped {relative}: links and special files are not graded")
                continue
            if name.endswith(".pyc"):
                continue
            total += full.stat().st_size
            _check_caps(path, len(files) + 1, total)
            files[relative] = full.read_bytes()
    return files, notes


def _read_zip(path: Path) -> tuple[dict[PurePosixPath, bytes], list[str]]:
    files: dict[PurePosixPath, bytes] = {}
    notes: list[str] = []
    total = 0
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                relative = _safe_member(path, info.filename)
                if info.is_dir() or relative is None or info.filename.endswith(".pyc"):
                    continue
                if stat.S_ISLNK(info.external_attr >> 16):
                    notes.append(f"skipped {relative}: links are not graded")
                    continue
                total += info.file_size
                _check_caps(path, len(files) + 1, total)
                with archive.open(info) as member:
                    content = member.read(MAX_BYTES + 1)
                if len(content) > info.file_size:
                    raise SubmissionError(f"{path.name}: {relative} is larger than its zip entry says")
                files[relative] = content
    except FileNotFoundError:
        raise SubmissionError(f"{path}: no such file") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError) as error:
        raise SubmissionError(f"{path.name}: not a readable zip file ({error})") from None
    return files, notes


def _safe_member(archive: Path, name: str) -> PurePosixPath | None:
    """The member's relative path; an absolute or escaping path is an error; skipped parts give None."""
    member = PurePosixPath(name.replace("\\", "/"))
    if member.is_absolute() or ".." in member.parts or (member.parts and ":" in member.parts[0]):
        raise SubmissionError(f"{archive.name}: refuses member {name!r}, which points outside the submission")
    if any(part in SKIPPED_PARTS for part in member.parts):
        return None
    return member


def _check_caps(where: Path, count: int, total: int) -> None:
    if count > MAX_FILES:
        raise SubmissionError(f"{where.name}: more than {MAX_FILES} files")
    if total > MAX_BYTES:
        raise SubmissionError(f"{where.name}: more than {MAX_BYTES >> 20} MB of files")


def _choose_package(course: Course, files: dict[PurePosixPath, bytes], where: Path) -> dict[PurePosixPath, bytes]:
    """The files of the package, relative to the package folder, whichever layout was used."""
    modules = {f"{e.module}.py" for e in course.exercises}
    while True:
        inside = {p.relative_to(course.package): c for p, c in files.items() if p.parts[:1] == (course.package,)}
        if inside:
            return inside
        if modules & {str(p) for p in files}:
            return files
        tops = {p.parts[0] for p in files if len(p.parts) > 1}
        if len(tops) != 1 or any(len(p.parts) == 1 for p in files):
            raise SubmissionError(
                f"{where.name}: found no {course.package}/ folder and none of "
                f"{', '.join(sorted(modules))} at the top of the submission")
        top = tops.pop()
        files = {p.relative_to(top): c for p, c in files.items()}


def _write(target: Path, content: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)


def _open_up(root: Path) -> None:
    """Let the sandbox's unprivileged user read the staged files (and nothing more)."""
    for current, folders, names in os.walk(root):
        os.chmod(current, 0o755)
        for name in names:
            os.chmod(os.path.join(current, name), 0o644)


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()
