"""The words of a failed property's feedback: what a student reads, and what a hidden property may say.

A public failure shows the property's description (its docstring's first paragraph), the
student's own message and traceback, hypothesis's falsifying example and what the student's code
printed during it, each within a share of the course's limit. A hidden failure shows the
description and one reason from a closed set (:func:`hidden_reason`): nothing the student's code
chose may reach it, or it could spell out the hidden inputs.
"""

from __future__ import annotations

import builtins
import re
from typing import Any

from ..errors import ArgumentChanged, SandboxFailure, StudentError
from ..i18n import N_, _, ngettext
from ..results import HIDDEN_REASON, NOT_WRITTEN, clip
from .session import PRINTED_CHARS, MissingName

FIXTURE_LINE = re.compile(r"^\s+(student|reference|sandbox|course)=.*,$")  # in a falsifying example: not the student's


def property_feedback(summary: str, error: BaseException | None, hidden: bool, limit: int, printed: str = "") -> str:
    """What a student reads about a failed property that checks ``summary`` (its description:
    :func:`description`, in the course's language), at most ``limit`` characters (and the
    cut's marker).

    A public failure shows the student's own exception message and traceback, and what the
    student's code ``printed`` during the failing example, which are as long as the student
    makes them: each part gets a share of the limit, so a huge message leaves room for the
    falsifying example below it. A hidden failure shows none of them.
    """
    error = innermost(error)
    if hidden:
        return f"{summary}{HIDDEN_REASON}{hidden_reason(error)}."
    share = limit // 3
    if is_blocked(error):  # the same words for every property it stops: no example, nothing printed
        return clip(f"{summary}\n\n{clip(str(error), share)}", limit)
    notes = "\n".join(hypothesis_line(line) for note in getattr(error, "__notes__", []) for line in note.splitlines()
                      if not FIXTURE_LINE.match(line))
    lines = [summary, "", clip(str(error), share) if error is not None else _("failed")]
    if isinstance(error, StudentError) and error.traceback.strip():
        lines += ["", _("Where it was raised:"), clip(error.traceback.rstrip(), share)]
    if notes:
        lines += ["", clip(notes.strip(), share)]
    if printed.strip():
        lines += ["", _("What your code printed during this example:"),
                  clip(printed, min(share, PRINTED_CHARS)).rstrip()]
    return clip("\n".join(lines), limit)


# hypothesis's own words in its notes, as the feedback shows them: each line's pattern, and its message
FALSIFYING = N_("Falsifying example: {call}")  # the class report reads these back
FALSIFYING_EXPLICIT = N_("Falsifying explicit example: {call}")
HYPOTHESIS_LINES = (
    (re.compile(r"Falsifying example: (?P<call>.*)"), FALSIFYING),
    (re.compile(r"Falsifying explicit example: (?P<call>.*)"), FALSIFYING_EXPLICIT),
    (re.compile(r"Draw (?P<count>\d+): (?P<value>.*)"), N_("Draw {count}: {value}")),
    (re.compile(r"Draw (?P<count>\d+) \((?P<label>.*?)\): (?P<value>.*)"), N_("Draw {count} ({label}): {value}")),
)
OTHER_EXAMPLES = re.compile(r"\(note: (?P<count>\d+) other explicit examples? also failed with this error; "
                            r"use Verbosity\.verbose to view\)")


def hypothesis_line(line: str) -> str:
    """A line of hypothesis's notes in the language spoken now (English: as hypothesis wrote it)."""
    for pattern, message in HYPOTHESIS_LINES:
        if found := pattern.fullmatch(line):
            return _(message).format(**found.groupdict())
    if found := OTHER_EXAMPLES.fullmatch(line):
        count = int(found["count"])
        said = ngettext("(note: {count} other explicit example also failed with this error; use Verbosity.verbose "
                        "to view)", "(note: {count} other explicit examples also failed with this error; use "
                        "Verbosity.verbose to view)", count)
        return said.format(count=count)
    return line


def description(function: Any) -> str:
    """What a property checks, as feedback shows it: the first paragraph of its docstring, on one
    line (a docstring wraps its sentence over several lines; a student reads all of it)."""
    paragraph = (getattr(function, "__doc__", None) or "").strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def is_internal(error: BaseException | None) -> bool:
    """Whether ``error`` is the grader's own: neither a failed check, nor the student's code raising,
    nor the sandbox stopping it. A property that meets one fails the grading, never the student."""
    return error is not None and not isinstance(error, (AssertionError, StudentError, SandboxFailure, MissingName))


def is_blocked(error: BaseException | None) -> bool:
    """Whether the student's code stopped the property before it could judge an answer
    (:attr:`~autograder.results.PropertyResult.blocked`)."""
    return isinstance(error, SandboxFailure) and error.kind in ("not_implemented", "import", "missing", "budget",
                                                                  "overran")


def is_timed_out(error: BaseException | None) -> bool:
    """Whether the sandbox's time limit stopped the property
    (:attr:`~autograder.results.PropertyResult.timed_out`)."""
    return isinstance(error, SandboxFailure) and error.kind in ("timeout", "budget", "overran")


def innermost(error: BaseException | None) -> BaseException | None:
    """The first exception of the first group, down to one that is no group (hypothesis raises groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


SANDBOX_REASONS = {"timeout": N_("timed out"), "overran": N_("timed out"), "crash": N_("crashed"),
                   "protocol": N_("crashed"), "import": N_("could not be imported"), "not_implemented": NOT_WRITTEN,
                   "budget": N_("time budget used up")}


def hidden_reason(error: BaseException | None) -> str:
    """A hidden property's reason, from a closed set: nothing the student's code chose (an
    exception's name or message) may reach it, or it could spell out the hidden inputs. A module
    missing from the submission is said as the public properties say it: the engine's words
    and the course's module name, which no input shapes."""
    if isinstance(error, SandboxFailure):
        return str(error) if error.kind == "missing" else _(SANDBOX_REASONS.get(error.kind, N_("failed")))
    if isinstance(error, StudentError):
        if is_builtin_exception(error):
            return _("raised {error}").format(error=error.type_name)
        return _("raised a non-built-in exception")
    if isinstance(error, AssertionError):  # a call changing its arguments fails on its own grounds
        return _("changed an argument it was given") if isinstance(error, ArgumentChanged) else _("wrong result")
    if isinstance(error, AttributeError):
        return _("a name is missing")
    return _("failed")


def is_builtin_exception(error: StudentError) -> bool:
    """Whether the student's exception is one of Python's own, judged here from its class
    name and the names of its bases (the worker's word, so only a built-in's exact lineage counts)."""
    builtin = getattr(builtins, error.type_name, None)
    return (isinstance(builtin, type) and issubclass(builtin, BaseException)
            and error.mro == [cls.__name__ for cls in builtin.__mro__])
