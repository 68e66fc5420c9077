"""The course's digest: a hash of everything that decides a grade besides the submission.

A batch keys its gradebook by it (a submission graded against another course version is graded
again), a cluster checks that every worker's copy of the course has the client's, and the engine
keys its recorded examples by it (:mod:`autograder.engine.replay`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
from pathlib import Path

from ..config import Course
from ..errors import GraderError
from ..isolation import cache_home, own_folder
from ..signatures import stub_path


def course_digest(course: Course) -> str:
    """A hash of everything that decides a grade besides the submission: the course file, the
    suites and the course's own modules they import, the exercises' stubs (their signatures and
    docstring examples are checked), the solutions, the support modules, the data files and the
    read-only paths (each file with its path). A file this process cannot read is a
    :class:`GraderError` naming it: a batch stops there, before it grades anyone."""
    files = [course.file, *suite_sources(course), *(stub_path(course, e.module) for e in course.exercises)]
    files += sorted(course.solutions_path().rglob("*.py")) if course.solutions is not None else []
    files += [course.path(m) for m in course.sandbox.support_modules]
    for named in [*course.data.values(), *course.sandbox.readonly_paths]:
        path = course.path(named)
        files += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest, root = hashlib.sha256(), course.root.resolve()
    for file in files:
        name = file.relative_to(root) if file.is_relative_to(root) else file
        digest.update(f"\0{name}\0".encode("utf-8", "surrogateescape"))
        try:
            digest.update(file.read_bytes() if file.is_file() else b"\0missing")
        except OSError as error:
            raise GraderError(f"cannot read the course file {file} ({error.strerror}): the grader's user must "
                              "be able to read every file of the course") from None
    return digest.hexdigest()


def suite_sources(course: Course) -> list[Path]:
    """The suites and, transitively, every module of the course's own they import (found under
    the course root by reading their imports, nothing run): a suite's strategies decide its examples."""
    root = course.root.resolve()
    todo = [course.path(e.suite) for e in course.exercises]
    found: list[Path] = []
    while todo:
        file = todo.pop(0)
        if file in found or not file.is_file():
            continue
        found.append(file)
        got = file.stat()
        todo += _imported_files(file, root, (got.st_dev, got.st_ino, got.st_size, got.st_mtime_ns, got.st_ctime_ns))
    return found


@functools.lru_cache(maxsize=1024)
def _imported_files(file: Path, root: Path, version: tuple[int, ...]) -> tuple[Path, ...]:
    """The files under ``root`` that ``file``'s imports may name, read once per ``version`` of
    it in a process (its inode, size and times: a change to the file changes its ctime), and
    parsed once per content on this machine (the grader's cache): every grader process and
    command reads the course digest, and parsing the suites was most of it."""
    try:
        source = file.read_bytes()
    except OSError:
        return ()  # course_digest names a file it cannot read
    here = file.parent.relative_to(root).parts if file.is_relative_to(root) else ()
    kept = own_folder(cache_home() / "autograder" / "imports")
    key = hashlib.sha256(json.dumps([str(root), here]).encode() + b"\0" + source).hexdigest()[:32]
    record = kept / f"{key}.json" if kept is not None else None
    try:
        kept_paths = json.loads(record.read_text(encoding="utf-8")) if record is not None else None
    except (OSError, ValueError):  # not parsed on this machine yet
        kept_paths = None
    if isinstance(kept_paths, list) and all(isinstance(path, str) for path in kept_paths):
        return tuple(Path(path) for path in kept_paths)
    files = _named_by(source, here, root)
    if record is not None:  # whole or not at all, should two processes parse it at once
        partial = record.with_suffix(f".{os.getpid()}")
        try:
            partial.write_text(json.dumps([str(p) for p in files]), encoding="utf-8")
            partial.replace(record)
        except OSError:  # a full disk: parsed again next time
            partial.unlink(missing_ok=True)
    return files


def _named_by(source: bytes, here: tuple[str, ...], root: Path) -> tuple[Path, ...]:
    """The files under ``root`` that the imports of ``source``, a module in the folder ``here``
    of it, may name."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()  # pytest reports a broken suite
    files: list[Path] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):  # a relative import starts from the file's package
            package = here[:len(here) - node.level + 1] if node.level else ()
            base = ".".join([*package, *filter(None, [node.module])])
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for parts in (name.strip(".").split(".") for name in names if name.strip(".")):
            for end in range(1, len(parts) + 1):
                stem = root.joinpath(*parts[:end])
                files += [stem.with_suffix(".py"), stem / "__init__.py"]
    return tuple(files)
