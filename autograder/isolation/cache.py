"""The grader's own cache: folders only its user may write, some under names no worker can guess.

Under ``$XDG_CACHE_HOME/autograder``: the code the grader compiles and the recorded
examples (:mod:`autograder.engine.replay`). :func:`own_folder` uses a folder only if it and its
parent are this user's alone; :func:`keyed_folder` names one by a random key kept beside it,
where a worker could otherwise tell from its times that someone was graded before it. Why:
docs/architecture.md, "Recorded examples: the replay" (who may write them); docs/security.md,
"Where it holds: the isolation matrix".
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import tempfile
from pathlib import Path

KEY = re.compile(r"[0-9a-f]{32}")


def cache_home() -> Path:
    """Where this user's caches go: ``$XDG_CACHE_HOME``, else ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def hypothesis_storage(fallback: str) -> str:
    """Where hypothesis keeps its files in a grading process (a grader process, a command that
    grades in its own, as ``check`` does): the user's cache, shared by all of them, or
    ``fallback`` if that cannot be made. What hypothesis keeps there is the table of unicode
    categories it builds on first use, which every fresh process would otherwise build again (its
    example database is off, so nothing there depends on a submission); the engine keeps its
    recorded examples beside it (:func:`autograder.engine.replay.cache_folder`)."""
    cache = cache_home() / "autograder" / "hypothesis"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return fallback
    return str(cache)


def own_folder(folder: Path) -> Path | None:
    """``folder``, made if need be, if it and its parent are this user's and nobody else may
    write in them; else None."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        modes = [folder.stat(), folder.parent.stat()]
    except OSError:
        return None
    return folder if all(m.st_uid == os.getuid() and not m.st_mode & 0o022 for m in modes) else None


def keyed_folder(parent: Path, name: str) -> Path | None:
    """``parent/<name>-<key>``, made if need be: ``key`` is 32 random hex digits, drawn once and
    kept in ``parent/<name>.key``, which only this user may read. None where ``parent`` is not
    this user's alone, or the key cannot be kept."""
    if own_folder(parent) is None:
        return None
    keeper = parent / f"{name}.key"
    try:
        if not keeper.exists():
            with tempfile.NamedTemporaryFile("w", dir=parent, delete=False) as drawn:  # mode 0600
                drawn.write(secrets.token_hex(16))
            try:
                os.link(drawn.name, keeper)  # whole, and only once, should two graders draw at once
            except FileExistsError:
                pass
            finally:
                os.unlink(drawn.name)
        info, key = keeper.stat(), keeper.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not KEY.fullmatch(key):
        return None
    return own_folder(parent / f"{name}-{key}")


def compiled_code() -> Path | None:
    """Where the grader's processes keep the code they compile: a folder of the user's cache under a
    name no worker can guess (:func:`keyed_folder`), or None. Never beside the course's own files:
    importing a suite or a solution would write its ``__pycache__`` there, readable by whoever may
    read the folder, and a worker that can name the course's folders (where nothing hides the
    machine's paths from it) would see their times move, and so learn that someone was graded
    before it."""
    return keyed_folder(cache_home() / "autograder", "compiled")


def keep_compiled_code() -> None:
    """Have this process write the code it compiles from now on into :func:`compiled_code`,
    whatever ``PYTHONDONTWRITEBYTECODE`` says, or write none where that folder cannot be had."""
    folder = compiled_code()
    sys.pycache_prefix = str(folder) if folder is not None else None
    sys.dont_write_bytecode = folder is None
