"""``grade-serve`` (internal): a grader process's loop, started by
:class:`autograder.batch.grader.GraderProcess`.

It grades each :class:`~autograder.batch.grader.Part` asked for on stdin, one JSON line each
(``staged``, ``out``, ``name``, ``notes``, ``exercises``, ``began``, ``public_only``, ``after``),
writes the reports into ``out`` and answers ``graded`` on a line of its own. With ``--core``
it runs, and so does every worker it starts, on that core only; where a cgroup can be made, they
share one core's CPU time (:func:`~autograder.isolation.cgroup.join_lane`). Whatever else
prints goes to stderr, the process's log. Its garbage collector looks at young objects every
50,000 allocations rather than every 700, and never again at what the start-up imported: a
grading makes many short-lived objects and few cycles, and the process lives for many gradings.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from rich.console import Console

from ..config import Course
from ..engine.report import read_results, write_reports
from ..engine.run import Scope, grade_staged
from ..isolation import join_lane, require_isolation
from . import graded_in_chosen_language


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    if args.core is not None:  # first: every worker inherits it, and cannot change it once confined
        os.sched_setaffinity(0, {args.core})
    join_lane()  # before any worker starts: each inherits the lane's CPU share
    course = graded_in_chosen_language(course, args)  # the batch's --lang: the students' words
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    require_isolation(args.unsafe)
    gc.freeze()  # the imports' objects live as long as the process: no collection need walk them again
    gc.set_threshold(50_000, 20, 100)
    for line in sys.stdin:
        grade_request(course, json.loads(line), answers)
    return 0


def grade_request(course: Course, request: dict, answers: TextIO) -> None:
    """Grade what one request asks, write its reports, and say so on ``answers``."""
    public = None if request["after"] is None else list(read_results(Path(request["after"])).results)
    scope = Scope(request["exercises"] or None, request["public_only"], public, request["began"])
    grade = grade_staged(course, Path(request["staged"]), request["notes"], scope)
    write_reports(course, Path(request["out"]), request["name"], grade)
    answers.write("graded\n")
    answers.flush()
