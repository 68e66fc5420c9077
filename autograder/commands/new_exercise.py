"""``new-exercise NAME [--title TEXT] [--points N] [--bonus]``: a new exercise's stub, reference, suite,
course file entry and texts to translate (:mod:`autograder.authoring.scaffold`), and what is left to
write: docs/authors.md's checklist."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..authoring.scaffold import NewExercise, scaffold
from ..config import Course


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    title = args.title or args.name.replace("_", " ")
    written = scaffold(course, NewExercise(args.name, title, args.points, args.bonus))
    kind = f"{args.points} bonus points" if args.bonus else f"{args.points} points"
    console.print(f"Exercise {args.name} ({kind}) added to {course.file.name}, with:", highlight=False)
    for path in written:
        console.print(f"  {path.relative_to(course.root.resolve())}", highlight=False, markup=False)
    console.print("Its function, docstrings and properties are placeholders (the sum of a list) that grade: "
                  "the reference full marks, the stub none. Replace them with the exercise's own, and the texts "
                  "marked 'to translate'; docs/authors.md's checklist says what else an exercise needs.",
                  highlight=False)
    return 0
