"""What of the machine a confined process may read.

A worker reads exactly what its Python needs once confined (:func:`worker_reads`): the folders it
imports from, the shared libraries their extension modules load (worked out once per machine,
:func:`shared_libraries`) and the loader's cache. A helper reads its Python's installation and
those libraries (:func:`helper_reads`). For a process that runs as uid 0 without capabilities,
which still owns root's files, every file and folder only root may read is left out
(:func:`without_root_only`).
docs/security.md, "Where it holds", says why and what each mode shows."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

from ..errors import GraderError
from .cache import cache_home, own_folder

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")


def runtime() -> list[Path]:
    """The Python installation the worker runs (a venv and the Python it was made from)."""
    return [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent]


def outermost(paths: list[Path]) -> list[Path]:
    """Existing paths with those inside another one dropped (a bind covers its subfolders), in one
    order whatever the order given: the shared libraries' record is named by them."""
    kept: dict[Path, None] = {}  # in order; looked up by each path's ancestors, not compared with each
    for path in sorted({p.absolute() for p in paths if p.exists()}, key=lambda p: (len(p.parts), p)):
        if not any(outer in kept for outer in [path, *path.parents]):
            kept[path] = None
    return list(kept)


LOADER_CACHE = Path("/etc/ld.so.cache")  # where the dynamic loader finds a library dlopen names
LIBRARY = re.compile(r"(?:=>\s*|^\s*)(/\S+) \(0x", re.MULTILINE)  # a library ldd found, or the loader


def worker_reads(as_root: bool) -> list[Path]:
    """Exactly what a worker's Python reads once confined: the folders its imports come from and
    the shared libraries their extension modules load, less, for a process that runs as root
    without capabilities (``as_root``), every file and folder only root may read."""
    paths = [*import_folders(), *shared_libraries(), LOADER_CACHE]
    return list(without_root_only(tuple(paths))) if as_root else paths


@functools.cache
def import_folders() -> tuple[Path, ...]:
    """Where a worker's Python imports from: its standard library, its extension modules and
    the site-packages folders it is given (:func:`site.getsitepackages`). A base interpreter's own
    site-packages inside its standard library's folder (pyenv's, a source build's) is left out
    unless it is one of those: a virtual environment imports nothing from it."""
    paths = sysconfig.get_paths()
    given = [Path(folder) for folder in site.getsitepackages()]
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})
    unused = frozenset(str(Path(base[kind])) for kind in ("purelib", "platlib") if Path(base[kind]) not in given)
    stdlib = outermost([Path(paths["stdlib"]), Path(sysconfig.get_config_var("DESTSHARED") or paths["stdlib"])])
    return tuple(outermost([*(path for folder in stdlib for path in _entries_without(folder, unused)), *given]))


@functools.cache
def shared_libraries() -> tuple[Path, ...]:
    """The shared libraries the interpreter and every extension module in :func:`import_folders`
    load, as the dynamic loader finds them (``ldd``): worked out once per machine, and again
    whenever a folder imported from or the loader's cache changes."""
    folders = import_folders()
    stamp = [str(Path(sys.executable).resolve()), *(f"{p}:{p.stat().st_mtime_ns}" for p in [*folders, LOADER_CACHE]
                                                    if p.exists())]
    kept = own_folder(cache_home() / "autograder" / "libraries")
    record = kept / f"{hashlib.sha256(json.dumps(stamp).encode()).hexdigest()[:32]}.json" if kept else None
    if record is not None:
        try:
            return tuple(Path(p) for p in json.loads(record.read_text(encoding="utf-8")))
        except (OSError, ValueError):  # not worked out on this machine yet
            pass
    found = _loaded_by([Path(sys.executable).resolve(), *(p for f in folders for p in f.rglob("*.so*") if p.is_file())])
    if record is not None:  # whole or not at all, should two graders work it out at once
        partial = record.with_suffix(f".{os.getpid()}")
        partial.write_text(json.dumps([str(p) for p in found]), encoding="utf-8")
        partial.replace(record)
    return found


def _loaded_by(files: list[Path]) -> tuple[Path, ...]:
    """Every library the dynamic loader would load for ``files`` (trusted: the runtime's own)."""
    if shutil.which("ldd") is None:
        raise GraderError("ldd (libc-bin) is not installed: without it the grader cannot tell which shared "
                          "libraries a worker's Python needs, and gives it nothing more")
    found: set[str] = set()
    for start in range(0, len(files), 200):
        run = subprocess.run(["ldd", *map(str, files[start:start + 200])], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, timeout=120)
        found.update(LIBRARY.findall(run.stdout))
    return tuple(sorted(Path(p) for p in found))


def helper_reads(as_root: bool) -> list[Path]:
    """What a helper's Python reads once confined: its environment (the templates of nbconvert
    included), the folders it imports from, the shared libraries its extension modules load and the
    loader's cache, less, for a process that runs as root without capabilities (``as_root``), every
    file and folder only root may read."""
    paths = [Path(sys.prefix), *import_folders(), *shared_libraries(), LOADER_CACHE]
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
