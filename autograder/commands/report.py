"""``report GRADES_DIR [--out report.html] [--force] [--submissions ...] [--anonymise] [--threshold X]``: the
instructor's class report, one self-contained HTML page (:mod:`autograder.reports.class_report`)."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..config import Course
from ..reports.class_report.page import build_report, counted
from . import file_to_write


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    file_to_write(args.out, args.force)
    found = build_report(course, args.grades, args.out, args.submissions, args.anonymise, args.threshold)
    similar = ("code similarity left out (no --submissions)" if found["pairs"] is None
               else f"{counted(found['pairs'], 'similar pair')} at {args.threshold:g} or more")
    console.print(f"Class report written to [bold]{args.out}[/]: {counted(found['submissions'], 'submission')}, "
                  f"{found['failing']} of {counted(found['properties'], 'property', 'properties')} "
                  f"failed by someone, {similar}. It holds student data.", highlight=False)
    return 0
