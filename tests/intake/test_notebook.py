"""Turning a notebook into Python is work on untrusted input: done in the limited helper only,
within a budget of what IPython may read, and the same module as the conversion itself makes."""

import csv
import json

import pytest

from autograder.errors import GraderError
from autograder.intake import notebook
from autograder.intake.converting import notebook_module
from autograder.intake.notebook import NotebookError, converted
from autograder.intake.reading import NOTEBOOK_CHARS
from autograder.isolation import helper
from tests.conftest import ROOT, autograder

TOY = ROOT / "tests" / "fixtures" / "toy_course"
ANSWER = (TOY / "answers" / "ex_sum.py").read_text()


def notebook_of(*sources: str) -> bytes:
    cells = [{"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None}
             for source in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def hostile(kilobytes: int) -> bytes:
    """IPython reads the whole cell again for each magic it replaces: time grows with the square."""
    return notebook_of("%a\n" * (kilobytes * 1024 // 3))


def test_the_helper_converts_to_the_module_the_conversion_makes_and_never_here(monkeypatch):
    content = notebook_of("import os\n\n   \nx = 1\n", "%time y = 2\n!ls\n" * 40, "def f(x):\n    return x?\n")
    here = converted(content)
    assert "get_ipython().system('ls')" in here.source
    monkeypatch.setattr(notebook, "converted", lambda *args: pytest.fail("converted in the calling process"))
    there = notebook_module(content)
    assert (there.source, there.spans, there.duplicates) == (here.source, here.spans, here.duplicates)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_hostile_notebook_stops_at_its_budget():
    """IPython's passes stop once they have read the budget's characters: the same stop on every machine."""
    stopped = rf"^converting it to Python would read over {NOTEBOOK_CHARS:,} characters$"
    with pytest.raises(NotebookError, match=stopped):
        notebook_module(hostile(16))


def test_a_helper_that_cannot_start_is_the_grader_s_failure(monkeypatch, tmp_path):
    """Never the student's: a helper that does not start stops the grading instead of zeroing a notebook."""
    monkeypatch.setattr(helper.sys, "executable", str(tmp_path / "no-python"))
    with pytest.raises(GraderError, match="the limited helper did not start"):
        notebook_module(notebook_of(ANSWER))


def test_json_nested_too_deep_is_not_a_notebook():
    with pytest.raises(NotebookError, match="nests too deep"):
        notebook_module(b"[" * 100_000)


@pytest.mark.sandbox
@pytest.mark.slow
def test_a_hostile_notebook_costs_its_own_submission_only(tmp_path):
    """Its exercise is not graded, with a note saying why; the rest of the batch grades as ever."""
    (tmp_path / "right").mkdir()
    (tmp_path / "right" / "ex_sum.py").write_text(ANSWER)
    (tmp_path / "ex_sum.ipynb").write_bytes(hostile(16))
    graded = autograder("grade", str(tmp_path / "right"), str(tmp_path / "ex_sum.ipynb"), "--out",
                        str(tmp_path / "out"), "--jobs", "1", course=TOY / "course.yaml")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = {row["submission"]: row for row in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert rows["right"]["score"] == "10" and rows["ex_sum"]["score"] == "0"
    why = (f"ex_sum.ipynb could not be read, so ex_sum was not graded: converting its notebooks to Python would "
           f"read over {NOTEBOOK_CHARS:,} characters")
    assert why in (tmp_path / "out" / "ex_sum" / "feedback.md").read_text()
