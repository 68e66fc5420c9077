"""Plain data across the sandbox boundary: a JSON codec that keeps Python's types exact.

Only ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``list``, ``tuple``
(named tuples included), ``dict``, ``set`` and ``frozenset`` cross. JSON already carries
the first five exactly (Python writes floats with ``repr``, which round-trips); the rest
are tagged objects with one ``$`` key, so no plain JSON object is ever ambiguous:

>>> wire = dumps({(1, 2): [b"th", 3.5]})
>>> wire
b'{"$dict":[[{"$tuple":[1,2]},[{"$bytes":"dGg="},3.5]]]}'
>>> loads(wire)
{(1, 2): [b'th', 3.5]}

Subclasses of these (a ``Counter``, an ``OrderedDict``, an ``IntEnum``) are sent as their
plain base type. Anything else is replaced by a *handle*, ``{"$handle": body}``, through the ``other`` hook of
:func:`encode`; the side that decodes turns handles back into objects with its ``handle``
hook. The decoder never runs code from the message: it builds only the types above, and
named tuples as fresh ``collections.namedtuple`` classes with validated field names.
"""

from __future__ import annotations

import base64
import json
from collections import namedtuple
from typing import Any, Callable

MAX_DEPTH = 200
_PLAIN_BASES = (bool, int, float, str, bytes, list, tuple, dict, set, frozenset)


class CodecError(ValueError):
    """A value cannot be encoded, or a message is not valid wire data."""


def encode(value: Any, other: Callable[[Any], Any] | None = None, depth: int = 0) -> Any:
    """Turn ``value`` into JSON-ready data; ``other(obj)`` encodes whatever is not plain."""
    if depth > MAX_DEPTH:
        raise CodecError(f"value nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    down = depth + 1
    if kind is list:
        return [encode(item, other, down) for item in value]
    if kind is tuple:
        return {"$tuple": [encode(item, other, down) for item in value]}
    if kind is dict:
        return {"$dict": [[encode(k, other, down), encode(v, other, down)] for k, v in value.items()]}
    if kind is bytes:
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if kind in (set, frozenset):
        return {"$" + kind.__name__: [encode(item, other, down) for item in value]}
    if isinstance(value, tuple) and hasattr(kind, "_fields"):
        fields = [str(name) for name in kind._fields]
        return {"$named": [kind.__name__, fields, [encode(item, other, down) for item in value]]}
    for base in _PLAIN_BASES:  # a Counter is a dict, an IntEnum an int: send the plain value
        if isinstance(value, base):
            return encode(base(value), other, depth)
    if other is None:
        raise CodecError(f"{kind.__name__} is not plain data")
    return other(value)


def decode(data: Any, handle: Callable[[int], Any] | None = None, depth: int = 0) -> Any:
    """Rebuild a value from :func:`encode`'s output, checking every node's shape."""
    if depth > MAX_DEPTH:
        raise CodecError(f"message nested deeper than {MAX_DEPTH} levels")
    if data is None or type(data) in (bool, int, float, str):
        return data
    down = depth + 1
    if type(data) is list:
        return [decode(item, handle, down) for item in data]
    if type(data) is not dict or len(data) != 1:
        raise CodecError(f"unexpected {type(data).__name__} in message")
    (tag, body), = data.items()
    if tag == "$tuple":
        return tuple(decode(item, handle, down) for item in _list(body, tag))
    if tag == "$dict":
        pairs = [_pair(item) for item in _list(body, tag)]
        return {_hashable(decode(k, handle, down)): decode(v, handle, down) for k, v in pairs}
    if tag == "$bytes":
        try:
            return base64.b64decode(_str(body, tag), validate=True)
        except ValueError:
            raise CodecError("bad base64 in $bytes") from None
    if tag in ("$set", "$frozenset"):
        items = {_hashable(decode(item, handle, down)) for item in _list(body, tag)}
        return items if tag == "$set" else frozenset(items)
    if tag == "$named":
        return _named(body, handle, down)
    if tag == "$handle" and handle is not None:
        return handle(body)  # the hook checks the body's shape
    raise CodecError(f"unknown tag {tag!r} in message")


def dumps(value: Any, other: Callable[[Any], Any] | None = None) -> bytes:
    """Encode to compact JSON bytes (ASCII, so lone surrogates survive)."""
    return json.dumps(encode(value, other), separators=(",", ":")).encode("ascii")


def loads(raw: bytes, handle: Callable[[int], Any] | None = None) -> Any:
    """Decode JSON bytes written by :func:`dumps`."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise CodecError(f"message is not JSON: {error}") from None
    return decode(data, handle)


_NAMED_CLASSES: dict[tuple[str, tuple[str, ...]], type] = {}


def _named(body: Any, handle: Callable[[int], Any] | None, depth: int) -> tuple:
    parts = _list(body, "$named")
    if len(parts) != 3:
        raise CodecError("malformed $named")
    name, fields, values = parts
    fields = tuple(_str(f, "$named field") for f in _list(fields, "$named"))
    values = _list(values, "$named")
    if not isinstance(name, str) or not name.isidentifier() or len(fields) != len(values):
        raise CodecError("malformed $named")
    key = (name, fields)
    if key not in _NAMED_CLASSES:
        try:
            _NAMED_CLASSES[key] = namedtuple(name, fields)
        except (ValueError, TypeError) as error:
            raise CodecError(f"malformed $named: {error}") from None
    return _NAMED_CLASSES[key](*(decode(v, handle, depth) for v in values))


def _list(body: Any, tag: str) -> list:
    if type(body) is not list:
        raise CodecError(f"{tag} needs a list")
    return body


def _str(body: Any, tag: str) -> str:
    if type(body) is not str:
        raise CodecError(f"{tag} needs a string")
    return body


def _pair(item: Any) -> list:
    if type(item) is not list or len(item) != 2:
        raise CodecError("$dict needs [key, value] pairs")
    return item


def _hashable(key: Any) -> Any:
    try:
        hash(key)
    except TypeError:
        raise CodecError(f"unhashable {type(key).__name__} used as a key") from None
    return key
