"""``check [PATH] [--exercise X]``: the student's self-check on the public properties.

It grades the student's work (by default the course's package folder) on the public properties
alone and, in a student release, on the locked cases too, then prints the table and each failure.
Exits 1 when something fails. Outside a student release the course holds the solutions, so the
check is as official as grading: it refuses where no sandbox layer holds.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from ..config import Course
from ..engine.overruns import Overruns
from ..engine.run import Scope, grade_staged, name_cells
from ..i18n import _, in_course_language
from ..intake.staging import stage
from ..isolation import require_isolation
from ..locked.run import check_locked
from ..reports.terminal import check_progress, print_check
from . import graded_in_chosen_language


@in_course_language
def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    course = graded_in_chosen_language(course, args)
    if not course.is_release:  # the full course holds the solutions: as official as grading
        require_isolation(args.unsafe)
    staged = stage(course, Path(args.path) if args.path else course.path(course.package))
    try:
        console.print(_("Checking {submission} against the public properties…").format(
            submission=f"[bold]{args.path or course.package}[/]"))
        overruns: dict[tuple[str, bool], Overruns] = {}  # a function that hangs stops the locked cases too
        with check_progress(console) as progress:
            grade = grade_staged(course, staged.root, staged.notes,
                                 Scope(args.exercise, public_only=True, overruns=overruns), (progress,))
            if course.is_release:
                progress.now(_("the locked cases"))
                locked = name_cells(course, staged.root, check_locked(course, staged.root, overruns))
                grade = replace(grade, results=(*grade.results, *locked))
        if args.exercise:
            grade = replace(grade, results=tuple(r for r in grade.results if r.exercise in args.exercise))
    finally:
        staged.remove()
    print_check(console, course, grade)
    return 0 if all(r.passed for r in grade.results) else 1
