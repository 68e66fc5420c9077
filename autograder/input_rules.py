"""The bad-input rules every graded function shares, checked from its signature alone.

For each parameter of a graded function (:func:`autograder.signatures.graded_functions`), with
valid values before it, this module says which calls break a rule its annotation states
(``True`` for an ``int``, bytes for a ``str``, a tuple for a list, one item of the wrong type in a
container, ...), each of which must raise a ``TypeError`` naming the parameter, and which
``frozenset`` must be answered as its set. Valid values come from the annotations, or from the
suite (``values``, ``callable_value``). :func:`autograder.suite.expect_bad_input_rules` makes the
calls and judges them. The rules in full: docs/authors.md, "Suites".
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from typing import Any

from .i18n import _
from .signatures import CONTAINERS, Graded, Parameter, Type

_shown_item = reprlib.Repr()
_shown_item.maxstring = _shown_item.maxother = 40


def show(value: Any) -> str:
    """A short repr of a value in a rule's words (``autograder.suite.show``'s, which imports this module)."""
    return _shown_item.repr(value)


class Values:
    """Valid values for parameters: the suite's by name, else made from the annotation."""

    def __init__(self, by_name: Mapping[str, Any], callable_value: Any):
        self.by_name = by_name
        self.callable_value = callable_value

    def valid(self, parameter: Parameter) -> Any:
        if parameter.name in self.by_name:
            return self.by_name[parameter.name]
        return self.of(parameter.type)

    def of(self, kind: Type) -> Any:
        """A valid value of ``kind`` as far as its annotation tells."""
        simple = {"int": 2, "float": 0.5, "bool": False, "str": "ab", "bytes": b"ab", "none": None}
        if kind.kind in simple:
            return simple[kind.kind]
        if kind.kind == "callable":
            return self.callable_value
        if kind.kind == "union":
            return self.of(next((m for m in kind.items if m.kind != "none"), kind.items[0]))
        return self._container(kind)

    def _container(self, kind: Type) -> Any:
        known = kind.items and all(item.kind not in ("class", "any") for item in kind.items)
        if kind.kind == "list":
            return [self.of(kind.items[0])] * 2 if known else []
        if kind.kind == "tuple":
            return tuple(self.of(item) for item in kind.items) if known else ()
        if kind.kind == "dict":
            return {self.of(kind.items[0]): self.of(kind.items[1])} if known else {}
        if kind.kind in ("set", "frozenset"):
            return {self.of(kind.items[0])} if known else set()
        return None


def probes(kind: Type, valid: Any) -> list[tuple[Any, str]]:
    """The values of a parameter of type ``kind`` that break a rule, each with the rule, built
    around the ``valid`` value (a member of a union that ``valid`` is not gets its own)."""
    kinds = {member.kind for member in kind.members()}
    found: list[tuple[Any, str]] = []
    if kinds & {"int", "float"} and "bool" not in kinds:
        found.append((True, _("True where a number is expected: a bool is not a number")))
    if "bool" in kinds and not kinds & {"int", "float"}:
        found += [(value, _("{value} where a bool is expected: 0 and 1 are not one").format(value=value))
                  for value in (0, 1)]
    if "str" in kinds and "bytes" not in kinds:
        found.append((b"ab", _("bytes where a str is expected")))
    if "callable" in kinds and not kinds & {"int", "float"}:
        found.append((7, _("7 where a callable is expected")))
    for member in kind.members():
        found += _container_probes(member, kinds, as_container(member, valid))
    return found


def _container_probes(member: Type, kinds: set[str], valid: Any) -> list[tuple[Any, str]]:
    """What breaks the rules of the container type ``member``: another kind of container in its
    place, and one item of the wrong type in it."""
    found: list[tuple[Any, str]] = []
    if member.kind == "list" and "tuple" not in kinds:
        found.append((tuple(valid), _("a tuple where a list is expected")))
    if member.kind == "tuple" and "list" not in kinds:
        found.append((list(valid), _("a list where a tuple is expected")))
    if member.kind == "tuple" and not member.variadic and valid:
        rule = _("a tuple of {count} items where a {kind} is expected")
        found += [(items, rule.format(count=len(items), kind=member)) for items in (valid[:-1], (*valid, valid[-1]))]
    if member.kind == "dict" and "list" not in kinds:
        found.append((list(valid.items()), _("a list of pairs where a dict is expected")))
    if not member.items or (member.kind in ("dict", "tuple") and not valid):
        return found
    if member.kind == "dict":
        key, value = next(iter(valid.items()))
        keys, values = wrong_items(member.items[0]), wrong_items(member.items[1])
        found += [({**valid, wrong: value}, _("a key of the wrong type, {value}, in a {kind}")
                   .format(value=show(wrong), kind=member)) for wrong in keys if _hashable(wrong)]
        found += [({**valid, key: wrong}, _("a value of the wrong type, {value}, in a {kind}")
                   .format(value=show(wrong), kind=member)) for wrong in values]
        return found
    fixed = member.kind == "tuple" and not member.variadic  # tuple[int, int]: the last item is replaced
    rule = _("one item of the wrong type, {value}, in a {kind}")
    for wrong in wrong_items(member.items[-1] if fixed else member.items[0]):
        if member.kind in ("set", "frozenset") and _hashable(wrong):
            found.append((type(valid)({*valid, wrong}), rule.format(value=show(wrong), kind=member)))
        elif member.kind in ("list", "tuple"):
            items = [*valid[:-1], wrong] if fixed else [*valid, wrong]
            found.append((type(valid)(items), rule.format(value=show(wrong), kind=member)))
    return found


def wrong_items(kind: Type) -> list[Any]:
    """Items that a container of ``kind`` items must not hold: a scalar of the wrong type, and a
    valid item broken by the rules of its own type (a tuple for a list of lists); none for a
    class the stub defines, whose instances are not looked into, or for anything unannotated."""
    kinds = {member.kind for member in kind.members()}
    if kinds & {"class", "any"}:
        return []
    if kinds & {"int", "float"}:
        return [] if "bool" in kinds else [True]
    if "bool" in kinds:
        return [0]
    if "str" in kinds:
        return [2]
    inner = [bad for member in kind.members()
             for bad, _rule in _container_probes(member, kinds, as_container(member, None))]
    return [7, *inner]  # a container, a callable: a number is none of them


def as_container(member: Type, valid: Any) -> Any:
    """``valid`` as a value of the container type ``member`` (a set's items as a list, say), or
    None when it is not a container."""
    if member.kind in ("list", "tuple", "set", "frozenset") and isinstance(valid, (list, tuple, set, frozenset)):
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[member.kind](valid)
    if member.kind == "dict" and isinstance(valid, dict):
        return valid
    return Values({}, None).of(member) if member.kind in CONTAINERS else None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def call_arguments(parameters: tuple[Parameter, ...], index: int, bad: Any, maker: Values) -> tuple[list, dict]:
    """The arguments of a call with ``bad`` for parameter ``index``: valid values for the required
    parameters, the others left out; by keyword once one before is left out."""
    args: list = []
    kwargs: dict = {}
    by_keyword = False
    for position, parameter in enumerate(parameters):
        if position != index and not parameter.required:
            by_keyword = by_keyword or position < index
            continue
        value = bad if position == index else maker.valid(parameter)
        if parameter.keyword_only or by_keyword:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    return args, kwargs


def target(student: Any, function: Graded, maker: Values) -> Callable:
    """The student's function, or the method of a new object of its class."""
    if function.owner is None:
        return getattr(student, function.name)
    args, kwargs = call_arguments(function.constructor, -1, None, maker)
    return getattr(getattr(student, function.owner)(*args, **kwargs), function.name)


def shown_call(function: Graded, args: list, kwargs: dict) -> str:
    """The call as a student would write it, sets in a fixed order."""
    owner = f"{function.owner}()." if function.owner else ""
    shown = [*map(_written, args), *(f"{name}={_written(value)}" for name, value in kwargs.items())]
    return f"{owner}{function.name}({', '.join(shown)})"


def _written(value: Any) -> str:
    if isinstance(value, (set, frozenset)):
        items = ", ".join(sorted(map(_written, value)))
        return f"{{{items}}}" if type(value) is set else f"frozenset({{{items}}})"
    if type(value) in (list, tuple):
        parts = [_written(item) for item in value]
        return f"[{', '.join(parts)}]" if type(value) is list else f"({parts[0]},)" if len(parts) == 1 \
            else f"({', '.join(parts)})"
    if type(value) is dict:
        return "{" + ", ".join(f"{_written(k)}: {_written(v)}" for k, v in value.items()) + "}"
    return show(value) if isinstance(value, (int, float, str, bytes, type(None))) else repr(value)


def takes_a_set(kind: Type) -> bool:
    """Whether a parameter of type ``kind`` takes a set (and so a frozenset, by the rules)."""
    members = {member.kind for member in kind.members()}
    return "set" in members and "frozenset" not in members


def set_items(parameter: Parameter, maker: Values) -> set:
    """The items of a valid set for ``parameter``, which takes a set."""
    member = next(m for m in parameter.type.members() if m.kind == "set")
    return set(as_container(member, maker.valid(parameter)))
