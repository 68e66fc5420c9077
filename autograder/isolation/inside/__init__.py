"""What is copied into every worker: standard library only, never importing the autograder package.

A worker's Python starts with this folder's copy first on ``sys.path`` and imports :data:`FILES`
as top-level modules (``worker``, or ``zygote_loop`` for a zygote; they import ``codec``,
``landlock``, ``seccomp``, ``frames`` and ``cpython``); the grader imports the same files as this package's
modules (``codec`` to talk to workers, ``landlock`` to probe the kernel, ``frames`` for the
header). So a file here imports only the standard library and its siblings, and imports what
only some workers need where they need it: every worker's start pays for every import.
``helper.py`` is not copied: the limited helper (:mod:`autograder.isolation.helper`) runs it from here.
"""

import functools
import sys
from pathlib import Path

from . import cpython

FILES = ("worker.py", "zygote_loop.py", "codec.py", "cpython.py", "frames.py", "landlock.py", "seccomp.py")
FOLDER = Path(__file__).resolve().parent


@functools.cache
def compiled_files() -> dict[str, bytes]:
    """The worker's files, each with its compiled code (a ``__pycache__`` file checked against
    the source's hash), by path: made once per grader process and written into every worker's
    folder, so that no worker compiles them. A worker imports its entry module rather than
    running it as a script, whose code Python would compile anew."""
    files = {}
    for name in FILES:
        source, stem = (FOLDER / name).read_bytes(), Path(name).stem
        files[name] = source
        if sys.implementation.cache_tag is not None:  # a Python that keeps compiled code
            # compiled as name, not by its grader path (dfile): no grader path inside
            code = compile(source, name, "exec", dont_inherit=True)
            files[f"__pycache__/{stem}.{sys.implementation.cache_tag}.pyc"] = cpython.checked_pyc(code, source)
    return files


def write_files(folder: Path) -> None:
    """The worker's files and their compiled code, in ``folder`` (made here)."""
    for name, data in compiled_files().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
