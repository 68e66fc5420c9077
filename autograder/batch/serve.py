"""A grader process's loop: ``python -m autograder.batch.serve COURSE [--lang L] [--core N]``.

Started by :class:`~autograder.batch.grader.GraderProcess`, and by nothing else. It grades each
:class:`~autograder.batch.grader.Request` read on stdin (one JSON line each), writes that
submission's reports into its folder, and answers the :class:`~autograder.results.Grade` as one
JSON line (:meth:`~autograder.results.Grade.to_plain`). With ``--core`` it runs, and so does
every worker it starts, on that core only; where a cgroup can be made, they share one core's
CPU time (:func:`~autograder.isolation.join_lane`). Whatever else prints goes to stderr, the
process's log. Its garbage collector looks at young objects seldom and never again at what the
start-up imported: a grading makes many short-lived objects and few cycles (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from typing import TextIO

from ..config import Course, load_course
from ..engine.digest import course_digest
from ..engine.report_files import write_reports
from ..engine.run import Scope, grade_staged
from ..errors import GraderError
from ..isolation import join_lane, require_isolation
from ..translation import in_language
from .grader import ERROR, Part, Request


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.batch.serve", description=__doc__.split("\n")[0])
    parser.add_argument("course", help="the course file")
    parser.add_argument("--lang", help="the language of the students' feedback (default: the course's)")
    parser.add_argument("--core", type=int, help="the one core it and its workers run on")
    args = parser.parse_args(argv)
    if args.core is not None:  # first: every worker inherits it, and cannot change it once confined
        os.sched_setaffinity(0, {args.core})
    join_lane()  # before any worker starts: each inherits the lane's CPU share
    course = in_language(load_course(args.course), args.lang)
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    require_isolation()
    gc.freeze()  # the imports' objects live as long as the process: no collection need walk them again
    gc.set_threshold(50_000, 20, 100)
    try:
        course_digest(course)  # read while the batch stages: each grading's plugin asks for it again
        for line in sys.stdin:
            grade_request(course, Request.from_plain(json.loads(line)), answers)
    except GraderError as error:  # the course's or the grader's fault, said last in the log (the batch reads it)
        print(f"{ERROR}{error}", file=sys.stderr)
        return 2
    return 0


def grade_request(course: Course, request: Request, answers: TextIO) -> None:
    """Grade what ``request`` asks, write its reports, and answer its grade on one line."""
    grade = grade_staged(course, request.staged, request.notes, scope(request.part))
    write_reports(course, request.out, request.name, grade)
    answers.write(json.dumps(grade.capped(course.limits).to_plain()) + "\n")  # as the reports hold it
    answers.flush()


def scope(part: Part) -> Scope:
    """What the grading of ``part`` runs; a hidden part is given the public part's results."""
    public = None if part.public_results is None else list(part.public_results)
    return Scope(part.exercises or None, part.public_only, public, part.began, first_failure=part.first_failure)


if __name__ == "__main__":
    sys.exit(main())
