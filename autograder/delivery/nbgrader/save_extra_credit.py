"""A bonus exercise's score as extra credit in nbgrader's gradebook."""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

from .sandbox_grade import EXTRA_CREDIT


class SaveExtraCredit(NbGraderPreprocessor):
    """The score of a bonus exercise as the extra credit of its grade cell (worth 0 points) in
    nbgrader's gradebook; it runs after ``SaveAutoGrades``, which made the cell's grade."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        extra = resources.get(EXTRA_CREDIT)
        if extra is None:
            return nb, resources
        names = resources["nbgrader"]
        with Gradebook(names["db_url"]) as gradebook:
            grade = gradebook.find_grade(extra["grade_id"], names["notebook"], names["assignment"], names["student"])
            grade.extra_credit = extra["score"]
            gradebook.db.commit()
        return nb, resources
