"""Exercise 5 with a different structure: a generator of sequence lengths with an explicit
first-occurrence tie scan, consumed lazily by merges_for_parity."""

import math

from ._pairs import most_frequent, replace


def _text_bytes(text):
    if type(text) is not str:
        raise TypeError("text must be a str")
    if not text:
        raise ValueError("text must not be empty")
    return text.encode("utf-8")


def _count(value, name):
    if type(value) is not int:
        raise TypeError(f"{name} must be an int")
    if value < 0:
        raise ValueError(f"{name} must not be negative")


def compression_ratio(encode, text):
    if not callable(encode):
        raise TypeError("encode must be callable")
    return len(encode(text)) / len(_text_bytes(text))


def _lengths(data, max_merges):
    ids = list(data)
    yield len(ids)
    for k in range(max_merges):
        pair, _count_ = most_frequent([(ids, 1)])
        if pair is None:
            return
        ids = replace(ids, pair, 256 + k)
        yield len(ids)


def ratio_curve(text, max_merges):
    data = _text_bytes(text)
    _count(max_merges, "max_merges")
    return [n / len(data) for n in _lengths(data, max_merges)]


def merges_for_parity(text, target_ratio, tolerance=0.10, max_merges=20000):
    data = _text_bytes(text)
    if type(target_ratio) not in (int, float):
        raise TypeError("target_ratio must be a number")
    if not (target_ratio > 0):
        raise ValueError("target_ratio must be greater than 0")
    if type(tolerance) not in (int, float):
        raise TypeError("tolerance must be a number")
    if not (0 < tolerance < 1):
        raise ValueError("tolerance must be strictly between 0 and 1")
    _count(max_merges, "max_merges")
    best = math.inf
    for k, n in enumerate(_lengths(data, max_merges)):
        ratio = n / len(data)
        if ratio <= target_ratio * (1 + tolerance):
            return k
        best = ratio
    raise ValueError(f"target_ratio {target_ratio} is out of reach: {best:.4f} after max_merges={max_merges}")
