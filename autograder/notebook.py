"""Notebooks as modules: the code a student ran in Jupyter, graded as the module it makes.

:func:`notebook_module` reads a ``.ipynb`` and returns a :class:`NotebookModule`: every
code cell in notebook order (the answer cells and the cells the student added), as a fresh
kernel's "Restart and run all" would run them, with IPython's own syntax (``%magic``,
``!shell``, ``name?``) turned into plain Python by IPython's ``TransformerManager``. Inside
the sandbox those calls reach a harmless ``get_ipython()`` (:mod:`autograder.worker`).
Left out are the cells that are not the student's code: nbgrader grade cells and cells
tagged ``autograder-skip`` (a notebook's check cell, say). Execution counts and saved
outputs are ignored.

A notebook is the student's, so turning it into Python is bounded like any other work on
untrusted input. IPython reads a cell again for each piece of its syntax it replaces, so a
crafted cell costs it time that grows with the square of its size. A notebook of at most
``FAST_BYTES`` is converted in the calling process as long as IPython's passes over its code
read at most ``FAST_CHARS`` characters in all (plain Python takes one pass a cell); any other
is converted in a sandboxed worker (:mod:`autograder.sandbox`) within :func:`converter_limits`,
and one that does not finish within them is a :class:`NotebookError`. Both ways run IPython's
own transformer, so both give the same module.

The module remembers where each of its lines came from, so :meth:`NotebookModule.relabel`
turns ``exercises/ex1.py", line 57`` in a traceback into ``cell 9, line 4`` (cells counted
from the top of the notebook, Markdown cells included). Two cells with one nbgrader
``grade_id`` (a copied answer cell) are both graded, in order, and named in
:attr:`NotebookModule.duplicates`.
"""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sandbox import Limits

SKIP_TAG = "autograder-skip"
MARK = "autograder_copy_of"  # the nbgrader id of a copied cell whose nbgrader metadata was taken away
FAST_BYTES = 1 << 20  # a larger notebook is converted in a worker
FAST_CHARS = 1 << 18  # characters IPython may read here while converting one notebook
CONVERTER_MODULE = "autograder_notebook"  # this module's name in the converting worker


class NotebookError(Exception):
    """The notebook cannot be read."""


@dataclass(frozen=True)
class NotebookModule:
    """A notebook's code as one module; ``spans`` holds ``(cell number, first line, lines)``."""

    source: str
    spans: tuple[tuple[int, int, int], ...]
    duplicates: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def locate(self, line: int) -> tuple[int, int] | None:
        """The ``(cell number, line in the cell)`` of a line of the module."""
        for cell, first, count in self.spans:
            if first <= line < first + count:
                return cell, line - first + 1
        return None

    def relabel(self, text: str, module_file: str, notebook: str) -> str:
        """``text`` with each ``"<module_file>", line N`` and ``(<module_file>, line N)`` naming the
        notebook's cell instead: ``"ex1.ipynb", cell 9, line 4``."""
        name = re.escape(module_file.rsplit("/", 1)[-1])

        def cell(quote: str) -> Callable[[re.Match], str]:
            def replace(match: re.Match) -> str:
                where = self.locate(int(match["line"]))
                return match[0] if where is None else f"{quote}{notebook}{quote}, cell {where[0]}, line {where[1]}"
            return replace

        text = re.sub(rf'"[^"\n]*{name}", line (?P<line>\d+)', cell('"'), text)
        return re.sub(rf"(?<=\(){name}, line (?P<line>\d+)", cell(""), text)

    def to_json(self) -> dict:
        return {"spans": [list(s) for s in self.spans]}

    @classmethod
    def from_wire(cls, data: Any) -> NotebookModule:
        """The module :func:`wire` sent; anything else is a :class:`NotebookError`."""
        try:
            source, spans, duplicates = data
            return cls(str(source), tuple((int(c), int(f), int(n)) for c, f, n in spans),
                       tuple((str(grade_id), tuple(int(n) for n in cells)) for grade_id, cells in duplicates))
        except (TypeError, ValueError):
            raise NotebookError("the converter's answer is not a module") from None

    @classmethod
    def spans_from_json(cls, data: dict) -> NotebookModule:
        """A module that can only relabel (its source is not kept)."""
        return cls("", tuple(tuple(int(x) for x in span) for span in data["spans"]))  # type: ignore[misc]


def notebook_module(content: bytes | str) -> NotebookModule:
    """The module a notebook's code cells make, here or in a worker (see the module's docstring)."""
    if len(content) <= FAST_BYTES:
        try:
            return converted(content, FAST_CHARS)
        except _OverBudget:
            pass
    return _converted_in_worker(content)


def converted(content: bytes | str, budget: float = math.inf) -> NotebookModule:
    """The module a notebook's code cells make; :class:`_OverBudget` once IPython's passes over
    the code have read more than ``budget`` characters."""
    cells = _cells(content)
    transform = _transformer()(budget).transform_cell
    parts: list[str] = []
    spans: list[tuple[int, int, int]] = []
    line = 1
    owners: dict[str, list[int]] = {}
    for number, cell in enumerate(cells, start=1):
        grade_id = _grade_id(cell)
        if grade_id:
            owners.setdefault(grade_id, []).append(number)
        if not _is_code(cell):
            continue
        source = _text(cell.get("source", ""))
        try:
            python = transform(source) if source.strip() else ""
        except _OverBudget:
            raise
        except Exception:  # IPython could not read it: grade the text as it is (its error names the cell)
            python = source
        python = python.rstrip("\n") + "\n"
        count = python.count("\n")
        parts.append(python + "\n\n")
        spans.append((number, line, count))
        line += count + 2
    duplicates = tuple((grade_id, tuple(numbers)) for grade_id, numbers in owners.items() if len(numbers) > 1)
    return NotebookModule("".join(parts), tuple(spans), duplicates)


class _OverBudget(Exception):
    """Converting the notebook here would read more than its budget of characters."""


@functools.cache
def _transformer() -> type:
    """IPython's ``TransformerManager``, made with a budget of characters (its passes over a
    cell count against it): the same transformer, stopped before it reads more."""
    from IPython.core.inputtransformer2 import TransformerManager

    class Budgeted(TransformerManager):
        def __init__(self, budget: float):
            super().__init__()
            self.left = budget

        def do_one_token_transform(self, lines: list[str]) -> tuple[bool, list[str]]:
            self.left -= sum(map(len, lines))
            if self.left < 0:
                raise _OverBudget
            return super().do_one_token_transform(lines)

    return Budgeted


def converter_limits() -> Limits:
    """What converting a notebook in a worker may take."""
    from .sandbox import Limits

    return Limits(call_seconds=10, cpu_seconds=10, memory_mb=1024, message_mb=64)


def _converted_in_worker(content: bytes | str) -> NotebookModule:
    """:func:`converted` in a sandboxed worker, within :func:`converter_limits`. A worker that
    cannot start or import the converter is the grader's failure
    (:class:`~autograder.errors.GraderError`), never the notebook's."""
    from .errors import GraderError, SandboxFailure, StudentError
    from .proxy import Session
    from .sandbox import Layout

    limits = converter_limits()
    with tempfile.TemporaryDirectory(prefix="autograder-notebook-") as folder:
        shutil.copyfile(__file__, Path(folder) / f"{CONVERTER_MODULE}.py")
        session = Session(Layout(Path(folder)), limits, limits.call_seconds)
        try:
            answer = session.module(CONVERTER_MODULE).wire(content)
        except StudentError as error:
            raise NotebookError(error.message if error.type_name == "NotebookError"
                                else f"it could not be converted ({error.type_name}: {error.message})") from None
        except SandboxFailure as failure:
            if failure.kind in ("timeout", "budget"):
                raise NotebookError(f"converting it to Python took longer than {limits.call_seconds:g} s") from None
            if failure.kind in ("crash", "protocol"):
                raise NotebookError(f"converting it to Python went past its limits ({limits.memory_mb} MB of "
                                    f"memory, {limits.message_mb} MB of code)") from None
            raise GraderError(f"the sandbox could not convert a notebook: {failure}") from None
        finally:
            session.close()
    return NotebookModule.from_wire(answer)


def wire(content: bytes | str) -> list:
    """In the converting worker: :func:`converted`, as plain data."""
    module = converted(content)
    return [module.source, module.spans, module.duplicates]


def _cells(content: bytes | str) -> list[dict]:
    """The notebook's cells, read as plain JSON (nbformat 4; nothing is executed)."""
    try:
        notebook = json.loads(content)
    except (ValueError, UnicodeDecodeError) as error:
        raise NotebookError(f"not a notebook: the file is not valid JSON ({error})") from None
    except RecursionError:
        raise NotebookError("not a notebook: its JSON nests too deep") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise NotebookError("not a notebook: it has no list of cells (nbformat 4 is read)")
    return cells


def _is_code(cell: dict) -> bool:
    metadata = _field(cell, "metadata", dict)
    tags = _field(metadata, "tags", list)
    return cell.get("cell_type") == "code" and not _field(metadata, "nbgrader", dict).get("grade") \
        and SKIP_TAG not in tags


def _grade_id(cell: dict) -> str | None:
    """The nbgrader id of an answer cell, or of a copy of one (see ``MARK``)."""
    metadata = _field(cell, "metadata", dict)
    if isinstance(metadata.get(MARK), str):
        return metadata[MARK]
    nbgrader = _field(metadata, "nbgrader", dict)
    grade_id = nbgrader.get("grade_id")
    return grade_id if nbgrader.get("solution") and isinstance(grade_id, str) else None


def _field(mapping: dict, key: str, kind: type) -> Any:
    """``mapping[key]`` if it is of ``kind``, else an empty one (notebooks are student files)."""
    value = mapping.get(key)
    return value if isinstance(value, kind) else kind()


def _text(source: object) -> str:
    """A cell's source: nbformat stores a string or a list of lines."""
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""
