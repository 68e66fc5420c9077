"""Converting a student's notebook to Python, bounded like any other work on untrusted input.

IPython reads a cell again for each piece of its syntax it replaces, so a crafted cell costs it
time that grows with the square of its size. A notebook of at most :data:`FAST_BYTES` is
converted here as long as IPython's passes over its code read at most :data:`FAST_CHARS`
characters in all (plain Python takes one pass a cell); any other is converted in a sandboxed
worker within :func:`converter_limits`, which runs :mod:`autograder.batch.notebook` copied alone,
and one that does not finish within them is a :class:`~autograder.batch.notebook.NotebookError`.
Both ways run IPython's own transformer, so both give the same module.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..engine.session import Session
from ..errors import GraderError, SandboxFailure, StudentError
from ..isolation import Layout, WorkerLimits
from . import notebook
from .notebook import NotebookError, NotebookModule, OverBudget

FAST_BYTES = 1 << 20  # a larger notebook is converted in a worker
FAST_CHARS = 1 << 18  # characters IPython may read here while converting one notebook
CONVERTER_MODULE = "autograder_notebook"  # the notebook module's name in the converting worker


def notebook_module(content: bytes | str) -> NotebookModule:
    """The module a notebook's code cells make, here or in a worker (see the module's docstring)."""
    if len(content) <= FAST_BYTES:
        try:
            return notebook.converted(content, FAST_CHARS)
        except OverBudget:
            pass
    return converted_in_worker(content)


def converter_limits() -> WorkerLimits:
    """What converting a notebook in a worker may take."""
    return WorkerLimits(call_seconds=10, cpu_seconds=10, memory_mb=1024, message_mb=64)


def converted_in_worker(content: bytes | str) -> NotebookModule:
    """:func:`~autograder.batch.notebook.converted` in a sandboxed worker, within
    :func:`converter_limits`. A worker that cannot start or import the converter is the grader's
    failure (:class:`~autograder.errors.GraderError`), never the notebook's."""
    limits = converter_limits()
    with tempfile.TemporaryDirectory(prefix="autograder-notebook-") as folder:
        shutil.copyfile(notebook.__file__, Path(folder) / f"{CONVERTER_MODULE}.py")
        session = Session(Layout(Path(folder)), limits, limits.call_seconds)
        try:
            answer = session.module(CONVERTER_MODULE).wire(content)
        except StudentError as error:
            raise NotebookError(error.message if error.type_name == "NotebookError"
                                else f"it could not be converted ({error.type_name}: {error.message})") from None
        except SandboxFailure as failure:
            raise _failed(failure, limits) from None
        finally:
            session.close()
    return NotebookModule.from_wire(answer)


def _failed(failure: SandboxFailure, limits: WorkerLimits) -> Exception:
    """The notebook's error, where the converting worker went past its limits; else the grader's."""
    if failure.kind in ("timeout", "budget"):
        return NotebookError(f"converting it to Python took longer than {limits.call_seconds:g} s")
    if failure.kind in ("crash", "protocol"):
        return NotebookError(f"converting it to Python went past its limits ({limits.memory_mb} MB of "
                             f"memory, {limits.message_mb} MB of code)")
    return GraderError(f"the sandbox could not convert a notebook: {failure}")
