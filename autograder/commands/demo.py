"""``demo [--out DIR]``: grades the course's sample submissions (``samples`` in the course file),
as ``grade`` does, and prints the table."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..config import Course
from ..errors import GraderError
from . import folder_to_write
from .grade import grade_named


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    if not course.samples:
        raise GraderError(f"{course.file.name} lists no samples")
    folder_to_write(args.out)
    return grade_named(course, [(s.name, course.path(s.path)) for s in course.samples], args, console)
