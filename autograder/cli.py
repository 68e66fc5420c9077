"""``python -m autograder``: the commands students, instructors and course authors run.

- ``check [PATH]``: the student's self-check on the public properties (default: the course's
  package folder). Exits 1 when a property fails.
- ``grade SUBMISSION ... --out DIR [--jobs N | --cluster tls://HOST:8786 --cluster-certs CERTS] [--force]
  [--exercise X]``: official grading of submissions (folders, .zip, .py or .ipynb files; of exercise
  ``X`` alone, if given, and of nothing else) into ``DIR/<name>/results.json`` and ``feedback.md``,
  ``DIR/grades.csv`` and ``DIR/gradebook.sqlite``, here or on a Dask cluster's workers (see
  :mod:`autograder.cluster`). Exits 0 whenever grading ran, whatever the scores.
- ``cluster-certs --out CERTS``: the certificates of a grading cluster's mutual TLS (the
  scheduler, the workers and ``grade --cluster`` use them); see :mod:`autograder.cluster_tls`.
- ``demo [--out DIR]``: grades the course's sample submissions and prints the table.
- ``bench [SUBMISSION]``: measures the sandbox's overhead and grading throughput.
- ``release --out DIR [--lang fa|en]``: the student release (no solutions, no hidden properties, sealed
  locked cases); see :mod:`autograder.delivery.release`.
- ``nbgrader --out DIR [--lang fa|en]``: an nbgrader course, one assignment per exercise, graded by the
  sandboxed engine; see :mod:`autograder.delivery.nbgrader_course`.
- ``gradescope --out FILE.zip [--exercise X] [--lang fa|en]``: a Gradescope autograder (of exercise
  ``X`` alone, if given); ``gradescope --run SUBMISSION [--zip FILE.zip] [--out DIR]`` replays it on a
  submission (in ``DIR``, kept); see :mod:`autograder.delivery.gradescope`.
- ``report GRADES_DIR [--out report.html] [--submissions ...] [--anonymise] [--threshold X]``: the
  instructor's class report, one self-contained HTML page; see :mod:`autograder.class_report`.
- ``mutate EXERCISE ... | --all [--jobs N] [--sample N --seed S]``: grades mutants of the reference
  solutions with their exercise's suite; exits 1 when one survives that the course has not
  listed as equivalent. See :mod:`autograder.mutate`.

Problems with the course, a submission or the grader print one clear message and exit 2.
Official grading (``grade`` and its grader processes, and ``check`` outside a student release) refuses
to run student code where no sandbox layer keeps it from the grader's files, or where the
sandbox's canary gets through: it names each layer tried and exits 3.
``--unsafe-no-sandbox`` (or ``AUTOGRADER_UNSAFE_NO_SANDBOX=1``) grades anyway, and every
report says so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import textwrap
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from .config import LANGUAGES, Course, CourseConfigError, load_course
from .errors import GraderError
from .i18n import _, in_course_language
from .sandbox import IsolationRefused, require_isolation
from .submission import SubmissionError, stage, submission_name


def main(argv: list[str] | None = None, prog: str = "autograder") -> int:
    """Run one command; return its exit status (the console script and ``__main__`` exit with it).
    ``prog`` is the command as the user typed it, for the usage lines."""
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "autograder-hypothesis"))
    args = _parser(prog).parse_args(argv)
    console = Console(stderr=False)
    try:
        course = load_course(args.course)
        if getattr(args, "lang", None):
            course = course.model_copy(update={"language": args.lang})
        _known_exercises(course, getattr(args, "exercise", None))
        return args.run(course, args, console)
    except IsolationRefused as error:
        Console(stderr=True).print(f"[bold red]error:[/] {error}", highlight=False)
        return 3
    except (CourseConfigError, GraderError, SubmissionError) as error:
        Console(stderr=True).print(f"[bold red]error:[/] {error}", highlight=False)
        return 2
    except KeyboardInterrupt:
        return 130


SUBMISSION = "folder, .zip, .py or .ipynb file"  # what check, grade and gradescope --run accept


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--course", default=os.environ.get("AUTOGRADER_COURSE", "course.yaml"),
                        help="the course file (default: ./course.yaml or $AUTOGRADER_COURSE)")
    parser.add_argument("--unsafe-no-sandbox", dest="unsafe", action="store_true",
                        help="grade even where no sandbox layer holds (every report says so)")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="self-check: run the public properties on your work")
    check.add_argument("path", nargs="?", help=f"a {SUBMISSION} (default: the course's exercise folder)")
    check.add_argument("--exercise", action="append", help="check only this exercise module (repeatable)")
    check.set_defaults(run=_check)

    grade = commands.add_parser("grade", help=f"grade submissions (each a {SUBMISSION})")
    grade.add_argument("submissions", nargs="+", type=Path, metavar="SUBMISSION", help=f"a {SUBMISSION}")
    grade.add_argument("--out", required=True, type=Path, help="output folder")
    grade.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded at once")
    grade.add_argument("--force", action="store_true", help="regrade submissions already graded unchanged")
    grade.add_argument("--exercise", action="append", help="grade only this exercise module (repeatable)")
    grade.add_argument("--cluster", metavar="tls://HOST:8786",
                       help="grade on this Dask scheduler's workers (see autograder.cluster)")
    grade.add_argument("--cluster-certs", metavar="CERTS", type=Path,
                       help="with a tls:// --cluster: the folder `cluster-certs` made")
    grade.add_argument("--unsafe-cluster-tcp", action="store_true",
                       help="use a tcp:// --cluster on another machine: no credentials, anyone who reaches the "
                       "scheduler runs code in the graders")
    grade.set_defaults(run=_grade)

    certs = commands.add_parser("cluster-certs", help="make the certificates of a grading cluster's mutual TLS")
    certs.add_argument("--out", required=True, type=Path, help="a new folder (private to you)")
    certs.set_defaults(run=_cluster_certs)

    demo = commands.add_parser("demo", help="grade the course's sample submissions")
    demo.add_argument("--out", type=Path, default=Path("out/demo"))
    demo.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    demo.set_defaults(run=_demo, force=True, exercise=None, cluster=None)

    bench = commands.add_parser("bench", help="measure sandbox overhead, grading time and batch throughput")
    bench.add_argument("submission", nargs="?", type=Path, help="default: the course's first sample")
    bench.add_argument("--copies", type=int, default=20)
    bench.add_argument("--out", type=Path, default=Path("out/bench"))
    bench.add_argument("--json", action="store_true", help="print the throughput targets as one JSON object")
    bench.add_argument("--profile", action="store_true", help="split grading's time by where it goes (cProfile)")
    bench.set_defaults(run=_bench)

    release = commands.add_parser("release", help="build the student release (no solutions, no hidden properties)")
    release.add_argument("--out", required=True, type=Path, help="a new or empty folder")
    _language_option(release)
    release.set_defaults(run=_release)

    nbgrader = commands.add_parser("nbgrader", help="generate an nbgrader course graded by this engine")
    nbgrader.add_argument("--out", required=True, type=Path, help="the nbgrader course folder (new or empty)")
    _language_option(nbgrader)
    nbgrader.set_defaults(run=_nbgrader)

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
    gradescope.set_defaults(run=_gradescope)

    mutate = commands.add_parser("mutate", help="grade mutants of the reference solutions with their suites")
    mutate.add_argument("exercises", nargs="*", metavar="EXERCISE", help="an exercise module of the course")
    mutate.add_argument("--all", action="store_true", help="every exercise of the course")
    mutate.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants graded at once")
    mutate.add_argument("--sample", type=int, metavar="N", help="grade only N mutants, drawn with --seed")
    mutate.add_argument("--seed", type=int, default=0, metavar="S", help="the seed of --sample (default 0)")
    mutate.set_defaults(run=_mutate)

    report = commands.add_parser("report", help="one self-contained HTML page on a graded batch (the class report)")
    report.add_argument("grades", type=Path, metavar="GRADES_DIR",
                        help="the --out folder of a `grade` run, or an nbgrader course folder after autograde")
    report.add_argument("--out", type=Path, default=Path("report.html"), help="the page to write")
    report.add_argument("--submissions", nargs="+", type=Path, metavar="SUBMISSION",
                        help="the graded folders or zips (an nbgrader course's submitted/<student> folders), "
                        "for code similarity (left out without them)")
    report.add_argument("--anonymise", action="store_true", help="name submissions by stable pseudonyms")
    report.add_argument("--threshold", type=float, default=0.5,
                        help="list pairs whose similarity reaches this share (default 0.5)")
    report.set_defaults(run=_report)

    serve = commands.add_parser("grade-serve")  # internal: the grader process of grading.GraderProcess
    serve.set_defaults(run=_grade_serve)
    return parser


def _language_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--lang", choices=LANGUAGES,
                         help="the language students read (default: the course file's `language`, else en)")


@in_course_language
def _check(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .grading import grade_staged, name_cells
    from .locked import check_locked
    from .report import print_check

    if not course.is_release:  # the full course holds the solutions: as official as grading
        require_isolation(args.unsafe)
    staged = stage(course, Path(args.path) if args.path else course.path(course.package))
    try:
        console.print(_("Checking {submission} against the public properties…").format(
            submission=f"[bold]{args.path or course.package}[/]"))
        grade = grade_staged(course, staged, public_only=True, exercises=args.exercise)
        if course.is_release:
            locked = name_cells(course, staged.root, check_locked(course, staged.root))
            grade = replace(grade, results=(*grade.results, *locked))
        if args.exercise:
            grade = replace(grade, results=tuple(r for r in grade.results if r.exercise in args.exercise))
    finally:
        staged.remove()
    print_check(console, course, grade)
    return 0 if all(r.passed for r in grade.results) else 1


def _grade(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .canary import run_canary
    from .grading import course_digest

    _refuse_release(course)
    course_digest(course)  # a course file the grader cannot read stops the batch here, before the canary
    if not args.cluster and require_isolation(args.unsafe).holds:  # a cluster's workers check their own
        run_canary(course, args.out.resolve())
    return _grade_named(course, [(submission_name(p), p) for p in args.submissions], args, console)


def _demo(course: Course, args: argparse.Namespace, console: Console) -> int:
    if not course.samples:
        raise GraderError(f"{course.file.name} lists no samples")
    return _grade_named(course, [(s.name, course.path(s.path)) for s in course.samples], args, console)


def _grade_named(course: Course, named: list[tuple[str, Path]], args: argparse.Namespace, console: Console) -> int:
    from .grading import grade_many
    from .report import print_grades
    from .sandbox import isolation_note

    if args.cluster:
        from .cluster import connect

        cluster = connect(args.cluster, course, args.unsafe, args.cluster_certs, args.unsafe_cluster_tcp)
        try:  # every submission is handed over at once: the scheduler spreads them over the workers
            rows = grade_many(course, named, args.out, max(1, len(named)), args.force, console, args.exercise,
                              cluster.grade, cluster.isolation)
        finally:
            cluster.close()
        where = f"Student code ran in the sandboxes of the {cluster.isolation}."
    else:
        rows = grade_many(course, named, args.out, args.jobs, args.force, console, args.exercise)
        where = isolation_note()
    print_grades(console, course, rows)
    console.print(where, highlight=False)
    console.print(f"Reports: {args.out}/<name>/results.json and feedback.md; {args.out}/grades.csv", highlight=False)
    failed = [name for name, grade, _ in rows if grade is None]
    return 2 if failed else 0


def _cluster_certs(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .cluster_tls import make_certificates

    make_certificates(args.out)
    flags = f"--tls-ca-file {args.out}/ca.pem --tls-cert {args.out}/cluster.pem --tls-key {args.out}/cluster-key.pem"
    console.print(f"Cluster certificates written to [bold]{args.out}[/]: whoever can read them joins the cluster. "
                  f"Start the scheduler with --protocol tls {flags}, each worker with {flags}, and grade with "
                  f"--cluster tls://HOST:8786 --cluster-certs {args.out}", highlight=False)
    return 0


def _bench(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .bench import profile, run, targets

    _refuse_release(course)
    if args.json or args.profile:
        require_isolation(args.unsafe)
        figures: dict[str, object] = {}
        if args.profile:
            figures["profile"] = profile(course, Console(stderr=True) if args.json else console)
        if args.json:
            figures |= targets(course, args.copies, args.out)
            print(json.dumps(figures))
        return 0
    if args.submission is None and not course.samples:
        raise GraderError("name a submission to benchmark: the course lists no samples")
    run(course, args.submission or course.path(course.samples[0].path), args.copies, args.out, console)
    return 0


def _grade_serve(course: Course, args: argparse.Namespace, console: Console) -> int:
    """Grade the staged submissions that ``grading.GraderProcess`` asks for, one JSON line each
    (``staged``, ``out``, ``name``, ``notes``, ``exercises``, ``began``, ``public_only``, ``after``),
    answering ``graded`` on a line of its own once the reports are written. Whatever else prints
    goes to stderr, the process's log."""
    from .grading import grade_staged
    from .report import read_results, write_reports
    from .submission import Staged

    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    require_isolation(args.unsafe)
    for line in sys.stdin:
        request = json.loads(line)
        staged = Staged(request["name"], Path(request["staged"]), "", request["notes"])
        public = None if request["after"] is None else list(read_results(Path(request["after"])).results)
        grade = grade_staged(course, staged, request["public_only"], request["exercises"] or None,
                             request["began"], public)
        write_reports(course, Path(request["out"]), request["name"], grade)
        answers.write("graded\n")
        answers.flush()
    return 0


def _mutate(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .mutate import command

    _refuse_release(course)
    if args.sample is not None and args.sample < 1:
        raise GraderError("--sample needs a positive number of mutants")
    if bool(args.exercises) == args.all:
        raise GraderError("name the exercises to mutate, or --all")
    require_isolation(args.unsafe)  # the grader processes import the solutions
    modules = [e.module for e in course.exercises] if args.all else args.exercises
    return command(course, modules, args.jobs, args.sample, args.seed, console)


def _report(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .class_report import build_report

    found = build_report(course, args.grades, args.out, args.submissions, args.anonymise, args.threshold)
    similar = ("code similarity left out (no --submissions)" if found["pairs"] is None
               else f"{found['pairs']} similar pairs at {args.threshold:g} or more")
    console.print(f"Class report written to [bold]{args.out}[/]: {found['submissions']} submissions, "
                  f"{found['failing']} of {found['properties']} properties failed by someone, {similar}. "
                  "It holds student data.", highlight=False)
    return 0


def _known_exercises(course: Course, chosen: list[str] | None) -> None:
    """``--exercise`` must name exercise modules of the course: one unknown would grade nothing."""
    modules = [e.module for e in course.exercises]
    unknown = [name for name in chosen or () if name not in modules]
    if unknown:
        raise GraderError(f"--exercise {unknown[0]}: not an exercise of {course.file.name} "
                          f"(its exercises: {', '.join(modules)})")


def _refuse_release(course: Course) -> None:
    """Official grading needs the solutions and the hidden properties, which a student release lacks."""
    if course.is_release:
        raise GraderError("this is a student release: it has no solutions and no hidden properties, so it "
                          "cannot grade; use `check`")


def _release(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .delivery.release import build_release

    left_out = build_release(course, args.out)
    console.print(f"Student release written to [bold]{args.out}[/] ({len(left_out)} properties left out: hidden, "
                  "or comparing with the reference). Hand it out: its README.md tells students how to set it up "
                  "and check their work.", highlight=False)
    return 0


def _nbgrader(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .delivery.nbgrader_course import build_nbgrader_course

    build_nbgrader_course(course, args.out)
    console.print(f"nbgrader course written to [bold]{args.out}[/]: cd there and run nbgrader with this Python "
                  "(`nbgrader generate_assignment <exercise>`, then `nbgrader release_assignment <exercise> "
                  "--Exchange.root=<the exchange folder>`); docs/nbgrader.md walks the whole path.", highlight=False)
    return 0


def _gradescope(course: Course, args: argparse.Namespace, console: Console) -> int:
    from .delivery.gradescope import build_gradescope, replay
    from .results import Grade

    if args.replay is None:
        out = args.out or Path("autograder.zip")
        build_gradescope(course, out, args.exercise)
        chosen = args.exercise or [e.module for e in course.exercises]
        console.print(f"Gradescope autograder written to [bold]{out}[/]: upload it as the assignment's "
                      "autograder (Ubuntu 24.04 base image or any with Python 3.11+). It grades "
                      f"{', '.join(chosen)}, out of {course.full_marks_text(chosen)}: give the assignment "
                      f"{course.full_marks(chosen)} points (bonus points are extra credit on top).", highlight=False)
        return 0
    if args.zip is not None and args.exercise:
        raise GraderError("--exercise chooses what a bundle grades: give it when the bundle is built "
                          "(gradescope --out FILE.zip --exercise X), not with --zip")
    if args.zip is not None and args.lang:
        raise GraderError("--lang chooses the language a bundle is built in: give it when the bundle is built "
                          "(gradescope --out FILE.zip --lang fa), not with --zip")
    done = replay(course, args.replay, args.zip, args.out, args.exercise)
    grade = Grade.from_gradescope({"tests": [], "output": "", **done.results})  # both optional in Gradescope's format
    console.print(done.results.get("output", ""), markup=False, highlight=False)
    for result in grade.results:
        if not result.passed:
            shown = "hidden" if result.hidden else "public"
            reason = textwrap.shorten(result.reason, 200, placeholder=" …")
            console.print(f"failed  {result.title} ({shown}): {reason}", markup=False, highlight=False)
    passed = sum(r.passed for r in grade.results)
    kept = (f"kept in {done.kept}" if done.kept else
            "not kept (the stand-in /autograder was a temporary folder; --out DIR keeps it)")
    console.print(f"results.json is valid: score {done.results['score']:g}, {passed} of {len(grade.results)} tests "
                  f"passed, run_autograder took {done.seconds:.1f} s (Gradescope's default timeout: 600 s); "
                  f"results.json {kept}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
