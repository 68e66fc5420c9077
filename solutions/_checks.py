"""Argument checks shared by the reference solutions.

Every check raises the error the bad-input rules of ``exercises/__init__.py`` ask for: a
``TypeError`` for a value of the wrong type (a tuple is not a list, and a ``bool`` is never
an ``int``) and a ``ValueError`` for a value out of range, both naming the argument.
"""

from typing import Any


def check_str(value: Any, name: str) -> str:
    """Return ``value`` if it is a ``str``; otherwise raise ``TypeError`` naming ``name``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def check_int(value: Any, name: str, minimum: int | None = 0) -> int:
    """Return ``value`` if it is an ``int`` (not a ``bool``) of at least ``minimum``
    (``None``: no lower bound)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def check_ids(value: Any, name: str, container: type = list) -> list[int]:
    """Return ``value`` as a list if it is a ``container`` of ``int`` (no ``bool``)."""
    if not isinstance(value, container):
        raise TypeError(f"{name} must be a {container.__name__} of ints, got {type(value).__name__}")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            raise TypeError(f"{name} must hold only ints, found {type(item).__name__}")
    return list(value)


def check_callable(value: Any, name: str) -> Any:
    """Return ``value`` if it can be called; otherwise raise ``TypeError`` naming ``name``."""
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")
    return value
