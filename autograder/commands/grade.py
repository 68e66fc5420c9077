"""``grade SUBMISSION ... --out DIR``: official grading of submissions, here or on a Dask cluster.

Each submission (a folder, a .zip, a .py or an .ipynb file) is graded, of the ``--exercise``
chosen alone if given, its feedback in the language ``--lang`` chose (else the course file's),
into ``DIR/<name>/results.json`` and ``feedback.md``, with ``DIR/grades.csv`` and
``DIR/gradebook.sqlite`` (:mod:`autograder.batch.pipeline`). Before anything
is graded the sandbox's canary runs (:mod:`autograder.batch.canary`); with ``--cluster`` the
workers of a Dask cluster grade (:mod:`autograder.batch.cluster`), and check their own sandboxes.
Exits 0 whenever grading ran, whatever the scores; 2 when a submission's grading failed, or, before
anyone is graded, when a submission's path names nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from ..batch.canary import run_canary
from ..batch.cluster import connect
from ..batch.pipeline import BatchOptions, grade_many
from ..config import Course
from ..engine.digest import course_digest
from ..errors import SubmissionError
from ..intake.staging import submission_name
from ..isolation import isolation_note, require_isolation
from ..reports.terminal import print_grades
from . import folder_to_write, graded_in_chosen_language, refuse_release


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    refuse_release(course)
    _all_there(args.submissions)
    folder_to_write(args.out)
    course = graded_in_chosen_language(course, args)
    course_digest(course)  # a course file the grader cannot read stops the batch here, before the canary
    if not args.cluster and require_isolation(args.unsafe).holds:  # a cluster's workers check their own
        run_canary(course, args.out.resolve())
    return grade_named(course, [(submission_name(p), p) for p in args.submissions], args, console)


def _all_there(submissions: list[Path]) -> None:
    """A path that names nothing is a typing slip, not a student: refuse the batch before anyone is graded."""
    missing = [str(path) for path in submissions if not path.exists()]
    if missing:
        raise SubmissionError(f"no such submission: {', '.join(missing)} (nothing was graded)")


def grade_named(course: Course, named: list[tuple[str, Path]], args: argparse.Namespace, console: Console) -> int:
    """Grade ``(name, path)`` submissions as ``args`` say, print the table; 2 if a grading failed."""
    options = BatchOptions(args.jobs, args.force, args.exercise)
    if args.cluster:
        cluster = connect(args.cluster, course, args.unsafe, args.cluster_certs, args.unsafe_cluster_tcp)
        try:
            rows = grade_many(course, named, args.out, console, options, cluster)
        finally:
            cluster.close()
        where = f"Student code ran in the sandboxes of the {cluster.isolation}."
    else:
        rows = grade_many(course, named, args.out, console, options)
        where = isolation_note()
    print_grades(console, course, rows)
    console.print(where, highlight=False)
    console.print(f"Reports: {args.out}/<name>/results.json and feedback.md; {args.out}/grades.csv", highlight=False)
    failed = [name for name, grade, _ in rows if grade is None]
    return 2 if failed else 0
