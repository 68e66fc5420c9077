"""What of the machine a confined process may read: the system folders and the Python it runs.

A worker or helper that runs as uid 0 without capabilities (Landlock alone, Docker's default, a
container without ``CAP_SETUID``) still owns root's files, so a folder given to it whole gives it
``/etc/shadow`` or ``/etc/ssl/private`` if they lie beneath. For such a process a folder that holds
a file or folder only root may read is given entry by entry, down to that file, which is left out
(:func:`system_reads`). docs/security.md, "Where it holds", says what each mode shows.
"""

from __future__ import annotations

import functools
import os
import stat
import sys
from pathlib import Path

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")


def runtime() -> list[Path]:
    """The Python installation the worker runs (a venv and the Python it was made from)."""
    return [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent]


def outermost(paths: list[Path]) -> list[Path]:
    """Existing paths with those inside another one dropped (a bind covers its subfolders)."""
    kept: list[Path] = []
    for path in sorted({p.absolute() for p in paths if p.exists()}, key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(outer) for outer in kept):
            kept.append(path)
    return kept


def system_reads(as_root: bool) -> list[Path]:
    """The system folders and the Python installation, for a process that runs as root without
    capabilities (``as_root``) less every file and folder only root may read."""
    paths = [*(Path(d) for d in SYSTEM_DIRS), *runtime()]
    return list(without_root_only(tuple(paths))) if as_root else paths


def root_only(info: os.stat_result) -> bool:
    """Whether a file or folder is root's alone: owned by root, and others may not read (or list) it."""
    return info.st_uid == 0 and not info.st_mode & stat.S_IROTH


@functools.cache
def without_root_only(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """``paths`` (their real paths), each folder that holds something only root may read replaced by
    its entries, down to what is left out. Walks every folder once in a process."""
    kept: list[Path] = []
    for folder in outermost(list({path.resolve() for path in paths})):
        hidden = _root_only_beneath(folder)
        kept += _entries_without(folder, hidden) if hidden else [folder]
    return tuple(kept)


def _root_only_beneath(folder: Path) -> frozenset[str]:
    """Every path under ``folder`` (itself included) only root may read; links are not followed."""
    found: set[str] = set()
    pending = [str(folder)]
    while pending:
        current = pending.pop()
        try:
            info = os.stat(current, follow_symlinks=False)
        except OSError:
            continue
        if root_only(info):
            found.add(current)
        elif stat.S_ISDIR(info.st_mode):
            try:
                with os.scandir(current) as entries:
                    pending += [entry.path for entry in entries]
            except OSError:
                continue
    return frozenset(found)


def _entries_without(folder: Path, hidden: frozenset[str]) -> list[Path]:
    """``folder`` given entry by entry without ``hidden``: whole where nothing hidden lies beneath.
    A link is kept only if it leads to a file nobody hides (Landlock would follow it)."""
    if str(folder) in hidden:
        return []
    if not any(path.startswith(f"{folder}/") for path in hidden):
        return [folder]
    kept: list[Path] = []
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            path = Path(entry.path)
            if entry.is_symlink():
                try:
                    target = os.stat(path)
                except OSError:
                    continue
                if stat.S_ISREG(target.st_mode) and not root_only(target):
                    kept.append(path)
            elif entry.is_dir(follow_symlinks=False):
                kept += _entries_without(path, hidden)
            elif str(path) not in hidden:
                kept.append(path)
    return kept
