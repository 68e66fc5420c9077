"""The hashes of locked answers: a salted hash of a canonical encoding, equal for equal answers.

:func:`canonical` is the codec's encoding made insensitive to what
:func:`autograder.equality.same` ignores (named tuples equal tuples, dict and set order do not
matter), with floats counted to :data:`FLOAT_DIGITS` significant digits and an object that is not
plain data standing for "some object"; ``tests/engine/test_equality.py`` shows the two agree.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from ..isolation import codec

FLOAT_DIGITS = 10


def canonical(value: Any) -> bytes:
    """The codec's encoding of ``value``, normalised so that equal answers give equal bytes."""
    tree = _normal(codec.encode(value, lambda _obj: {"$object": None}))
    return json.dumps(tree, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _normal(node: Any) -> Any:
    """A node of the codec's wire, normalised (see the module's docstring)."""
    if type(node) is float:
        return float(f"{node:.{FLOAT_DIGITS}g}") + 0.0 if math.isfinite(node) else node
    if type(node) is list:
        return [_normal(item) for item in node]
    if type(node) is not dict:
        return node
    (tag, body), = node.items()
    return _normal_tagged(tag, body)


def _normal_tagged(tag: str, body: Any) -> Any:
    """A tagged object of the wire (``$tuple``, ``$dict``, ...), normalised."""
    if tag == "$named":
        return {"$tuple": _normal(body[2])}
    if tag == "$dict":
        return {tag: sorted(([_normal(k), _normal(v)] for k, v in body), key=lambda pair: _key(pair[0]))}
    if tag in ("$set", "$frozenset"):
        return {tag: sorted((_normal(item) for item in body), key=_key)}
    return {tag: _normal(body)}


def _key(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"))


def digest(salt: str, value: Any) -> str:
    """``sha256(salt + canonical(value))`` in hex; ``salt`` is hex."""
    return hashlib.sha256(bytes.fromhex(salt) + canonical(value)).hexdigest()
