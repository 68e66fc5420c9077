"""``bench [SUBMISSION] [--json] [--profile] [--write-results PAGE]``: what grading costs, measured side by side
(:mod:`autograder.authoring.bench`)."""

from __future__ import annotations

import argparse
import json

from rich.console import Console

from ..authoring import bench
from ..config import Course
from ..errors import GraderError
from ..isolation import require_isolation
from . import refuse_release


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    refuse_release(course)
    if args.json or args.profile or args.write_results:
        require_isolation(args.unsafe)
        figures: dict[str, object] = {}
        if args.profile:
            figures["profile"] = bench.profile(course, Console(stderr=True) if args.json else console)
        if args.json or args.write_results:
            measured = bench.targets(course, args.copies, args.out)
            figures |= measured
            if args.write_results:
                bench.write_results(args.write_results, measured, args.copies)
        if args.json:
            print(json.dumps(figures))
        return 0
    if args.submission is None and not course.samples:
        raise GraderError("name a submission to benchmark: the course lists no samples")
    bench.run(course, args.submission or course.path(course.samples[0].path), args.copies, args.out, console)
    return 0
