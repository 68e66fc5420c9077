"""Converting students' notebooks to Python, in the limited helper like any other work on untrusted input.

IPython reads a cell again for each piece of its syntax it replaces, so a crafted cell costs it
time that grows with the square of its size. :func:`notebook_modules` converts notebooks in a
limited helper (:mod:`autograder.isolation.helper`), each within a budget of
:data:`~autograder.intake.reading.NOTEBOOK_CHARS` characters that IPython's passes may read (a
deterministic stop; docs/security.md gives its cost), all within the helper's limits; one that
goes past either is a :class:`~autograder.intake.notebook.NotebookError`. Staging converts a
submission's notebooks in its own helper (:mod:`autograder.intake.reading`), with the same code
and budget.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..isolation import OverLimits, run_helper
from .notebook import NotebookError, NotebookModule
from .reading import NOTEBOOK_CHARS


def notebook_modules(paths: list[Path]) -> list[NotebookModule | NotebookError]:
    """The module each notebook at ``paths`` makes, or why it makes none, converted in one
    limited helper: a student's notebooks share its start."""
    try:
        answers = run_helper("autograder.intake.notebook:converted_files",
                             {"paths": [str(path) for path in paths], "budget": NOTEBOOK_CHARS}, read=paths)
    except OverLimits as error:
        return [NotebookError(f"converting it to Python went past its limits ({error})")] * len(paths)
    if not isinstance(answers, list) or len(answers) != len(paths):
        return [NotebookError("the converter's answer is not a module")] * len(paths)
    return [_module(answer) for answer in answers]


def notebook_module(content: bytes | str) -> NotebookModule:
    """The module a notebook's code cells make, converted in a limited helper."""
    with tempfile.TemporaryDirectory(prefix="autograder-notebook-") as folder:
        path = Path(folder) / "notebook.ipynb"
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        made, = notebook_modules([path])
    if isinstance(made, NotebookError):
        raise made
    return made


def _module(answer: Any) -> NotebookModule | NotebookError:
    if isinstance(answer, dict) and "error" in answer:
        return NotebookError(str(answer["error"]))
    try:
        return NotebookModule.from_wire(answer.get("module") if isinstance(answer, dict) else None)
    except NotebookError as error:
        return error
