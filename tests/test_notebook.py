"""Turning a notebook into Python is work on untrusted input: bounded in time and memory, in
the calling process and in the worker that takes over, and the same module either way."""

import csv
import json

import pytest

from autograder.batch import converting, notebook
from autograder.batch.converting import notebook_module
from autograder.batch.notebook import NotebookError, converted
from autograder.errors import GraderError
from autograder.isolation import WorkerLimits
from tests.conftest import ROOT, autograder

pytestmark = pytest.mark.sandbox

TOY = ROOT / "tests" / "fixtures" / "toy_course"
ANSWER = (TOY / "answers" / "ex_sum.py").read_text()


def notebook_of(*sources: str) -> bytes:
    cells = [{"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None}
             for source in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def hostile(kilobytes: int) -> bytes:
    """IPython reads the whole cell again for each magic it replaces: time grows with the square."""
    return notebook_of("%a\n" * (kilobytes * 1024 // 3))


def test_a_notebook_over_its_budget_is_converted_in_a_worker_to_the_same_module(monkeypatch):
    content = notebook_of("import os\n\n   \nx = 1\n", "%time y = 2\n!ls\n" * 40, "def f(x):\n    return x?\n")
    here = converted(content)
    assert "get_ipython().system('ls')" in here.source
    monkeypatch.setattr(converting, "FAST_CHARS", 100)
    asked = []
    monkeypatch.setattr(converting, "converted_in_worker", lambda content: asked.append(content) or here)
    assert notebook_module(notebook_of("x = 1\n")) is not here and not asked  # plain Python: one pass, here
    assert notebook_module(content) is here and asked == [content]
    monkeypatch.undo()
    there = converting.converted_in_worker(content)
    assert (there.source, there.spans, there.duplicates) == (here.source, here.spans, here.duplicates)


def test_a_large_notebook_is_converted_in_a_worker(monkeypatch):
    monkeypatch.setattr(converting, "FAST_BYTES", 10)
    monkeypatch.setattr(notebook, "converted", lambda *args: pytest.fail("converted in the calling process"))
    assert notebook_module(notebook_of(ANSWER)).source == ANSWER + "\n\n"


def test_a_hostile_notebook_stops_at_the_converter_s_limits(monkeypatch):
    monkeypatch.setattr(converting, "converter_limits", lambda: WorkerLimits(call_seconds=3, cpu_seconds=3))
    with pytest.raises(NotebookError, match=r"^converting it to Python took longer than 3 s$"):
        notebook_module(hostile(40))


def test_a_converter_that_cannot_start_is_the_grader_s_failure(monkeypatch, tmp_path):
    """Never the student's: a broken converter stops the grading instead of zeroing a notebook."""
    broken = tmp_path / "notebook.py"
    broken.write_text("def wire(:\n")
    monkeypatch.setattr(notebook, "__file__", str(broken))
    with pytest.raises(GraderError, match="the sandbox could not convert a notebook"):
        converting.converted_in_worker(notebook_of(ANSWER))


def test_json_nested_too_deep_is_not_a_notebook():
    with pytest.raises(NotebookError, match="nests too deep"):
        notebook_module(b"[" * 100_000)


@pytest.mark.slow
def test_a_hostile_notebook_costs_its_own_submission_only(tmp_path):
    """Its exercise is not graded, with a note saying why; the rest of the batch grades as ever."""
    (tmp_path / "right").mkdir()
    (tmp_path / "right" / "ex_sum.py").write_text(ANSWER)
    (tmp_path / "ex_sum.ipynb").write_bytes(hostile(40))
    graded = autograder("grade", str(tmp_path / "right"), str(tmp_path / "ex_sum.ipynb"), "--out",
                        str(tmp_path / "out"), "--jobs", "1", course=TOY / "course.yaml")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = {row["submission"]: row for row in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert rows["right"]["score"] == "10" and rows["ex_sum"]["score"] == "0"
    why = "ex_sum.ipynb could not be read, so ex_sum was not graded: converting it to Python took longer than 10 s"
    assert why in (tmp_path / "out" / "ex_sum" / "feedback.md").read_text()
