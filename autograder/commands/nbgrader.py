"""``nbgrader --out DIR [--lang fa|en]``: an nbgrader course, one assignment per exercise, graded by the sandboxed
engine (:mod:`autograder.delivery.nbgrader_course`)."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..config import Course
from ..delivery.nbgrader_course import build_nbgrader_course
from . import in_chosen_language


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    course = in_chosen_language(course, args)
    build_nbgrader_course(course, args.out)
    console.print(f"nbgrader course written to [bold]{args.out}[/]: cd there and run nbgrader with this Python "
                  "(`nbgrader generate_assignment <exercise>`, then `nbgrader release_assignment <exercise> "
                  "--Exchange.root=<the exchange folder>`); docs/nbgrader.md walks the whole path.", highlight=False)
    return 0
