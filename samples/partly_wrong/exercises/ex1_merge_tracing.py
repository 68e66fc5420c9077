"""Exercise 1, as a student might hand it in: right in most places, with one slip."""

from typing import NamedTuple

from exercises.lesson import get_pair_counts as lesson_pair_counts
from exercises.lesson import merge_pair as lesson_merge_pair


class MergeStep(NamedTuple):
    rank: int
    pair: tuple[int, int]
    new_id: int
    count: int
    token: bytes
    length: int


def get_pair_counts(ids):
    if not isinstance(ids, list) or not all(type(i) is int for i in ids):
        raise TypeError("ids must be a list of ints")
    return dict(lesson_pair_counts(ids))


def merge_pair(ids, pair, new_id):
    if not isinstance(ids, list):
        raise TypeError("ids must be a list")
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise TypeError("pair must be a tuple of two ints")
    if type(new_id) is not int:
        raise TypeError("new_id must be an int")
    return lesson_merge_pair(ids, pair, new_id)


def trace_merges(text, num_merges):
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    if type(num_merges) is not int:
        raise TypeError("num_merges must be an int")
    if num_merges < 0:
        raise ValueError("num_merges must be >= 0")
    ids = list(text.encode("utf-8"))
    vocab = {i: bytes([i]) for i in range(256)}
    steps = []
    for rank in range(num_merges):
        counts = get_pair_counts(ids)
        if not counts:
            break
        pair = max(counts, key=counts.get)
        new_id = 256 + rank
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        steps.append(MergeStep(rank, pair, new_id, counts[pair], vocab[new_id], len(ids)))  # slip: length before
        ids = merge_pair(ids, pair, new_id)
    return steps


def token_tree(steps, token_id):
    made = {step[2]: step[1] for step in steps}  # steps may be plain tuples
    if type(token_id) is not int:
        raise TypeError("token_id must be an int")
    if 0 <= token_id < 256:
        return token_id
    if token_id not in made:
        raise ValueError(f"token_id {token_id} is neither a byte nor made by steps")
    left, right = made[token_id]
    return (token_tree(steps, left), token_tree(steps, right))


def render_trace(steps):
    vocab = {i: bytes([i]) for i in range(256)}
    lines = []
    for rank, (left, right), new_id, count, token, length in steps:
        vocab[new_id] = token

        def show(b):
            return repr(b.decode("utf-8", errors="replace"))

        lines.append(f"{rank}: {show(vocab[left])} + {show(vocab[right])} -> {show(token)}  "
                     f"count={count}  length={length}")
    return "\n".join(lines)


def trace_word_merges(word_counts, num_merges):
    words = {word: list(word) for word in word_counts}
    merges = []
    for _ in range(num_merges):
        counts = {}
        for word, count in word_counts.items():
            symbols = words[word]
            for pair in zip(symbols, symbols[1:], strict=False):
                counts[pair] = counts.get(pair, 0) + count
        if not counts:
            break
        best = max(counts, key=counts.get)
        merges.append((best, counts[best]))
        for word, symbols in words.items():
            merged, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            words[word] = merged
    return merges
