"""Submissions: a folder or a ``.zip``, laid out either way, staged into one normal form.

:func:`stage` has the limited helper read a submission into a fresh private folder as
``<package>/...`` (:mod:`autograder.intake.reading`), keeps beside it the notebooks' line maps
(``NOTEBOOKS``) and the sure stubs (:data:`~autograder.engine.stubs.STUBS`), adds the course's
provided files the student left out, and hashes the result; nothing of the submission is
parsed here. Anything unreadable raises :class:`SubmissionError` with a one-line message and
leaves no folder behind. :func:`unpack` writes a submission's files as they are. The layouts
and rules: docs/instructors.md, "What a submission may hold".
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..config import Course
from ..engine.cells import NOTEBOOKS, CellMap
from ..engine.stubs import STUBS, stubs_from_json
from ..errors import SubmissionError
from ..isolation import HelperLimits, OverLimits, run_helper
from .reading import LOOSE, MAX_BYTES, MAX_ENTRIES, MAX_FILES, write

__all__ = ["LOOSE", "MAX_ENTRIES", "MAX_FILES", "Staged", "SubmissionError", "stage", "stage_many", "submission_name",
           "unpack"]

# reading a submission: 20 MB unzipped, notebooks converted within their budget, stubs read
INTAKE_LIMITS = HelperLimits(cpu_seconds=30, memory_mb=1024, file_mb=(MAX_BYTES >> 20) + 1, answer_mb=16,
                             wall_seconds=120)


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


def stage(course: Course, path: Path) -> Staged:
    """Have the submission at ``path`` read into a new private staging folder, and hash it; its
    notes for the student are in the course's language."""
    path = Path(path)
    root = Path(tempfile.mkdtemp(prefix="autograder-submission-"))
    try:
        notes, notebooks, stubs = _read(course, path, root)
        _only_files(path, root)
        if notebooks:
            write(path, root, PurePosixPath(NOTEBOOKS), json.dumps(notebooks).encode())
        write(path, root, PurePosixPath(STUBS), json.dumps(stubs).encode())
        for provided in course.provided:
            if not (root / provided).exists():
                write(path, root, PurePosixPath(provided), course.path(provided).read_bytes())
        return Staged(submission_name(path), root, _digest(root), notes)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def stage_many(course: Course, paths: list[Path], jobs: int) -> list[Staged | SubmissionError]:
    """Each submission staged (:func:`stage`), or why it could not be, in order: ``jobs`` at once, each in
    a helper of its own, so a submission that is slow to read delays the others by none of its
    time. Anything else (a helper that cannot start, an interrupt) leaves nothing staged behind."""
    def one(path: Path) -> Staged | SubmissionError:
        try:
            return stage(course, path)
        except SubmissionError as error:
            return error

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = [pool.submit(one, path) for path in paths]
        try:
            wait(futures)
            return [future.result() for future in futures]
        except BaseException:
            pool.shutdown(cancel_futures=True)  # waits for those under way
            for future in futures:
                if not future.cancelled() and future.exception() is None and isinstance(
                        staged := future.result(), Staged):
                    staged.remove()
            raise


def _read(course: Course, path: Path, root: Path) -> tuple[list[str], dict, dict]:
    """What the helper found reading ``path`` into ``root``: notes, line maps and stubs, each
    checked to be what :func:`~autograder.intake.reading.read_submission` answers."""
    request = {"path": str(path), "root": str(root), "package": course.package, "language": course.language,
               "modules": [exercise.module for exercise in course.exercises]}
    answer = _helped("autograder.intake.reading:read_submission", request, path, root)
    try:
        notes = [str(note) for note in answer["notes"]]
        notebooks = {str(module): CellMap.from_json(data).to_json() for module, data in answer["notebooks"].items()}
        stubs = {str(module): data for module, data in answer["stubs"].items()}
        for data in stubs.values():
            stubs_from_json(data)  # ValueError if it is not signatures
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise SubmissionError(f"{path.name}: the grader's helper answered no submission ({error})") from None
    return notes, notebooks, stubs


def _only_files(path: Path, root: Path) -> None:
    """Refuse a staged folder holding anything but folders and regular files: the helper writes
    none, and a link there would lead this process's writes, and its reads, elsewhere."""
    for folder, folders, files in os.walk(root):
        for name in [*folders, *files]:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if not (stat.S_ISDIR(mode) if name in folders else stat.S_ISREG(mode)):
                raise SubmissionError(f"{path.name}: the grader's helper staged something that is not a file: {name!r}")


def unpack(path: Path, out: Path) -> list[str]:
    """Write the files of the submission at ``path`` under ``out`` (made here) as they are, a zip
    unpacked, read as :func:`stage` reads them; return the notes on what was skipped."""
    out.mkdir(parents=True)
    answer = _helped("autograder.intake.reading:unpack_submission", {"path": str(path), "out": str(out)}, path, out)
    return [str(note) for note in answer.get("notes", [])]


def _helped(task: str, request: dict, path: Path, out: Path) -> Any:
    """The answer of an intake ``task`` reading ``path`` and writing ``out``; a refusal or a
    reading past the helper's limits is a :class:`SubmissionError`."""
    try:
        answer = run_helper(task, request, read=[path], write=[out], limits=INTAKE_LIMITS)
    except OverLimits as error:
        raise SubmissionError(f"{path.name}: reading it went past the grader's limits: {error}") from None
    if not isinstance(answer, dict):
        raise SubmissionError(f"{path.name}: the grader's helper answered no submission")
    if "refused" in answer:
        raise SubmissionError(str(answer["refused"]))
    return answer


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()
