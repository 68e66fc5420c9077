"""Notebooks as modules: the code a student ran in Jupyter, graded as the module it makes.

:func:`converted` reads a ``.ipynb`` and returns a :class:`NotebookModule`: its code cells in
order, IPython's syntax made plain Python by IPython's ``TransformerManager``, grade cells and
``autograder-skip`` cells left out, copied answer cells in :attr:`NotebookModule.duplicates` and
each line's cell in :attr:`NotebookModule.spans` (:mod:`autograder.engine.cells`). It runs only
in the limited helper, within a budget of characters, so it imports the standard library only
(and IPython where it converts). What is graded of a notebook: docs/instructors.md, "What a
submission may hold"; why in the helper: docs/security.md, "Untrusted input is parsed only in
the limited helper".
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any

SKIP_TAG = "autograder-skip"
MARK = "autograder_copy_of"  # the nbgrader id of a copied cell whose nbgrader metadata was taken away


class NotebookError(Exception):
    """The notebook cannot be read."""


@dataclass(frozen=True)
class NotebookModule:
    """A notebook's code as one module; ``spans`` holds ``(cell number, first line, lines)``;
    ``read``, the characters IPython's passes read to make it."""

    source: str
    spans: tuple[tuple[int, int, int], ...]
    duplicates: tuple[tuple[str, tuple[int, ...]], ...] = ()
    read: int = 0

    @classmethod
    def from_wire(cls, data: Any) -> NotebookModule:
        """The module :func:`converted_files` answered; anything else is a :class:`NotebookError`."""
        try:
            source, spans, duplicates = data
            return cls(str(source), tuple((int(c), int(f), int(n)) for c, f, n in spans),
                       tuple((str(grade_id), tuple(int(n) for n in cells)) for grade_id, cells in duplicates))
        except (TypeError, ValueError):
            raise NotebookError("the converter's answer is not a module") from None


def converted(content: bytes | str, budget: float = math.inf) -> NotebookModule:
    """The module a notebook's code cells make; :class:`OverBudget` once IPython's passes over
    the code have read more than ``budget`` characters."""
    cells = _cells(content)
    transformer = _transformer()(budget)
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
            python = transformer.transform_cell(source) if source.strip() else ""
        except OverBudget:
            raise
        except Exception:  # IPython could not read it: grade the text as it is (its error names the cell)
            python = source
        python = python.rstrip("\n") + "\n"
        count = python.count("\n")
        parts.append(python + "\n\n")
        spans.append((number, line, count))
        line += count + 2
    duplicates = tuple((grade_id, tuple(numbers)) for grade_id, numbers in owners.items() if len(numbers) > 1)
    return NotebookModule("".join(parts), tuple(spans), duplicates, transformer.read)


class OverBudget(Exception):
    """Converting the notebook here would read more than its budget of characters."""


@functools.cache
def _transformer() -> type:
    """IPython's ``TransformerManager``, made with a budget of characters (its passes over a
    cell count against it): the same transformer, stopped before it reads more."""
    from IPython.core.inputtransformer2 import TransformerManager

    class Budgeted(TransformerManager):
        def __init__(self, budget: float):
            super().__init__()
            self.budget, self.read = budget, 0

        def do_one_token_transform(self, lines: list[str]) -> tuple[bool, list[str]]:
            self.read += sum(map(len, lines))
            if self.read > self.budget:
                raise OverBudget
            return super().do_one_token_transform(lines)

    return Budgeted


def converted_files(request: dict) -> list[dict]:
    """The task of :mod:`autograder.isolation.helper`: each notebook of ``request["paths"]``
    :func:`converted` within ``request["budget"]`` (each its own), as plain data
    (:meth:`NotebookModule.from_wire`), or ``{"error": why}``."""
    answers: list[dict[str, Any]] = []
    for path in request["paths"]:
        try:
            with open(path, "rb") as file:
                module = converted(file.read(), request["budget"])
        except OSError as error:
            answers.append({"error": f"it cannot be read ({error.strerror})"})
        except NotebookError as error:
            answers.append({"error": str(error)})
        except OverBudget:
            answers.append({"error": f"converting it to Python would read over {request['budget']:,} characters"})
        else:
            answers.append({"module": [module.source, module.spans, module.duplicates]})
    return answers


def _cells(content: bytes | str) -> list[dict]:
    """The notebook's cells, read as plain JSON (nbformat 4; nothing is executed)."""
    try:
        notebook = json.loads(content)
    except json.JSONDecodeError as error:  # its own words end in "(char N)": said here without them
        raise NotebookError(f"not a notebook: the file is not valid JSON: {error.msg} at line {error.lineno}, "
                            f"column {error.colno}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise NotebookError(f"not a notebook: the file is not valid JSON: {error}") from None
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
