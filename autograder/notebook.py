"""Notebooks as modules: the code a student ran in Jupyter, graded as the module it makes.

:func:`notebook_module` reads a ``.ipynb`` and returns a :class:`NotebookModule`: every
code cell in notebook order (the answer cells and the cells the student added), as a fresh
kernel's "Restart and run all" would run them, with IPython's own syntax (``%magic``,
``!shell``, ``name?``) turned into plain Python by IPython's ``TransformerManager``. Inside
the sandbox those calls reach a harmless ``get_ipython()`` (:mod:`autograder.worker`).
Left out are the cells that are not the student's code: nbgrader grade cells and cells
tagged ``autograder-skip`` (a notebook's check cell, say). Execution counts and saved
outputs are ignored.

The module remembers where each of its lines came from, so :meth:`NotebookModule.relabel`
turns ``exercises/ex1.py", line 57`` in a traceback into ``cell 9, line 4`` (cells counted
from the top of the notebook, Markdown cells included). Two cells with one nbgrader
``grade_id`` (a copied answer cell) are both graded, in order, and named in
:attr:`NotebookModule.duplicates`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SKIP_TAG = "autograder-skip"
MARK = "autograder_copy_of"  # the nbgrader id of a copied cell whose nbgrader metadata was taken away


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

    def notes(self, notebook: str) -> list[str]:
        """One line per copied answer cell, for the student's feedback."""
        return [f"{notebook}: cells {', '.join(map(str, cells))} are all the answer cell {grade_id!r} (one was "
                "copied); all were graded, in order, so the last one's definitions count"
                for grade_id, cells in self.duplicates]

    def to_json(self) -> dict:
        return {"spans": [list(s) for s in self.spans]}

    @classmethod
    def spans_from_json(cls, data: dict) -> NotebookModule:
        """A module that can only relabel (its source is not kept)."""
        return cls("", tuple(tuple(int(x) for x in span) for span in data["spans"]))  # type: ignore[misc]


def notebook_module(content: bytes | str) -> NotebookModule:
    """The module a notebook's code cells make (see the module's docstring)."""
    from IPython.core.inputtransformer2 import TransformerManager

    cells = _cells(content)
    transform = TransformerManager().transform_cell
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
        except Exception:  # IPython could not read it: grade the text as it is (its error names the cell)
            python = source
        python = python.rstrip("\n") + "\n"
        count = python.count("\n")
        parts.append(python + "\n\n")
        spans.append((number, line, count))
        line += count + 2
    duplicates = tuple((grade_id, tuple(numbers)) for grade_id, numbers in owners.items() if len(numbers) > 1)
    return NotebookModule("".join(parts), tuple(spans), duplicates)


def _cells(content: bytes | str) -> list[dict]:
    """The notebook's cells, read as plain JSON (nbformat 4; nothing is executed)."""
    try:
        notebook = json.loads(content)
    except (ValueError, UnicodeDecodeError) as error:
        raise NotebookError(f"not a notebook: the file is not valid JSON ({error})") from None
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
