"""``gradescope --out FILE.zip [--exercise X] [--lang fa|en]``: a Gradescope autograder (of exercise ``X`` alone,
if given); ``gradescope --run SUBMISSION [--zip FILE.zip] [--out DIR]`` replays one on a
submission, as Gradescope would, and checks its ``results.json``
(:mod:`autograder.delivery.gradescope`)."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from rich.console import Console

from ..config import Course
from ..delivery.gradescope import Replay, build_gradescope, replay
from ..errors import GraderError
from ..results import Grade
from . import file_to_write, in_chosen_language


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    course = in_chosen_language(course, args)
    if args.replay is None:
        out = args.out or Path("autograder.zip")
        file_to_write(out)
        build_gradescope(course, out, args.exercise)
        chosen = args.exercise or [e.module for e in course.exercises]
        console.print(f"Gradescope autograder written to [bold]{out}[/]: upload it as the assignment's "
                      "autograder (Ubuntu 24.04 base image or any with Python 3.11+). It grades "
                      f"{', '.join(chosen)}, out of {course.full_marks_text(chosen)}: {_points(course, chosen)}",
                      highlight=False)
        return 0
    if args.zip is not None and args.exercise:
        raise GraderError("--exercise chooses what a bundle grades: give it when the bundle is built "
                          "(gradescope --out FILE.zip --exercise X), not with --zip")
    if args.zip is not None and args.lang:
        raise GraderError("--lang chooses the language a bundle is built in: give it when the bundle is built "
                          "(gradescope --out FILE.zip --lang fa), not with --zip")
    print_replay(console, course, replay(course, args.replay, args.zip, args.out, args.exercise))
    return 0


def _points(course: Course, chosen: list[str]) -> str:
    """What to give the Gradescope assignment, and what its bonus is, if it grades one."""
    regular, bonus = course.full_marks(chosen), course.bonus_marks(chosen)
    if not bonus:
        return f"give the assignment {regular} points."
    return f"give the assignment {regular} points (its {bonus} bonus points are extra credit on top)."


def print_replay(console: Console, course: Course, done: Replay) -> None:
    """What a replay found: run_autograder's output, each failure by its property and reason, the
    score (and, where it graded a bonus exercise beside others, the score without it)."""
    grade = Grade.from_gradescope({"tests": [], "output": "", **done.results})  # both optional in Gradescope's format
    console.print(done.results.get("output", ""), markup=False, highlight=False)
    for result in grade.results:
        if not result.passed:
            shown = "hidden" if result.hidden else "public"
            reason = textwrap.shorten(result.reason, 200, placeholder=" …")
            console.print(f"failed  {result.title} ({shown}): {reason}", markup=False, highlight=False)
    passed = sum(r.passed for r in grade.results)
    kept = (f"kept in {done.kept}" if done.kept else
            "not kept (the stand-in /autograder was a temporary folder; --out DIR keeps it)")
    scores = {module: score for module, (score, _) in grade.by_exercise(course).items()}
    both = course.bonus_marks(scores) and course.full_marks(scores)
    without = f" ({course.score_without_bonus(scores):g} without the bonus)" if both else ""
    console.print(f"results.json is valid: score {done.results['score']:g}{without}, {passed} of {len(grade.results)} "
                  "tests "
                  f"passed, run_autograder took {done.seconds:.1f} s (Gradescope's default timeout: 600 s); "
                  f"results.json {kept}", highlight=False)
