"""What a student sees carries nothing that a hidden property's work shapes.

A submission whose hidden property sleeps ``(secret % 7) × 0.7 s`` is graded twice, with two
hidden inputs (``tests/isolation/carriers.py``'s toy course, its hidden property first in the suite): every
byte a student is shown is the same. That is ``results.json`` whole (what ``grade`` leaves, and
what Gradescope shows, since ``run_autograder`` copies it), ``feedback.md``, and the feedback an
nbgrader grade cell prints, which is written from the same grade. The self-check runs no hidden
property, so it has nothing to carry.
"""

import json

import pytest

from autograder.config import load_course
from autograder.delivery.nbgrader.feedback import feedback_text
from autograder.results import Grade
from tests.conftest import autograder
from tests.isolation.carriers import toy_course

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

SLEEPER = '''"""Sleeps for as long as the hidden input says, and answers right."""

import time


def add_all(numbers):
    if any(number > 10 ** 6 for number in numbers):
        time.sleep(max(numbers) % 7 * 0.7)
    return sum(numbers)
'''


def test_a_hidden_property_s_work_shapes_nothing_a_student_sees(tmp_path):
    seen = []
    for secret in (10 ** 6 + 6, 10 ** 6 + 3):  # 10**6 % 7 == 1: a sleep of 0 s, then of 2.8 s
        folder = tmp_path / str(secret)
        course = toy_course(folder / "course", secret)
        student = folder / "student" / "toy"
        student.mkdir(parents=True)
        (student / "__init__.py").write_text("")
        (student / "ex_sum.py").write_text(SLEEPER)
        run = autograder("--course", str(course), "grade", str(student.parent), "--out", str(folder / "out"),
                         "--jobs", "1", course=None)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        reports = folder / "out" / "student"
        results = (reports / "results.json").read_bytes()
        grade = Grade.from_gradescope(json.loads(results))
        nbgrader = feedback_text("ex_sum", load_course(course).exercises[0].points, grade)
        seen.append((results, (reports / "feedback.md").read_bytes(), nbgrader))
    document = json.loads(seen[0][0])
    assert document["score"] == 10 and all(test["status"] == "passed" for test in document["tests"]), document
    assert seen[0] == seen[1]
