"""Exercise 1, written the naive way: recount all pairs before every merge."""

from collections import Counter
from typing import NamedTuple


class MergeStep(NamedTuple):
    rank: int
    pair: tuple[int, int]
    new_id: int
    count: int
    token: bytes
    length: int


def _check_int_list(value, name):
    if not isinstance(value, list) or not all(type(x) is int for x in value):
        raise TypeError(f"{name} must be a list of ints")


def get_pair_counts(ids):
    _check_int_list(ids, "ids")
    return Counter(zip(ids, ids[1:], strict=False))


def merge_pair(ids, pair, new_id):
    _check_int_list(ids, "ids")
    if not isinstance(pair, tuple) or len(pair) != 2 or not all(type(x) is int for x in pair):
        raise TypeError("pair must be a tuple of two ints")
    if type(new_id) is not int:
        raise TypeError("new_id must be an int")
    out = []
    i = 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i = i + 2
        else:
            out.append(ids[i])
            i = i + 1
    return out


def trace_merges(text, num_merges):
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    if type(num_merges) is not int:
        raise TypeError("num_merges must be an int")
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    ids = list(text.encode("utf-8"))
    vocab = {i: bytes([i]) for i in range(256)}
    steps = []
    for k in range(num_merges):
        counts = get_pair_counts(ids)
        if len(counts) == 0:
            break
        pair = max(counts, key=counts.get)
        new_id = 256 + k
        ids = merge_pair(ids, pair, new_id)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        steps.append(MergeStep(k, pair, new_id, counts[pair], vocab[new_id], len(ids)))
    return steps


def token_tree(steps, token_id):
    if not isinstance(steps, list):
        raise TypeError("steps must be a list")
    if type(token_id) is not int:
        raise TypeError("token_id must be an int")
    made = {}
    for step in steps:
        made[step[2]] = step[1]
    if 0 <= token_id <= 255:
        return token_id
    if token_id not in made:
        raise ValueError(f"token_id {token_id} is not a byte and no step made it")
    left, right = made[token_id]
    return (token_tree(steps, left), token_tree(steps, right))


def render_trace(steps):
    if not isinstance(steps, list):
        raise TypeError("steps must be a list")
    vocab = {i: bytes([i]) for i in range(256)}
    lines = []
    for rank, pair, new_id, count, token, length in steps:
        if pair[0] not in vocab or pair[1] not in vocab:
            raise ValueError("steps: a pair uses an unknown id")
        vocab[new_id] = token
        left = repr(vocab[pair[0]].decode("utf-8", errors="replace"))
        right = repr(vocab[pair[1]].decode("utf-8", errors="replace"))
        new = repr(token.decode("utf-8", errors="replace"))
        lines.append(f"{rank}: {left} + {right} -> {new}  count={count}  length={length}")
    return "\n".join(lines)


def trace_word_merges(word_counts, num_merges):
    if not isinstance(word_counts, dict):
        raise TypeError("word_counts must be a dict")
    if not all(isinstance(word, str) and type(count) is int for word, count in word_counts.items()):
        raise TypeError("word_counts must map str to int")
    if any(count < 1 for count in word_counts.values()):
        raise ValueError("word_counts: every count must be at least 1")
    if type(num_merges) is not int:
        raise TypeError("num_merges must be an int")
    if num_merges < 0:
        raise ValueError("num_merges must be >= 0")
    words = [[list(word), count] for word, count in word_counts.items()]
    result = []
    for _ in range(num_merges):
        counts = {}
        for symbols, count in words:
            for pair in zip(symbols, symbols[1:], strict=False):
                counts[pair] = counts.get(pair, 0) + count
        if not counts:
            break
        best = max(counts, key=counts.get)
        for entry in words:
            symbols, out, i = entry[0], [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            entry[0] = out
        result.append((best, counts[best]))
    return result
