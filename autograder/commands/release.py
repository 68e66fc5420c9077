"""``release --out DIR [--lang fa|en]``: the student release: no solutions, no hidden properties, sealed locked
cases (:mod:`autograder.delivery.release`)."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..config import Course
from ..delivery.release import build_release
from . import in_chosen_language


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    course = in_chosen_language(course, args)
    left_out = build_release(course, args.out)
    console.print(f"Student release written to [bold]{args.out}[/] ({len(left_out)} properties left out: hidden, "
                  "or comparing with the reference). Hand it out: its README.md tells students how to set it up "
                  "and check their work.", highlight=False)
    return 0
