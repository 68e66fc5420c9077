"""Copied answer cells graded as plain code cells, where nbgrader's ``DeduplicateIds`` would stop."""

from __future__ import annotations

from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor

from ...intake.notebook import MARK


class SeparateCopies(NbGraderPreprocessor):
    """nbgrader's ``DeduplicateIds``, done so that autograding goes on (nbgrader#1083): of the
    cells that share an nbgrader id (a copied answer cell), the last keeps it; the others
    become plain code cells, marked so that :mod:`autograder.intake.notebook` still names them in the
    student's feedback. (``DeduplicateIds`` leaves them an empty ``nbgrader`` entry, which
    ``CheckCellMetadata`` then refuses as an old metadata format, stopping the autograde.)"""

    def preprocess(self, nb, resources):
        seen: set[str] = set()
        for cell in reversed(nb.cells):
            if utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell):
                grade_id = cell.metadata["nbgrader"]["grade_id"]
                if grade_id in seen:
                    self.log.warning("cell %r exists more than once: the copy is graded as a plain code cell",
                                     grade_id)
                    cell.metadata[MARK] = grade_id
                    del cell.metadata["nbgrader"]
                seen.add(grade_id)
        return nb, resources
