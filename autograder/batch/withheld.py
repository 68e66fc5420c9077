"""An output folder's reports, out of every worker's reach while a batch grades.

While a batch runs, the output folder's reports, ``gradebook.sqlite`` and ``grades.csv`` live in
a folder of it named ``.grading-`` and 32 random hex digits, the grader's alone (0700), and move
back when it ends, a rename each; a batch that was killed leaves it behind, and the next batch
on the same output moves it back first. A batch holds a lock on its folder, and a second one on
the same output stops. Why (a worker may ``stat`` a path it can name): docs/security.md,
"Where it holds: the isolation matrix".
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
from pathlib import Path

from ..errors import GraderError
from .gradebook import BATCH_FILES

PREFIX = ".grading-"
REPORT_FILES = ("results.json", "feedback.md", "grader.log")  # what marks a folder as a submission's reports


class Withheld:
    """``with Withheld(out) as folder:`` the batch's own entries of ``out`` (:func:`batch_owned`)
    are in ``folder`` until the block ends, whatever way it ends, and go back then."""

    def __init__(self, out: Path):
        self.out = out
        self.folder = out / (PREFIX + secrets.token_hex(16))
        self.lock: int | None = None

    def __enter__(self) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        for left in sorted(self.out.glob(PREFIX + "*")):
            publish(left, self.out)
        self.folder.mkdir(mode=0o700)
        self.lock = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        for entry in batch_owned(self.out):
            os.rename(entry, self.folder / entry.name)
        return self.folder

    def __exit__(self, *exc: object) -> None:
        assert self.lock is not None
        try:
            publish(self.folder, self.out, self.lock)
        finally:
            os.close(self.lock)


def batch_owned(out: Path) -> list[Path]:
    """What of ``out`` a batch wrote: its gradebook (with SQLite's journal, if any), ``grades.csv``
    and the folders of submissions' reports; nothing else (an instructor's own files stay)."""
    owned = []
    for entry in sorted(out.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.name in BATCH_FILES or entry.name.startswith("gradebook.sqlite-") or (
                entry.is_dir() and not entry.is_symlink() and any((entry / name).exists() for name in REPORT_FILES)):
            owned.append(entry)
    return owned


def publish(folder: Path, out: Path, lock: int | None = None) -> None:
    """Move everything in ``folder`` (a batch's, under ``out``) into ``out``, in the stead of what
    is there under the same name, then remove ``folder``. Unless ``lock`` (the batch's own) is
    given, a folder whose batch still runs is :class:`GraderError`."""
    held = lock
    if held is None:
        held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(held)
            raise GraderError(f"another batch is grading into {out} (it holds {folder.name}); wait for it to "
                              "end, or grade into another folder") from None
    try:
        for entry in sorted(folder.iterdir()):
            target = out / entry.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            os.rename(entry, target)
        folder.rmdir()
    finally:
        if lock is None:
            os.close(held)
