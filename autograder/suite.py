"""What property suites import: assertions whose failures read well in feedback.

A suite is an ordinary pytest module with the fixtures ``student`` (the submission's module in
the sandbox), ``reference`` (the solution, in the grader), ``sandbox`` and ``course``, and the
markers ``@pytest.mark.points(n)`` and ``@pytest.mark.hidden``. A suite words its own failures
with :func:`say`: an English template and named fields, which a course in another language
translates under ``messages`` in its suites' texts (:mod:`autograder.suite_texts`).
docs/authors.md, "Suites", says how to write one."""

from __future__ import annotations

import builtins
import contextvars
import functools
import math
import re
import reprlib
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import bidi, input_rules
from .equality import same
from .errors import StudentError
from .i18n import N_, _
from .signatures import Graded

_shown = reprlib.Repr()
_shown.maxstring = 120
_shown.maxother = 120
_shown.maxlist = _shown.maxtuple = _shown.maxdict = _shown.maxset = 12
_shown.maxlevel = 4


# How the engine runs calls side by side while a property runs (autograder/engine/breadth.py); set by it
TOGETHER: contextvars.ContextVar[Callable[[Sequence[Callable[[], Any]]], list] | None] = \
    contextvars.ContextVar("together", default=None)


def together(calls: Sequence[Callable[[], Any]]) -> list:
    """What each of ``calls`` returns, as ``[call() for call in calls]`` would give it: the first
    exception in their order is raised. Calls that ask the student's code for independent answers
    (``token_to_id`` of each token, each bad argument in turn) are best made this way: while a
    property runs, their requests go to the worker together, one round trip for all of them."""
    runner = TOGETHER.get()
    return runner(calls) if runner is not None else [call() for call in calls]


# The course's language and its wording of the running suite's templates (English -> its own,
# autograder.suite_texts.messages); set by the engine while a property runs
WORDING: contextvars.ContextVar[tuple[str, Mapping[str, str]]] = \
    contextvars.ContextVar("wording", default=("en", {}))
_CODE = re.compile(r"``(.+?)``")
_CONVERSIONS: dict[str | None, Callable[[Any], Any]] = {"r": repr, "s": str, "a": ascii, None: lambda value: value}


def say(template: str, /, **fields: Any) -> str:
    """A failure's message: the English ``template`` with its named ``{fields}`` filled in, as
    ``template.format(**fields)`` gives it in English.

    In a course of another language the template is the key of that language's wording of it
    (the exercise's ``messages``, :mod:`autograder.suite_texts`), which writes its code in double
    backticks; the fields are filled in after lookup, so a value stays as Python shows it. In a
    right-to-left language each value is isolated, as the engine's messages isolate theirs
    (:mod:`autograder.bidi`): left to right (LRI) when it is code (a call, a repr, a number), by
    its first strong letter (FSI) when it has the language's prose in it (another ``say``'s
    message). A template without a wording is shown in English (the course's tests find it)."""
    language, wording = WORDING.get()
    text = wording.get(template)
    if text is None:
        return template.format(**fields)
    shown = []
    for literal, name, spec, conversion in string.Formatter().parse(text):
        shown.append(_CODE.sub(lambda code: bidi.code(language, code.group(1)), literal))
        if name is not None:
            value = format(_CONVERSIONS[conversion](fields[name]), spec or "")
            isolated = bidi.right_to_left(language) and bidi.has_prose(value)
            shown.append(bidi.cell(language, value) if isolated else bidi.code(language, value))
    return "".join(shown)


def show(value: Any) -> str:
    """A short repr for feedback."""
    return _shown.repr(value)


def expect_equal(got: Any, expected: Any, what: str) -> None:
    """Fail with ``what: expected ..., got ...`` unless the values are equal, types included
    (:func:`autograder.equality.same`)."""
    if not same(got, expected):
        raise AssertionError(_(EXPECTED).format(what=what, expected=show(expected), got=show(got)))


EXPECTED = N_("{what}: expected {expected}, got {got}")  # the headline of a wrong answer, which the class report reads


def expect_close(got: Any, expected: float, what: str, rel: float = 1e-9) -> None:
    """Like :func:`expect_equal` for a float, within a relative tolerance."""
    if type(got) not in (int, float) or not math.isclose(got, expected, rel_tol=rel, abs_tol=1e-12):
        raise AssertionError(_("{what}: expected {expected} (within {tolerance:g}), got {got}")
                             .format(what=what, expected=repr(expected), tolerance=rel, got=show(got)))


def expect(condition: bool, message: str) -> None:
    """Fail with ``message`` unless ``condition`` holds: for invariants."""
    if not condition:
        raise AssertionError(message)


def expect_error(call: Callable[[], Any], names: tuple[str, ...], what: str, naming: tuple[str, ...] = ()) -> None:
    """``call()`` must raise, in the student's code, one of the exception classes ``names``
    (or a subclass), with every string of ``naming`` in its message.

    When ``names`` are built-in exceptions, the error must be no other built-in error besides:
    one class that is a ValueError, a TypeError, a KeyError and an IndexError at once would
    pass every such property without telling one bad input from another."""
    try:
        result = call()
    except StudentError as error:
        expect(error.is_a(*names), _("{what}: expected {expected}, got {error}: {message}")
               .format(what=what, expected=_either(names), error=error.type_name, message=error.message))
        others = _other_builtin_errors(error.mro, names)
        expect(not others, _("{what}: expected {expected}, got {error}, which is also {others}: raise the one "
                             "error the rules name").format(what=what, expected=_either(names),
                                                            error=error.type_name, others=", ".join(others)))
        for name in naming:
            expect(name in error.message, _("{what}: the {error}'s message should name {name}: {message}")
                   .format(what=what, error=error.type_name, name=repr(name), message=repr(error.message)))
        return
    raise AssertionError(_("{what}: expected {expected}, but it returned {result}")
                         .format(what=what, expected=_either(names), result=show(result)))


def _either(names: tuple[str, ...]) -> str:
    """Exception class names as a failure says it expected them: ``ValueError or TypeError``."""
    return _(" or ").join(names)


def _other_builtin_errors(mro: list[str], names: tuple[str, ...]) -> list[str]:
    """The built-in exceptions among the class names ``mro`` that are neither a base nor a
    subclass of one of ``names``; none when a name is not a built-in (its bases are unknown here)."""
    named = [_builtin_error(name) for name in names]
    if None in named:
        return []
    found = []
    for name in mro:
        cls = _builtin_error(name)
        if cls is not None and not any(issubclass(cls, n) or issubclass(n, cls) for n in named if n is not None):
            found.append(name)
    return found


def _builtin_error(name: str) -> type[BaseException] | None:
    """The built-in exception class called ``name``, if there is one."""
    cls = getattr(builtins, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


def expect_bad_input_rules(student: Any, functions: list[Graded], values: Mapping[str, Any] | None = None,
                           callable_value: Any = None) -> None:
    """Fail on the first call of one of the graded ``functions`` (:func:`autograder.signatures.graded_functions`)
    of the module ``student`` that breaks a shared bad-input rule (:mod:`autograder.input_rules`), naming the
    call and the rule: each value that breaks a rule must raise a ``TypeError`` naming its parameter, and
    a frozenset must be answered as the set of the same items. ``values``: valid values by parameter
    name where the annotation's are not valid; ``callable_value``: what a ``Callable`` parameter gets."""
    maker = input_rules.Values(values or {}, callable_value)
    checks: list[Callable[[], None]] = []
    for function in functions:
        for index, parameter in enumerate(function.parameters):
            for bad, rule in input_rules.probes(parameter.type, maker.valid(parameter)):
                args, kwargs = input_rules.call_arguments(function.parameters, index, bad, maker)
                call = functools.partial(_call_student, student, function, maker, args, kwargs)
                checks.append(functools.partial(expect_error, call, ("TypeError",),
                                                _("{call} ({rule})").format(
                                                    call=input_rules.shown_call(function, args, kwargs), rule=rule),
                                                naming=(parameter.name,)))
            if input_rules.takes_a_set(parameter.type):
                checks.append(functools.partial(_expect_frozenset_is_a_set, student, function, index, maker))
    together(checks)


def _call_student(student: Any, function: Graded, maker: input_rules.Values, args: list, kwargs: dict) -> Any:
    return input_rules.target(student, function, maker)(*args, **kwargs)


def _expect_frozenset_is_a_set(student: Any, function: Graded, index: int, maker: input_rules.Values) -> None:
    """A frozenset for parameter ``index``, which takes a set, is answered as the set of its items is."""
    items = input_rules.set_items(function.parameters[index], maker)
    calls = [input_rules.call_arguments(function.parameters, index, value, maker)
             for value in (set(items), frozenset(items))]
    answers = []
    for args, kwargs in calls:
        try:
            answers.append(("ok", _call_student(student, function, maker, args, kwargs)))
        except StudentError as error:
            answers.append((error.type_name, error.message))
    plain, frozen = (input_rules.shown_call(function, *call) for call in calls)
    alike = answers[0][0] == answers[1][0] and (answers[0][0] != "ok" or same(answers[0][1], answers[1][1]))
    expect(alike, _("{frozen} should be answered as {plain} is (a frozenset is a set): {plain} gave {first}, "
                    "{frozen} gave {second}").format(frozen=frozen, plain=plain, first=_answer(answers[0]),
                                                     second=_answer(answers[1])))


def _answer(answer: tuple[str, Any]) -> str:
    kind, value = answer
    return show(value) if kind == "ok" else f"{kind}: {value}"
