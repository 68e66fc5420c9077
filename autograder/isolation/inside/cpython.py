"""Every use the engine makes of CPython's private parts, in one place. The worker's come first, each
in place of a public module whose import every worker's start would pay for (``json``, ``signal``,
``socket``, ``importlib.util``); then the grader's, where the standard library has no public way.

``tests/repo/test_internals.py`` checks each against the running Python and its public twin, and fails
naming that Python when one changes. Like every file of this folder it imports the standard library
only: the grader imports it as ``autograder.isolation.inside.cpython``, a worker as ``cpython``.
"""

from __future__ import annotations

import _imp
import _signal as signal  # type: ignore[import-not-found]  # the signal module without its enums
import marshal
import sys
from _frozen_importlib_external import MAGIC_NUMBER  # type: ignore[import-not-found]  # importlib.util's

TYPE_CHECKING = False  # typing is not imported: a worker's every import is paid at each of its starts
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAGIC_NUMBER", "caller_globals", "checked_pyc", "put_random_words", "random_words", "scan_json", "signal",
           "source_hash", "unix_socket", "write_json", "zip_directory_size"]


def source_hash(source):
    """``importlib.util.source_hash(source)``: the key of a checked-hash pyc (PEP 552)."""
    return _imp.source_hash(_RAW_MAGIC_NUMBER, source)


_RAW_MAGIC_NUMBER = int.from_bytes(MAGIC_NUMBER, "little")


def checked_pyc(code, source):
    """``code``, compiled from ``source``, as the checked-hash pyc file ``py_compile`` writes (PEP 552:
    the magic number, flags 0b11, the source's hash, the marshalled code), made in memory."""
    return MAGIC_NUMBER + (0b11).to_bytes(4, "little") + source_hash(source) + marshal.dumps(code)


def caller_globals(depth=1):
    """The globals of the function ``depth`` calls above the caller (``inspect``'s frames, unimported)."""
    return sys._getframe(depth + 1).f_globals


def unix_socket(fd):
    """A socket object for the connected Unix stream socket ``fd``, made without socket(2)
    (the seccomp filter denies it) and without the ``socket`` module; and its ``CMSG_SPACE``."""
    import _socket  # type: ignore[import-not-found]  # only a zygote holds a socket

    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, fd), _socket.CMSG_SPACE


class _JSONReading:
    """What json's C scanner reads from a decoder: ``json.JSONDecoder()``'s defaults."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def _not_json(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not one of JSON's types")


try:  # json's own C encoder and scanner, set up as json.dumps and json.loads set them up, without
    # importing the json package, whose import (re, enum) a worker's start would pay for
    from _json import encode_basestring_ascii, make_encoder, make_scanner

    _chunks = make_encoder(None, _not_json, encode_basestring_ascii, None, ":", ",", False, False, True)

    def write_json(data: Any) -> str:
        """``json.dumps(data, separators=(",", ":"))``."""
        return "".join(_chunks(data, 0))

    # (text, index) -> (value, end), as json's scan_once; it reads only _JSONReading's attributes
    scan_json = make_scanner(_JSONReading())  # type: ignore[arg-type]
except ImportError:  # a Python without json's C speedups: the json package's own
    import json

    _encoder = json.JSONEncoder(separators=(",", ":"))

    def write_json(data: Any) -> str:
        """``json.dumps(data, separators=(",", ":"))``."""
        return _encoder.encode(data)

    scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def zip_directory_size(file):
    """The size a zip's end record (the open binary ``file``) gives its table of contents, or None
    where it has no end record: read before ``zipfile`` parses the table, which it would whole."""
    import zipfile

    end = zipfile._EndRecData(file)  # type: ignore[attr-defined]  # zipfile's own reader of that record
    return end[zipfile._ECD_SIZE] if end else None  # type: ignore[attr-defined]


def random_words(generator):
    """The bytes where CPython keeps a ``random.Random``'s Mersenne Twister, its position and its
    624 words: equal exactly when ``getstate``'s words are. None for a type that keeps them
    elsewhere, or keeps more (its own ``getstate``): checked once a type, against ``getstate``."""
    kind = type(generator)
    if kind not in _RANDOM_LAID_OUT:
        _RANDOM_LAID_OUT[kind] = _laid_out_as_random(generator)
    if not _RANDOM_LAID_OUT[kind]:
        return None
    import ctypes  # the grader's alone: no worker imports it

    return ctypes.string_at(id(generator) + object.__basicsize__, _RANDOM_SIZE)


def put_random_words(generator, words):
    """Give ``generator`` the words :func:`random_words` read from a generator of its type: what
    ``setstate`` does with them, without building the 625 integers ``getstate`` gives."""
    if len(words) != _RANDOM_SIZE or not _RANDOM_LAID_OUT.get(type(generator)):
        raise ValueError(f"{type(generator).__name__} does not keep its state as random.Random's words")
    import ctypes

    ctypes.memmove(id(generator) + object.__basicsize__, words, _RANDOM_SIZE)


_RANDOM_SIZE = 4 + 624 * 4  # the C int of the position, then the words (uint32)
_RANDOM_LAID_OUT: dict = {}


def _laid_out_as_random(generator):
    import ctypes
    import random
    import struct

    kind = type(generator)
    if (not isinstance(generator, random.Random) or kind.getstate is not random.Random.getstate
            or kind.setstate is not random.Random.setstate):
        return False
    words = random.Random.getstate(generator)[1]
    return (kind.__basicsize__ >= object.__basicsize__ + _RANDOM_SIZE and len(words) == 625 and
            ctypes.string_at(id(generator) + object.__basicsize__, _RANDOM_SIZE) ==
            struct.pack("=i624I", words[-1], *words[:-1]))
