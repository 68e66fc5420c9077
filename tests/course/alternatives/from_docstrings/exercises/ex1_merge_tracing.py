"""Exercise 1 written from the docstrings alone."""

from typing import NamedTuple

from ._args import need_dict, need_int, need_list, need_str


class MergeStep(NamedTuple):
    rank: int
    pair: tuple[int, int]
    new_id: int
    count: int
    token: bytes
    length: int


def get_pair_counts(ids):
    need_list(ids, "ids", int)
    counts = {}
    for a, b in zip(ids, ids[1:], strict=False):
        counts[(a, b)] = counts.get((a, b), 0) + 1
    return counts


def _merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def merge_pair(ids, pair, new_id):
    need_list(ids, "ids", int)
    if type(pair) is not tuple or len(pair) != 2 or any(type(x) is not int for x in pair):
        raise TypeError(f"pair must be a tuple of two ints, got {pair!r}")
    need_int(new_id, "new_id")
    return _merge(ids, pair, new_id)


def trace_merges(text, num_merges):
    need_str(text, "text")
    need_int(num_merges, "num_merges", 0)
    ids = list(text.encode("utf-8"))
    vocab = {i: bytes([i]) for i in range(256)}
    steps = []
    for k in range(num_merges):
        counts = get_pair_counts(ids)
        if not counts:
            break
        pair = max(counts, key=counts.get)
        new_id = 256 + k
        ids = _merge(ids, pair, new_id)
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        steps.append(MergeStep(k, pair, new_id, counts[pair], vocab[new_id], len(ids)))
    return steps


def token_tree(steps, token_id):
    need_list(steps, "steps")
    need_int(token_id, "token_id")
    made = {step[2]: step[1] for step in steps}

    def tree(i):
        if 0 <= i < 256:
            return i
        if i not in made:
            raise ValueError(f"token_id: {i} is neither a byte nor made by a step")
        left, right = made[i]
        return (tree(left), tree(right))

    return tree(token_id)


def _shown(token):
    return repr(token.decode("utf-8", errors="replace"))


def render_trace(steps):
    need_list(steps, "steps")
    vocab = {i: bytes([i]) for i in range(256)}
    lines = []
    for step in steps:
        rank, (left, right), new_id, count, token, length = step
        if left not in vocab or right not in vocab:
            raise ValueError(f"steps: step {rank} merges an id no earlier step made")
        lines.append(f"{rank}: {_shown(vocab[left])} + {_shown(vocab[right])} -> {_shown(token)}"
                     f"  count={count}  length={length}")
        vocab[new_id] = token
    return "\n".join(lines)


def trace_word_merges(word_counts, num_merges):
    need_dict(word_counts, "word_counts", str, (int,))
    if any(n < 1 for n in word_counts.values()):
        raise ValueError("word_counts: every count must be >= 1")
    need_int(num_merges, "num_merges", 0)
    words = [(list(word), n) for word, n in word_counts.items()]
    merges = []
    for _ in range(num_merges):
        counts = {}
        for symbols, n in words:
            for pair in zip(symbols, symbols[1:], strict=False):
                counts[pair] = counts.get(pair, 0) + n
        if not counts:
            break
        best = max(counts, key=counts.get)
        merges.append((best, counts[best]))
        words = [(_merge(symbols, best, best[0] + best[1]), n) for symbols, n in words]
    return merges
