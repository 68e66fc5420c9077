"""``nbgrader --out DIR [--lang fa|en]``: an nbgrader course, one assignment per exercise, graded by the sandboxed
engine (:mod:`autograder.delivery.nbgrader.course`).

It then grades the grading copy's solutions once, as ``setup.sh`` does on Gradescope, so that
the properties' examples are recorded in this user's cache (:mod:`autograder.engine.replay`) and
the first student an ``nbgrader autograde`` grades on this machine replays them too."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from rich.console import Console

from ..batch.pipeline import BatchOptions, grade_many
from ..config import Course, load_course
from ..delivery.nbgrader.course import GRADING, build_nbgrader_course
from . import in_chosen_language


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    course = in_chosen_language(course, args)
    build_nbgrader_course(course, args.out)
    record_examples(load_course(args.out / GRADING / "course.yaml"), console)
    console.print(f"nbgrader course written to [bold]{args.out}[/]: cd there and run nbgrader with this Python "
                  "(`nbgrader generate_assignment <exercise>`, then `nbgrader release_assignment <exercise> "
                  "--Exchange.root=<the exchange folder>`); docs/nbgrader.md walks the whole path.", highlight=False)
    return 0


def record_examples(course: Course, console: Console) -> None:
    """Grade ``course``'s solutions once, a job per core, for the examples it records; say
    whether it did. Where grading cannot run (no sandbox, say), autograde records them later."""
    if os.environ.get("AUTOGRADER_RECORDS") == "off":
        return
    quiet = Console(file=open(os.devnull, "w"))
    scratch = Path(tempfile.mkdtemp(prefix="autograder-record-"))
    ((_, grade, problem),) = grade_many(course, [("solutions", course.solutions_path())], scratch, quiet,
                                        BatchOptions(jobs=os.cpu_count() or 1, force=True))
    if grade is None:  # the grader's log is kept where the problem says
        console.print(f"The examples were not recorded ({problem}, in {scratch}); the first autograde records them.",
                      highlight=False)
        return
    shutil.rmtree(scratch)
    console.print("Recorded the examples by grading the solutions once: every autograde on this machine "
                  "replays them.", highlight=False)
