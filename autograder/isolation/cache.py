"""The grader's own cache: folders only its user may write, some under names no worker can guess.

The grader keeps what it works out once for many gradings under ``$XDG_CACHE_HOME/autograder``
(``~/.cache/autograder``): the code its grader processes compile, the examples of passing
properties (:mod:`autograder.engine.replay`).
A folder there is used only if it and the folder it is in are this user's alone: whoever writes
in it decides what the grader reads back (:func:`own_folder`).

What some of these folders hold changes with gradings: a property's first passing grading
records its examples, the first grading that needs a solution compiles it. Where nothing hides
the machine's paths from a worker (Landlock alone, Docker's default, an unprivileged user
without bubblewrap), a worker may ``stat`` any path it can name, and their times would tell it
that someone before it was graded and passed. Such a folder's name carries a random key
(:func:`keyed_folder`), kept in a file beside it that no worker may read.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from pathlib import Path

KEY = re.compile(r"[0-9a-f]{32}")


def cache_home() -> Path:
    """Where this user's caches go: ``$XDG_CACHE_HOME``, else ``~/.cache``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


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
