"""What can go wrong when the grader calls student code, as exceptions a suite can see; and
what stops the grader itself.

:class:`StudentError` is an ordinary exception: the student's code raised, and a property
may expect that (``autograder.suite.expect_error``) or let hypothesis shrink the input that caused it.

:class:`SandboxFailure` derives from ``BaseException`` on purpose. A timeout, a crash, a
resource limit, an import error or a missing implementation ends the property at once:
hypothesis does not catch ``BaseException``, so it does not spend the time budget shrinking
a hang. The message names the call that failed and its arguments.
"""

from __future__ import annotations

from .i18n import _


class StudentError(Exception):
    """The student's code raised ``type_name`` during ``call``."""

    def __init__(self, call: str, info: dict):
        self.call = call
        self.type_name = str(info.get("type", "Exception"))
        self.mro = [str(name) for name in info.get("mro", [])]
        self.message = str(info.get("message", ""))
        self.traceback = str(info.get("traceback", ""))
        super().__init__(_("{call} raised {error}: {message}").format(call=call, error=self.type_name,
                                                                       message=self.message))

    def is_a(self, *names: str) -> bool:
        """Whether the student's exception is, or derives from, a class with one of ``names``."""
        return any(name in self.mro for name in names)


class ArgumentChanged(AssertionError):
    """A call into the student's code changed one of its arguments, which the course forbids
    (``calls.arguments_unchanged``): a failure of the property that made the call, whatever it
    checks. ``changed`` holds ``(name, how)`` per argument, ``how`` being ``"order"`` when only
    the order of some dict keys differs, else ``"value"``."""

    def __init__(self, call: str, changed: list[tuple[str, str]]):
        self.changed = changed
        said = [(_("{name} (the same keys, in another order)") if how == "order" else "{name}").format(name=name)
                for name, how in changed]
        super().__init__(_("{call} changed its argument {names}: a function must leave the arguments it is given "
                           "as they were").format(call=call, names=_(", ").join(said)))


class SandboxFailure(BaseException):
    """The property cannot go on: ``kind`` is timeout, crash, import, missing (the module is not in the
    submission), not_implemented, budget, overran (a function not called again after it ran past a
    limit: :class:`~autograder.engine.session.Overruns`) or protocol."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


class TimedOut(SandboxFailure):
    """A request ran past its time: ``seconds``, the limit it met (its own, or what was left of a
    budget: ``budget``); ``index``, which of a batch's requests; ``answering``, whether its answer
    had begun to come back (the request was done, its answer too big or slow to send or read)."""

    def __init__(self, message: str, seconds: float, *, budget: bool = False, index: int = 0,
                 answering: bool = False):
        super().__init__("timeout", message)
        self.seconds, self.budget, self.index, self.answering = seconds, budget, index, answering


class GraderError(Exception):
    """The grader itself cannot run (bad course, broken suite); never the student's fault."""

    exit_status = 2  # of the command that met it; official grading refused is 3


class SubmissionError(Exception):
    """A submission cannot be read or has no exercise modules: it is graded as unreadable."""
