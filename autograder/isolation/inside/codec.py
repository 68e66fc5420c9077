"""Plain data across the sandbox boundary: a JSON codec that keeps Python's types exact.

``None``, ``bool``, ``int``, ``float``, ``str`` go as JSON; ``bytes``, ``list``, ``tuple`` (named
tuples included), ``dict``, ``set`` and ``frozenset`` as objects with one ``$`` tag; subclasses as
their plain base; anything else as a ``{"$handle": ...}`` through :func:`encode`'s ``other`` hook.
The decoder runs no code from the message and is bounded, since the worker that writes the
answers is not trusted: ``MAX_DEPTH``, ``MAX_ITEMS``, ``MAX_FIELDS``, ``MAX_NAME``,
``MAX_SHAPES`` and a ``deadline`` (:class:`CodecTimeout`). Why: docs/architecture.md,
"Processes and boundaries"; docs/security.md, "A worker".
"""

from __future__ import annotations

import binascii
import time

TYPE_CHECKING = False  # typing is not imported: the worker imports this module at each of its starts
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

if TYPE_CHECKING or __package__:  # the grader's copy, autograder.isolation.inside.codec
    from . import cpython
else:  # a worker's, found beside cpython.py on sys.path
    import cpython

MAX_DEPTH = 200  # levels of nesting
MAX_ITEMS = 2_000_000  # values decoded from one message
MAX_FIELDS = 100  # fields of one named tuple
MAX_NAME = 100  # characters in a named tuple's name or in one of its field names
MAX_SHAPES = 256  # named-tuple shapes in one message, and shapes whose classes stay cached
CLOCK_EVERY = 1024  # values decoded between looks at the clock (set and dict items: every one)
_PLAIN_BASES: tuple[type[Any], ...] = (bool, int, float, str, bytes, list, tuple, dict, set, frozenset)
_SCALARS = frozenset({type(None), bool, int, float, str})  # what JSON carries as it is


class CodecError(ValueError):
    """A value cannot be encoded, or a message is not valid wire data."""


class CodecTimeout(CodecError):
    """Decoding a message ran past its deadline."""


def encode(value: Any, other: Callable[[Any], Any] | None = None, depth: int = 0) -> Any:
    """Turn ``value`` into JSON-ready data; ``other(obj)`` encodes whatever is not plain."""
    if depth > MAX_DEPTH:
        raise CodecError(f"value nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    down = depth + 1
    if kind is list:
        return value[:] if _flat(value, down) else [_encode_item(item, other, down) for item in value]
    if kind is tuple:
        return {"$tuple": list(value) if _flat(value, down) else [_encode_item(item, other, down) for item in value]}
    if kind is dict:
        return {"$dict": [[_encode_item(k, other, down), _encode_item(v, other, down)] for k, v in value.items()]}
    return _encode_other(value, other, depth)


def _encode_item(item: Any, other: Callable[[Any], Any] | None, depth: int) -> Any:
    """:func:`encode` of an item at ``depth``, a scalar or a tuple of scalars taken in line: most
    items sent are such (tokens, and merges keyed by pairs)."""
    kind = type(item)
    if depth < MAX_DEPTH:
        if kind in _SCALARS:
            return item
        if kind is tuple and _flat(item, depth + 1):
            return {"$tuple": list(item)}
    return encode(item, other, depth)


def _encode_other(value: Any, other: Callable[[Any], Any] | None, depth: int) -> Any:
    """:func:`encode` of what is neither a scalar, a list, a plain tuple nor a dict."""
    kind, down = type(value), depth + 1
    if kind is bytes:
        return {"$bytes": binascii.b2a_base64(value, newline=False).decode("ascii")}
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


def _flat(items: Any, depth: int) -> bool:
    """Whether the ``items`` of a list or tuple at ``depth`` are all scalars, which encode and
    decode as they are (looked at in C: most values are lists of ints or strings)."""
    return depth <= MAX_DEPTH and _SCALARS.issuperset(map(type, items))


def decode(data: Any, handle: Callable[[int], Any] | None = None, depth: int = 0,
           deadline: float | None = None) -> Any:
    """Rebuild a value from :func:`encode`'s output, checking every node's shape and the bounds."""
    decoder = _Decoder(handle, deadline)
    decoder.check_clock()
    return decoder.value(data, depth)


def dumps(value: Any, other: Callable[[Any], Any] | None = None) -> bytes:
    """Encode to compact JSON bytes (ASCII, so lone surrogates survive)."""
    return to_json(encode(value, other)).encode("ascii")


def loads(raw: bytes, handle: Callable[[int], Any] | None = None, deadline: float | None = None) -> Any:
    """Decode JSON bytes written by :func:`dumps`, by ``deadline`` (a :func:`time.monotonic` value).

    >>> wire = dumps({(1, 2): [b"th", 3.5]})
    >>> wire
    b'{"$dict":[[{"$tuple":[1,2]},[{"$bytes":"dGg="},3.5]]]}'
    >>> loads(wire)
    {(1, 2): [b'th', 3.5]}
    >>> loads(wire, deadline=time.monotonic() - 1)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    CodecTimeout: decoding the message ran past its deadline
    """
    try:
        data = from_json(raw)
    except (ValueError, RecursionError) as error:
        raise CodecError(f"message is not JSON: {error}") from None
    return decode(data, handle, deadline=deadline)  # looks at the clock before anything else


def to_json(data: Any) -> str:
    """``data`` (JSON's types only) as ``json.dumps(data, separators=(",", ":"))`` writes it: compact, all ASCII.

    >>> to_json({"$bytes": "dGg=", "n": [1, 2.5, None, True, float("inf")]})
    '{"$bytes":"dGg=","n":[1,2.5,null,true,Infinity]}'
    """
    return cpython.write_json(data)


def from_json(text: str | bytes) -> Any:
    """The one JSON document ``text`` holds, read as ``json.loads`` reads it (bytes as UTF-8), except
    that nothing, not even white space, may stand around it; raises ValueError.

    >>> from_json(b'[1,"\\u00e9",{"a":NaN}]')
    [1, 'é', {'a': nan}]
    """
    document = text.decode("utf-8", "surrogatepass") if isinstance(text, bytes) else text
    try:
        value, end = cpython.scan_json(document, 0)
    except StopIteration:
        raise ValueError("no JSON value at the start") from None
    if end != len(document):
        raise ValueError(f"more than one JSON value: extra data at character {end}")
    return value


def named_class(name: str, fields: tuple[str, ...]) -> type:
    """The named-tuple class of one shape, shared while the shape is among the last ``MAX_SHAPES`` used."""
    return named_classes()(name, fields)


def named_classes() -> Any:
    """The cache of named-tuple classes (``functools.lru_cache``'s), made at its first use: importing
    functools and collections weighs on a worker's start, and most workers never see a named tuple."""
    global _named_classes
    if _named_classes is None:
        from collections import namedtuple
        from functools import lru_cache

        _named_classes = lru_cache(maxsize=MAX_SHAPES)(namedtuple)
    return _named_classes


_named_classes: Any = None


class _Decoder:
    """Decoding one message: the handle hook, the deadline, the values so far and the named-tuple classes."""

    def __init__(self, handle: Callable[[int], Any] | None, deadline: float | None):
        self.handle = handle
        self.deadline = deadline
        self.values = 0
        self.classes: dict[tuple[str, tuple[str, ...]], type] = {}

    def check_clock(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise CodecTimeout("decoding the message ran past its deadline")

    def value(self, data: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise CodecError(f"message nested deeper than {MAX_DEPTH} levels")
        self.count()
        if data is None or type(data) in (bool, int, float, str):
            return data
        down = depth + 1
        if type(data) is list:
            return self.flat(data) if _flat(data, down) else [self.item(item, down) for item in data]
        if type(data) is not dict or len(data) != 1:
            raise CodecError(f"unexpected {type(data).__name__} in message")
        (tag, body), = data.items()
        if tag == "$tuple":
            body = _list(body, tag)
            return tuple(self.flat(body) if _flat(body, down) else [self.item(item, down) for item in body])
        return self.tagged(tag, body, down)

    def tagged(self, tag: Any, body: Any, down: int) -> Any:
        """The value of a tagged object other than a tuple, whose items are at depth ``down``."""
        if tag == "$dict":
            return self.pairs(_list(body, tag), down)
        if tag == "$bytes":
            try:
                return binascii.a2b_base64(_str(body, tag).encode("ascii"), strict_mode=True)
            except ValueError:  # binascii.Error and UnicodeEncodeError are ValueErrors
                raise CodecError("bad base64 in $bytes") from None
        if tag in ("$set", "$frozenset"):
            items = set()
            for item in _list(body, tag):
                items.add(_hashable(self.value(item, down)))
                self.check_clock()
            return items if tag == "$set" else frozenset(items)
        if tag == "$named":
            return self.named(body, down)
        if tag == "$handle" and self.handle is not None:
            return self.handle(body)  # the hook checks the body's shape
        raise CodecError(f"unknown tag {tag!r} in message")

    def pairs(self, items: list, depth: int) -> dict:
        """The dict of a ``$dict``'s ``items``, at ``depth``."""
        result = {}
        for item in items:
            key, value = _pair(item)
            value = self.item(value, depth)  # before the key, as ``result[key] = value`` reads them
            key = self.item(key, depth)
            try:
                result[key] = value
            except TypeError:
                raise CodecError(f"unhashable {type(key).__name__} used as a key") from None
            self.check_clock()  # keys with equal hashes make each insertion slower than the last
        return result

    def item(self, data: Any, depth: int) -> Any:
        """:meth:`value` of an item at ``depth``, a scalar or a tuple of scalars read in line
        (most items are such: tokens, and merges keyed by pairs)."""
        if depth < MAX_DEPTH:
            if type(data) in _SCALARS:
                self.count()
                return data
            if type(data) is dict and len(data) == 1 and type(body := data.get("$tuple")) is list \
                    and _flat(body, depth + 1):
                self.count()
                return tuple(self.flat(body))
        return self.value(data, depth)

    def count(self) -> None:
        """One more value decoded: within ``MAX_ITEMS``, and the clock looked at now and then."""
        self.values += 1
        if self.values > MAX_ITEMS:
            raise CodecError(f"message holds more than {MAX_ITEMS} values")
        if self.values % CLOCK_EVERY == 0:
            self.check_clock()

    def flat(self, items: list) -> list:
        """``items``, all scalars, counted as :meth:`value` counts them one at a time."""
        before = self.values
        self.values += len(items)
        if self.values // CLOCK_EVERY != before // CLOCK_EVERY:
            self.check_clock()
        if self.values > MAX_ITEMS:
            raise CodecError(f"message holds more than {MAX_ITEMS} values")
        return items

    def named(self, body: Any, depth: int) -> tuple:
        parts = _list(body, "$named")
        if len(parts) != 3:
            raise CodecError("malformed $named")
        name, fields, values = parts
        fields = tuple(_str(f, "$named field") for f in _list(fields, "$named"))
        values = _list(values, "$named")
        if not isinstance(name, str) or not name.isidentifier() or len(fields) != len(values):
            raise CodecError("malformed $named")
        if len(fields) > MAX_FIELDS or max(map(len, (name, *fields))) > MAX_NAME:
            raise CodecError(f"$named with more than {MAX_FIELDS} fields or a name over {MAX_NAME} characters")
        return self.named_class(name, fields)(*(self.value(v, depth) for v in values))

    def named_class(self, name: str, fields: tuple[str, ...]) -> type:
        """One class per shape within the message, at most ``MAX_SHAPES`` of them."""
        shape = (name, fields)
        if shape not in self.classes:
            if len(self.classes) == MAX_SHAPES:
                raise CodecError(f"message has more than {MAX_SHAPES} named-tuple shapes")
            try:
                self.classes[shape] = named_class(name, fields)
            except (ValueError, TypeError) as error:
                raise CodecError(f"malformed $named: {error}") from None
        return self.classes[shape]


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
