"""A worker of ``nbgrader-autograde`` (:mod:`autograder.delivery.nbgrader.autograde`): nbgrader's own
``Autograde`` converter, in this process, for one (assignment, student) after another.

It runs as a script (``python -P autograde_worker.py``) in the nbgrader course folder and
imports nothing of the engine, so the engine that grades is the grading copy's, as under
``nbgrader autograde``. It reads a JSON request a line on stdin and answers each with a JSON
line on stdout (:func:`main`); nbgrader's log goes to stderr. Everything it writes is written by
nbgrader's code; several workers share one SQLite gradebook, each with a busy timeout
(:data:`GRADEBOOK_WAIT`). Why: docs/nbgrader.md, "Step by step".
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from typing import Any, TextIO

from nbgrader.api import Gradebook
from nbgrader.apps import AutogradeApp, NbGraderAPI
from nbgrader.converters import Autograde
from nbgrader.utils import rmtree
from sqlalchemy.engine import make_url

GRADEBOOK_WAIT = 120  # seconds a gradebook write waits for another process's to end


def main() -> None:
    """Answer requests until stdin closes: a plan first (:func:`plan`), then one autograde at a time
    (:func:`autograde`, or :func:`forget` one whose worker stopped)."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a stray print would break the answers: it joins the log instead
    api = _nbgrader()
    for line in sys.stdin:
        request = json.loads(line)
        if "plan" in request:
            answer = plan(api, request["plan"]["assignments"], request["plan"]["force"])
        elif "forget" in request:
            answer = forget(api, *request["forget"])
        else:
            assignment, student = request["autograde"]
            answer = autograde(api, assignment, student, request["force"])
        _send(answers, answer)


def _send(answers: TextIO, answer: dict[str, Any]) -> None:
    answers.write(json.dumps(answer) + "\n")
    answers.flush()


def _nbgrader() -> NbGraderAPI:
    """nbgrader's API as ``nbgrader autograde`` run here would be configured, its gradebook writes
    waiting for each other."""
    app = AutogradeApp()
    app.initialize([])
    url = make_url(app.coursedir.db_url)
    if url.get_backend_name() == "sqlite" and "timeout" not in url.query:
        app.coursedir.db_url = url.update_query_dict({"timeout": str(GRADEBOOK_WAIT)}).render_as_string()
    return NbGraderAPI(coursedir=app.coursedir, parent=app)


def plan(api: NbGraderAPI, assignments: list[str] | None, force: bool) -> dict[str, Any]:
    """The (assignment, student) pairs to autograde of ``assignments`` (default: every assignment of
    the gradebook), as nbgrader's ``init_destination`` decides (a submission autograded and unchanged
    since is left, unless ``force``); their students made in the gradebook here, once, rather than
    by two workers at once."""
    with api.gradebook as gradebook:
        known = [assignment.name for assignment in gradebook.assignments]
    unknown = [name for name in assignments or [] if name not in known]
    if unknown:
        return {"error": f"--assignment {unknown[0]}: not an assignment of the gradebook "
                         f"(its assignments: {', '.join(known) or 'none: run nbgrader generate_assignment'})"}
    converter = Autograde(coursedir=api.coursedir, parent=api)
    converter.force = force
    submitted = [(name, student) for name in assignments or known for student in
                 sorted(api.get_submitted_students(name))]
    todo = [(name, student) for name, student in submitted if converter.init_destination(name, student)]
    with Gradebook(api.coursedir.db_url) as gradebook:  # as nbgrader's own steps open it: its default course
        for student in sorted({student for _, student in todo}):
            gradebook.update_or_create_student(student)
        gradebook.db.commit()
    return {"jobs": todo, "submitted": len(submitted)}


def autograde(api: NbGraderAPI, assignment: str, student: str, force: bool) -> dict[str, Any]:
    """``nbgrader autograde ASSIGNMENT --student STUDENT`` in this process; on failure, why (the
    exception nbgrader logged) and nbgrader's log of it from its first error on."""
    caught = _Caught()
    api.log.addHandler(caught)
    try:
        result = api.autograde(assignment, student, force=force, create=True)
    finally:
        api.log.removeHandler(caught)
    if result["success"]:
        return {"success": True}
    log = result.get("log", "").splitlines()
    first = next((i for i, line in enumerate(log) if line.startswith("[ERROR]")), len(log))
    return {"success": False, "why": caught.why or result.get("error", "").strip().splitlines()[-1],
            "log": "\n".join(log[first:]) or result.get("error", "")}


def forget(api: NbGraderAPI, assignment: str, student: str) -> dict[str, Any]:
    """What nbgrader does with a submission whose autograde failed, for one whose worker stopped
    before nbgrader could: what it wrote of it removed, so that the next run autogrades it again
    rather than leave it as autograded."""
    folder = api.coursedir.format_path(api.coursedir.autograded_directory, student, assignment)
    if os.path.exists(folder):
        rmtree(folder)
    return {"forgotten": folder}


class _Caught(logging.Handler):
    """The first exception nbgrader logs as an error while handling it, as its last traceback line."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.why = ""

    def emit(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if error is not None and not self.why:
            self.why = "".join(traceback.format_exception_only(error)).strip()


if __name__ == "__main__":
    main()
