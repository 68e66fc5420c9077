"""Reference solution of exercise 5: how many merges reach tiktoken's compression.

Decisions where the spec is silent:

- ``compression_ratio`` and ``ratio_curve`` need a non-empty ``text`` (the ratio divides by
  its UTF-8 length): an empty one is a ``ValueError`` naming ``text``.
- ``target_ratio`` must be a finite positive real number (``int`` or ``float``, not
  ``bool``); ``tolerance`` must lie strictly between 0 and 1.
- ``merges_for_parity`` trains once and stops as soon as the threshold
  ``target_ratio * (1 + tolerance)`` is met, so it never trains further than it needs; its
  answer is what scanning ``ratio_curve(text, max_merges)`` gives. When the threshold is not
  met, the ``ValueError`` says the best ratio reached and how many merges were tried.
"""

import math
from collections.abc import Callable, Iterator

from . import _bpe
from ._checks import check_callable, check_int, check_str

FIRST_MERGE_ID = 256


def _check_text(text: str) -> bytes:
    """The UTF-8 bytes of ``text``, which must be a non-empty ``str``."""
    data = check_str(text, "text").encode("utf-8")
    if not data:
        raise ValueError("text must not be empty")
    return data


def _check_real(value, name: str, low: float, high: float = math.inf) -> float:
    """Return ``value`` if it is a real number strictly between ``low`` and ``high``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not low < value < high:
        raise ValueError(f"{name} must be strictly between {low} and {high}, got {value}")
    return value


def compression_ratio(encode: Callable[[str], list[int]], text: str) -> float:
    """Tokens over UTF-8 bytes of ``text`` (lower is better)."""
    check_callable(encode, "encode")
    data = _check_text(text)
    return len(encode(text)) / len(data)


def _ratios(text: str, max_merges: int) -> Iterator[float]:
    """Yield the compression ratio of ``text`` after 0, 1, 2, ... merges of byte-level BPE
    trained on it, up to ``max_merges`` merges or until no pair is left."""
    data = _check_text(text)
    check_int(max_merges, "max_merges")
    yield 1.0
    merges = _bpe.train([(list(data), 1)], max_merges, lambda k, _pair: FIRST_MERGE_ID + k)
    for merge in merges:
        yield merge.length / len(data)


def ratio_curve(text: str, max_merges: int) -> list[float]:
    """Element k is the compression ratio of ``text`` after k merges (element 0 is 1.0); the
    list is shorter than ``max_merges + 1`` when training stops early."""
    return list(_ratios(text, max_merges))


def merges_for_parity(
    text: str, target_ratio: float, tolerance: float = 0.10, max_merges: int = 20000
) -> int:
    """The smallest k whose ratio is at most ``target_ratio * (1 + tolerance)``; a
    ``ValueError`` when no k up to ``max_merges`` reaches it. Arguments are checked in
    signature order."""
    _check_text(text)
    _check_real(target_ratio, "target_ratio", 0.0)
    _check_real(tolerance, "tolerance", 0.0, 1.0)
    check_int(max_merges, "max_merges")
    threshold = target_ratio * (1 + tolerance)
    best = math.inf
    for k, ratio in enumerate(_ratios(text, max_merges)):
        if ratio <= threshold:
            return k
        best = min(best, ratio)
    raise ValueError(
        f"target_ratio {target_ratio} (threshold {threshold:.4f}) not reached: the best ratio "
        f"was {best:.4f} after trying {k} merges (max_merges={max_merges})"
    )
