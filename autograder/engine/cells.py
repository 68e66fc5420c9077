"""Where each line of a module made from a notebook came from, so that feedback names the cell.

Staging writes, beside the staged package, one line map per exercise handed in as a notebook
(:data:`NOTEBOOKS`); a grading reads them back (:func:`cell_maps`) and turns
``exercises/ex1.py", line 57`` in a failure's traceback into ``"ex1.ipynb", cell 9, line 4``
(:meth:`CellMap.relabel`), cells counted from the top of the notebook, Markdown cells included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NOTEBOOKS = ".notebooks.json"  # staged beside the package: which lines of which module came from which cell


@dataclass(frozen=True)
class CellMap:
    """The lines of a module made from a notebook: ``(cell number, first line, lines)`` per code cell."""

    spans: tuple[tuple[int, int, int], ...]

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
    def from_json(cls, data: dict) -> CellMap:
        return cls(tuple((int(cell), int(first), int(count)) for cell, first, count in data["spans"]))


def cell_maps(root: Path) -> dict[str, CellMap]:
    """The line maps of a staged submission (its folder ``root``), by exercise module."""
    path = root / NOTEBOOKS
    if not path.is_file():
        return {}
    return {module: CellMap.from_json(data) for module, data in json.loads(path.read_text(encoding="utf-8")).items()}
