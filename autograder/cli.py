"""The command line: ``autograder COMMAND`` (or ``python -m autograder COMMAND``), parsing and dispatch only.

Each command is a module of :mod:`autograder.commands` whose docstring says what it does; this
module parses the arguments and imports only the chosen command's module (:data:`COMMANDS`), so
``check`` and ``grade`` load only what they use. Problems with the course, a submission or the
grader print one clear message and exit 2. Official grading (``grade`` and its grader processes,
and ``check`` outside a student release) refuses to run student code where no sandbox layer keeps
it from the grader's files, or where the sandbox's canary gets through: it names each layer tried
and exits 3. ``--unsafe-no-sandbox`` (or ``AUTOGRADER_UNSAFE_NO_SANDBOX=1``) grades anyway, and
every report says so.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

from .config import LANGUAGES, Course, CourseConfigError, check_course, load_course
from .errors import GraderError, SubmissionError
from .isolation import hypothesis_storage, keep_compiled_code

DESCRIPTION = "``python -m autograder``: the commands students, instructors and course authors run."
COMMANDS = {  # the module that runs each command, imported when the command is chosen
    "check": "autograder.commands.check",
    "grade": "autograder.commands.grade",
    "cluster-certs": "autograder.commands.cluster_certs",
    "demo": "autograder.commands.demo",
    "bench": "autograder.commands.bench",
    "release": "autograder.commands.release",
    "nbgrader": "autograder.commands.nbgrader",
    "nbgrader-autograde": "autograder.commands.nbgrader_autograde",
    "gradescope": "autograder.commands.gradescope",
    "mutate": "autograder.commands.mutate",
    "new-exercise": "autograder.commands.new_exercise",
    "report": "autograder.commands.report",
}

# the commands that take the course whole: it is checked whole first (config.check_course); those
# that grade here need its data too
WHOLE_COURSE = {"check", "grade", "demo", "bench", "release", "nbgrader", "gradescope", "mutate", "report"}
GRADING = {"check", "grade", "demo", "bench", "mutate"}


def main(argv: list[str] | None = None, prog: str = "autograder") -> int:
    """Run one command; return its exit status (the console script and ``__main__`` exit with it).
    ``prog`` is the command as the user typed it, for the usage lines; with no ``argv`` (a process of
    its own), the code it compiles from here on goes to the grader's cache, never beside the course's
    files, and SIGTERM stops it as Ctrl-C does."""
    if argv is None:
        keep_compiled_code()
        signal.signal(signal.SIGTERM, _terminate)
    # before hypothesis is first imported: the installed packages' hypothesis plugins take no part in
    # a grading here (check's) or in the grader processes it starts, as pytest's take none
    os.environ["HYPOTHESIS_NO_PLUGINS"] = "1"
    if "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ:  # as a grader process's: check keeps its records there
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = hypothesis_storage(
            os.path.join(tempfile.gettempdir(), "autograder-hypothesis"))
    args = _parser(prog).parse_args(argv)
    console = Console(stderr=False)
    try:
        _positive_jobs(getattr(args, "jobs", None))
        course = load_course(args.course)
        if args.command in WHOLE_COURSE:
            check_course(course, grading=args.command in GRADING)
        _known_exercises(course, getattr(args, "exercise", None))
        return importlib.import_module(COMMANDS[args.command]).run(course, args, console)
    except (CourseConfigError, GraderError, SubmissionError) as error:
        Console(stderr=True).print(f"[bold red]error:[/] {error}", highlight=False)
        return getattr(error, "exit_status", 2)
    except Terminated:
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        return 130


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's stop, ``timeout``) as the interrupt Ctrl-C is: what was graded is kept,
    nothing is recorded for the grading it cut, and the grader's temporary folders (students'
    copies among them) are removed on the way out."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated


SUBMISSION = "folder, .zip, .py or .ipynb file"  # what check, grade and gradescope --run accept


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    parser.add_argument("--course", default=os.environ.get("AUTOGRADER_COURSE", "course.yaml"),
                        help="the course file (default: ./course.yaml or $AUTOGRADER_COURSE)")
    parser.add_argument("--unsafe-no-sandbox", dest="unsafe", action="store_true",
                        help="grade even where no sandbox layer holds (every report says so)")
    commands = parser.add_subparsers(required=True, metavar="COMMAND", dest="command")

    _grading(commands)
    _delivery(commands)
    _authoring(commands)
    return parser


def _grading(commands: Any) -> None:
    """The commands that grade: the student's check, and the instructor's."""
    check = commands.add_parser("check", help="self-check: run the public properties on your work")
    check.add_argument("path", nargs="?", help=f"a {SUBMISSION} (default: the course's exercise folder)")
    check.add_argument("--exercise", action="append", help="check only this exercise module (repeatable)")
    _language_option(check)

    grade = commands.add_parser("grade", help=f"grade submissions (each a {SUBMISSION})")
    grade.add_argument("submissions", nargs="+", type=Path, metavar="SUBMISSION", help=f"a {SUBMISSION}")
    grade.add_argument("--out", required=True, type=Path, help="output folder")
    grade.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded at once")
    grade.add_argument("--force", action="store_true", help="regrade submissions already graded unchanged")
    grade.add_argument("--exercise", action="append", help="grade only this exercise module (repeatable)")
    grade.add_argument("--cluster", metavar="tls://HOST:8786",
                       help="grade on this Dask scheduler's workers (see autograder.batch.cluster)")
    grade.add_argument("--cluster-certs", metavar="CERTS", type=Path,
                       help="with a tls:// --cluster: the folder `cluster-certs` made")
    grade.add_argument("--unsafe-cluster-tcp", action="store_true",
                       help="use a tcp:// --cluster (loopback too): no credentials, anyone who reaches the "
                       "scheduler, any local user included, runs code in the graders")
    _language_option(grade)

    certs = commands.add_parser("cluster-certs", help="make the certificates of a grading cluster's mutual TLS")
    certs.add_argument("--out", required=True, type=Path, help="a new folder (private to you)")

    demo = commands.add_parser("demo", help="grade the course's sample submissions")
    demo.add_argument("--out", type=Path, default=Path("out/demo"))
    demo.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    demo.set_defaults(force=True, exercise=None, cluster=None)

    bench = commands.add_parser("bench", help="measure sandbox overhead, grading time and batch throughput")
    bench.add_argument("submission", nargs="?", type=Path, help="default: the course's first sample")
    bench.add_argument("--copies", type=int, default=20)
    bench.add_argument("--out", type=Path, default=Path("out/bench"))
    bench.add_argument("--json", action="store_true", help="print the throughput targets as one JSON object")
    bench.add_argument("--profile", action="store_true", help="split grading's time by where it goes (cProfile)")
    bench.add_argument("--write-results", type=Path, metavar="PAGE",
                       help="measure as --json does and write the results page (docs/results.md) from it")


def _delivery(commands: Any) -> None:
    """The commands that build what a delivery channel ships."""
    release = commands.add_parser("release", help="build the student release (no solutions, no hidden properties)")
    release.add_argument("--out", required=True, type=Path, help="a new or empty folder")
    _language_option(release)

    nbgrader = commands.add_parser("nbgrader", help="generate an nbgrader course graded by this engine")
    nbgrader.add_argument("--out", required=True, type=Path, help="the nbgrader course folder (new or empty)")
    _language_option(nbgrader)

    autograde = commands.add_parser("nbgrader-autograde",
                                    help="autograde an nbgrader course's submissions in parallel, into its gradebook")
    autograde.add_argument("folder", type=Path, metavar="COURSE_DIR", help="the nbgrader course folder `nbgrader` made")
    autograde.add_argument("--assignment", action="append",
                           help="autograde only this assignment (repeatable; default: every assignment)")
    autograde.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions autograded at once")
    autograde.add_argument("--force", action="store_true",
                           help="autograde again submissions already autograded and unchanged since")

    gradescope = commands.add_parser("gradescope", help="build a Gradescope autograder zip, or replay one")
    gradescope.add_argument("--out", type=Path,
                            help="the zip to write (default: autograder.zip); with --run, a new or empty folder "
                            "that keeps the stand-in /autograder, results/results.json included")
    gradescope.add_argument("--exercise", action="append",
                            help="grade only this exercise module (repeatable): one bundle per weekly hand-in")
    gradescope.add_argument("--run", type=Path, metavar="SUBMISSION", dest="replay",
                            help=f"instead, grade SUBMISSION (a {SUBMISSION}) as Gradescope would")
    gradescope.add_argument("--zip", type=Path, help="with --run: the autograder zip to use (default: build one)")
    _language_option(gradescope)


def _language_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--lang", choices=LANGUAGES,
                         help="the language students read (default: the course file's `language`, else en)")


def _authoring(commands: Any) -> None:
    """The course author's and the instructor's tools."""
    mutate = commands.add_parser("mutate", help="grade mutants of the reference solutions with their suites")
    mutate.add_argument("exercises", nargs="*", metavar="EXERCISE", help="an exercise module of the course")
    mutate.add_argument("--all", action="store_true", help="every exercise of the course")
    mutate.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants graded at once")
    mutate.add_argument("--sample", type=int, metavar="N", help="grade only N mutants, drawn with --seed")
    mutate.add_argument("--seed", type=int, default=0, metavar="S", help="the seed of --sample (default 0)")

    new = commands.add_parser("new-exercise", help="add an exercise to the course: stub, reference, suite, texts")
    new.add_argument("name", metavar="NAME", help="the exercise's module name (ex7_something)")
    new.add_argument("--title", help="its title (default: the name, with spaces)")
    new.add_argument("--points", type=int, default=10, help="what it is worth (default 10)")
    new.add_argument("--bonus", action="store_true", help="extra credit: on top of total_points, never in it")

    report = commands.add_parser("report", help="one self-contained HTML page on a graded batch (the class report)")
    report.add_argument("grades", type=Path, metavar="GRADES_DIR",
                        help="the --out folder of a `grade` run, or an nbgrader course folder after autograde")
    report.add_argument("--out", type=Path, default=Path("report.html"),
                        help="the page to write (default: report.html, here); a page already there is kept "
                        "unless --force")
    report.add_argument("--force", action="store_true", help="replace the page --out names if it is there")
    report.add_argument("--submissions", nargs="+", type=Path, metavar="SUBMISSION",
                        help="the graded folders or zips (an nbgrader course's submitted/<student> folders), "
                        "for code similarity (left out without them)")
    report.add_argument("--anonymise", action="store_true", help="name submissions by stable pseudonyms")
    report.add_argument("--threshold", type=float, default=0.5,
                        help="list pairs whose similarity reaches this share (default 0.5)")


def _positive_jobs(jobs: int | None) -> None:
    """``--jobs`` counts what runs at once: none, or fewer, would grade nothing."""
    if jobs is not None and jobs < 1:
        raise GraderError(f"--jobs {jobs}: give at least 1 (how many run at once)")


def _known_exercises(course: Course, chosen: list[str] | None) -> None:
    """``--exercise`` must name exercise modules of the course: one unknown would grade nothing."""
    modules = [e.module for e in course.exercises]
    unknown = [name for name in chosen or () if name not in modules]
    if unknown:
        raise GraderError(f"--exercise {unknown[0]}: not an exercise of {course.file.name} "
                          f"(its exercises: {', '.join(modules)})")


if __name__ == "__main__":
    sys.exit(main())
