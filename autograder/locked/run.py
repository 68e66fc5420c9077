"""Running a locked case: on the reference here, or on the student's code in the sandbox (``check``).

:func:`run_case` gives a case's output; :func:`check_locked` runs every sealed case on a
submission in the sandbox and compares the salted hashes (:mod:`.hashing`), saying which part's
answer differs, never what it should be.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import bidi, suite_texts
from ..config import Course
from ..engine.feedback import is_blocked
from ..engine.overruns import Overruns
from ..engine.session import MissingName, open_session
from ..errors import GraderError, SandboxFailure, StudentError
from ..i18n import _, in_course_language, ngettext
from ..results import LOCKED_PREFIX, PropertyResult
from ..translation import shipped_source
from .cases import Case, SealedPart, Step, literal, load_cases
from .hashing import digest


def run_case(case: Case, module: Any, support: Callable[[str], Any]) -> list:
    """The case's output: the results of its calls on ``module`` (the student's, through the
    sandbox, or the reference's); ``support(name)`` gives a support module or ``builtins``."""
    target = module if case.target is None else _run(case.target, module, support)
    for step in case.setup:
        _run(step, target, support)
    return [_run(step, target, support) for step in case.calls]


def _run(step: Step, target: Any, support: Callable[[str], Any]) -> Any:
    value = getattr(target, step.name)
    if step.call:
        value = value(*(literal(a, support) for a in step.args), **{k: literal(v, support) for k, v in step.kwargs})
    if step.wrapper is not None:
        value = getattr(support("builtins"), step.wrapper)(value)
    return value


@in_course_language
def check_locked(course: Course, submission: Path,
                 overruns: dict[tuple[str, bool], Overruns] | None = None) -> list[PropertyResult]:
    """Run every sealed case on a prepared submission in the sandbox; one result per case. The
    cases are public: a function that ran past its time in a public property of their exercise,
    or in a case before (``overruns``, :class:`~autograder.engine.session.Overruns`), is not called."""
    overruns = {} if overruns is None else overruns
    results = []
    for case in load_cases(course):
        if case.entry.sha256 is None:
            raise GraderError(f"locked case {case.exercise}: {case.name!r} holds no hash: build a release to seal it")
        results.append(_check_case(course, submission, case, overruns.setdefault((case.exercise, False), Overruns())))
    return results


def _check_case(course: Course, submission: Path, case: Case, overruns: Overruns) -> PropertyResult:
    exercise = course.exercise(case.exercise)
    name = bidi.quoted(course.language, suite_texts.case_name(course, case.exercise, case.name))
    session = open_session(course, submission, exercise, course.limits.property_seconds).keeping(
        overruns, _("the locked case {name}").format(name=name))
    result = PropertyResult(exercise=case.exercise, name=f"{LOCKED_PREFIX}{case.name}", points=0, score=0, passed=False,
                            hidden=False, output="")
    try:
        output = run_case(case, session.module(f"{course.package}.{case.exercise}"), session.module)
    except (StudentError, SandboxFailure, MissingName) as error:
        if is_blocked(error):  # as the properties it stops say it, after a first line of the case's own
            return replace(result, output=_("Locked case {name}").format(name=name) + f"\n\n{error}",
                           blocked=True)
        return replace(result, output=_("Locked case {name} failed:").format(name=name) + f"\n\n{error}\n\n"
                       + _("Its calls:") + f"\n{_indented(case.describe())}{_support_notes(course, case)}")
    finally:
        session.close()
    salt = case.entry.salt or ""
    if digest(salt, output) == case.entry.sha256:
        return replace(result, passed=True)
    parts = case.entry.parts or [SealedPart(calls=list(range(len(case.calls))), sha256=case.entry.sha256 or "")]
    wrong = [part.calls for part in parts if digest(salt, [output[i] for i in part.calls]) != part.sha256]
    singles = [calls[0] for calls in wrong if len(calls) == 1]
    told = [ngettext("the answer of this call differs from the reference's:",
                     "the answers of these calls differ from the reference's:", len(singles))
            + f"\n\n{_indented(case.describe(singles))}"] if singles else []
    for calls in (calls for calls in wrong if len(calls) > 1):  # answers hashed together
        told.append((_("and at least one of these calls differs (their answers are locked together, so the check "
                       "cannot tell which):") if told else
                     _("the answer of at least one of these calls differs (their answers are locked together, so "
                       "the check cannot tell which):")) + f"\n\n{_indented(case.describe(calls))}")
    right = [i for i in range(len(case.calls)) if all(i not in calls for calls in wrong)]
    if right:
        told.append(_("Its other calls gave the reference's answers:") + f"\n{_indented(case.describe(right))}")
    said = "\n\n".join(told)
    return replace(result, output=(
        _("Locked case {name}:").format(name=name) + f" {said}{_support_notes(course, case)}\n\n"
        + _("The expected answers are locked (only a salted hash of them ships with the course), so they are not "
            "shown; the docstrings' rules and examples decide them.")))


def _indented(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _support_notes(course: Course, case: Case) -> str:
    """What the support modules' attributes a case's calls name are, and how a student gets
    them: ``encoders`` is the course's tokcourse/grading/encoders.py, with each attribute's
    docstring's first line."""
    named = case.support()
    notes = []
    for module in dict.fromkeys(module for module, _attribute in named):
        path = next((course.path(m) for m in course.sandbox.support_modules if Path(m).stem == module), None)
        if path is None:
            continue
        relative = path.relative_to(course.root)
        package = ".".join(relative.parent.parts)
        where = f"from {package} import {module}" if package else f"import {module}"
        docs = _first_lines(shipped_source(course, path))
        notes.append(_("{module} is the course's {path} ({where}):").format(module=module, path=relative.as_posix(),
                                                                          where=where))
        notes += [f"    {bidi.code(course.language, f'{module}.{attribute}')}"
                  + (f": {docs[attribute]}" if docs.get(attribute) else "") for m, attribute in named if m == module]
    return "\n\n" + "\n".join(notes) if notes else ""


def _first_lines(source: str) -> dict[str, str]:
    """The first docstring line of each function of a module's ``source`` (read, not run)."""
    tree = ast.parse(source)
    return {node.name: (ast.get_docstring(node) or "").strip().split("\n", 1)[0] for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
