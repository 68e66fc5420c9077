"""``mutate EXERCISE ... | --all [--jobs N] [--sample N --seed S]``: grades mutants of the reference
solutions with their exercise's suite (:mod:`autograder.authoring.mutate`); exits 1 when one
survives that the course has not listed as equivalent."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..authoring.mutate import command
from ..config import Course
from ..errors import GraderError
from ..isolation import require_isolation
from . import refuse_release


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    refuse_release(course)
    if args.sample is not None and args.sample < 1:
        raise GraderError("--sample needs a positive number of mutants")
    if bool(args.exercises) == args.all:
        raise GraderError("name the exercises to mutate, or --all")
    require_isolation(args.unsafe)  # the grader processes import the solutions
    modules = [e.module for e in course.exercises] if args.all else args.exercises
    return command(course, modules, args.jobs, args.sample, args.seed, console)
