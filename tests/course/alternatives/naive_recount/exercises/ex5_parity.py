"""Exercise 5, written the naive way: the lesson's loop, recounting every pair each merge."""

from .lesson import get_pair_counts, merge_pair


def compression_ratio(encode, text):
    if not callable(encode):
        raise TypeError("encode must be callable")
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    if text == "":
        raise ValueError("text must not be empty")
    return len(encode(text)) / len(text.encode("utf-8"))


def ratio_curve(text, max_merges):
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    if text == "":
        raise ValueError("text must not be empty")
    if type(max_merges) is not int:
        raise TypeError("max_merges must be an int")
    if max_merges < 0:
        raise ValueError("max_merges must be >= 0")
    ids = list(text.encode("utf-8"))
    n = len(ids)
    curve = [len(ids) / n]
    for k in range(max_merges):
        counts = get_pair_counts(ids)
        if not counts:
            break
        pair = max(counts, key=counts.get)
        ids = merge_pair(ids, pair, 256 + k)
        curve.append(len(ids) / n)
    return curve


def merges_for_parity(text, target_ratio, tolerance=0.10, max_merges=20000):
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    if text == "":
        raise ValueError("text must not be empty")
    if type(target_ratio) not in (int, float):
        raise TypeError("target_ratio must be a number")
    if not target_ratio > 0:
        raise ValueError("target_ratio must be > 0")
    if type(tolerance) not in (int, float):
        raise TypeError("tolerance must be a number")
    if not 0 < tolerance < 1:
        raise ValueError("tolerance must be strictly between 0 and 1")
    curve = ratio_curve(text, max_merges)
    for k, ratio in enumerate(curve):
        if ratio <= target_ratio * (1 + tolerance):
            return k
    raise ValueError(f"target_ratio {target_ratio} not reached within max_merges={max_merges} merges")
