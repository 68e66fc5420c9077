"""``nbgrader-autograde COURSE_DIR [--assignment A ...] [--jobs N] [--force]``: every submitted notebook of
an nbgrader course that ``nbgrader --out`` made, autograded ``--jobs`` at once by nbgrader's own
converter into its ``autograded/`` and ``gradebook.db`` (:mod:`autograder.delivery.nbgrader.autograde`).

Exits 0 when every submission was autograded (or was already), 2 when one failed (each is named,
with nbgrader's reason; the others are autograded), 3 where the grading copy's engine refuses to
grade without a sandbox.
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from ..config import Course
from ..delivery.nbgrader.autograde import autograde_class
from ..isolation import isolation_note, require_isolation


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    require_isolation(args.unsafe)  # here first (--unsafe-no-sandbox tells the workers); each checks again
    done = autograde_class(args.folder, args.assignment, args.jobs, args.force, console)
    skipped = f"; {done.skipped} already autograded and unchanged, left (--force autogrades them again)" \
        if done.skipped else ""
    console.print(f"Autograded {len(done.autograded)} submissions into {args.folder}/autograded and its "
                  f"gradebook{skipped}.", highlight=False)
    errors = Console(stderr=True)
    for failed in done.failed:
        errors.print(f"nbgrader's log of {failed.student}'s {failed.assignment}:\n{failed.log}", highlight=False,
                     markup=False)
        console.print(f"[bold red]{escape(failed.student)}: {escape(failed.assignment)} was not autograded:[/] "
                      f"{escape(failed.why)}", highlight=False)
    console.print(isolation_note(), highlight=False)
    return 2 if done.failed else 0
