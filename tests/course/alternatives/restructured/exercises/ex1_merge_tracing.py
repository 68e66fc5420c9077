"""Exercise 1 with a different structure: an explicit tie scan, trees built bottom-up, and a
differently laid out trace."""

from typing import NamedTuple

from ._pairs import count_pairs, most_frequent, replace


class MergeStep(NamedTuple):
    rank: int
    pair: tuple[int, int]
    new_id: int
    count: int
    token: bytes
    length: int


def _ints(value, name):
    if type(value) is not list:
        raise TypeError(f"{name} must be a list of ints, got {type(value).__name__}")
    for item in value:
        if type(item) is not int:
            raise TypeError(f"{name} must hold ints only")


def get_pair_counts(ids):
    _ints(ids, "ids")
    return count_pairs([(ids, 1)])


def merge_pair(ids, pair, new_id):
    _ints(ids, "ids")
    if type(pair) is not tuple or len(pair) != 2 or any(type(x) is not int for x in pair):
        raise TypeError("pair must be a tuple of two ints")
    if type(new_id) is not int:
        raise TypeError("new_id must be an int")
    return replace(ids, pair, new_id)


def trace_merges(text, num_merges):
    if type(text) is not str:
        raise TypeError("text must be a str")
    if type(num_merges) is not int:
        raise TypeError("num_merges must be an int")
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    ids = list(text.encode("utf-8"))
    tokens = [bytes([b]) for b in range(256)]
    steps = []
    while len(steps) < num_merges:
        pair, count = most_frequent([(ids, 1)])
        if pair is None:
            break
        new_id = len(tokens)
        tokens.append(tokens[pair[0]] + tokens[pair[1]])
        ids = replace(ids, pair, new_id)
        steps.append(MergeStep(rank=len(steps), pair=pair, new_id=new_id, count=count,
                               token=tokens[new_id], length=len(ids)))
    return steps


def token_tree(steps, token_id):
    if type(steps) is not list:
        raise TypeError("steps must be a list of MergeStep")
    if type(token_id) is not int:
        raise TypeError("token_id must be an int")
    trees = {b: b for b in range(256)}
    for step in steps:  # bottom-up: a step's parts were made before it
        left, right = step[1]
        if left in trees and right in trees:
            trees[step[2]] = (trees[left], trees[right])
    if token_id not in trees:
        raise ValueError(f"token_id {token_id} is neither a byte nor made by the steps")
    return trees[token_id]


def render_trace(steps):
    if type(steps) is not list:
        raise TypeError("steps must be a list")
    known = {b: bytes([b]) for b in range(256)}
    out = []
    for step in steps:
        rank, (left, right), new_id, count, token, length = step
        if left not in known or right not in known:
            raise ValueError("steps: a pair holds an id that no earlier step made")
        known[new_id] = token
        text = [repr(known[i].decode("utf-8", errors="replace")) for i in (left, right, new_id)]
        out.append(f"merge #{rank} | {text[0]} ({left}) with {text[1]} ({right}) => {text[2]} ({new_id})"
                   f" | seen {count} times | sequence length now {length}")
    return "\n".join(out)


def trace_word_merges(word_counts, num_merges):
    if type(word_counts) is not dict or any(type(w) is not str or type(c) is not int for w, c in word_counts.items()):
        raise TypeError("word_counts must be a dict of str to int")
    if any(c < 1 for c in word_counts.values()):
        raise ValueError("word_counts: counts must be >= 1")
    if type(num_merges) is not int:
        raise TypeError("num_merges must be an int")
    if num_merges < 0:
        raise ValueError("num_merges must be >= 0")
    sequences = [(list(word), count) for word, count in word_counts.items()]
    history = []
    for _ in range(num_merges):
        pair, count = most_frequent(sequences)
        if pair is None:
            break
        sequences = [(replace(symbols, pair, pair[0] + pair[1]), weight) for symbols, weight in sequences]
        history.append((pair, count))
    return history
