"""Exercise 3 with a different structure: one trainer with a pluggable choice of pair, an
explicit comparison loop instead of max(), and a recursive greedy tokenizer."""

import re
from collections import Counter

from ._pairs import count_pairs, replace

WORD_PATTERN = r"\w+|[^\w\s]"


def _check_int(value, name, low):
    if type(value) is not int:
        raise TypeError(f"{name} must be an int")
    if value < low:
        raise ValueError(f"{name} must be >= {low}")


def wordpiece_score(pair_count, left_count, right_count):
    _check_int(pair_count, "pair_count", 0)
    _check_int(left_count, "left_count", 1)
    _check_int(right_count, "right_count", 1)
    product = left_count * right_count
    return pair_count / product


def word_units(word):
    if type(word) is not str:
        raise TypeError("word must be a str")
    return word[:1] and [word[0]] + ["##" + c for c in word[1:]] or []


def _merged(left, right):
    return left + (right[2:] if right[:2] == "##" else right)


def _choose_wordpiece(sequences, pairs):
    units = Counter()
    for symbols, weight in sequences:
        for unit in symbols:
            units[unit] += weight
    best, best_key = None, None
    for pair, count in pairs.items():  # first-occurrence order: keep the first of equal keys
        key = (wordpiece_score(count, units[pair[0]], units[pair[1]]), count)
        if best is None or key > best_key:
            best, best_key = pair, key
    return best


def _choose_bpe(sequences, pairs):
    best = None
    for pair, count in pairs.items():
        if best is None or count > pairs[best]:
            best = pair
    return best


def _train(text, num_merges, choose):
    if type(text) is not str:
        raise TypeError("text must be a str")
    _check_int(num_merges, "num_merges", 0)
    words = Counter(re.findall(WORD_PATTERN, text))
    sequences = [(word_units(w), n) for w, n in words.items()]
    vocabulary = sorted(set(u for units, _ in sequences for u in units))
    merged = []
    while len(merged) < num_merges:
        pairs = count_pairs(sequences)
        if not pairs:
            break
        pair = choose(sequences, pairs)
        token = _merged(*pair)
        merged.append(token)
        sequences = [(replace(units, pair, token), n) for units, n in sequences]
    return vocabulary + merged


def train_wordpiece(text, num_merges):
    return _train(text, num_merges, _choose_wordpiece)


def train_bpe_pieces(text, num_merges):
    return _train(text, num_merges, _choose_bpe)


def _greedy(known, word, start):
    """Pieces covering word[start:], longest first; None if impossible."""
    if start == len(word):
        return []
    prefix = "##" if start else ""
    for end in range(len(word), start, -1):
        if prefix + word[start:end] in known:
            rest = _greedy(known, word, end)
            return None if rest is None else [prefix + word[start:end]] + rest
    return None


def tokenize_wordpiece(vocab, text, unk="[UNK]", max_chars=100):
    if type(vocab) is not list or any(type(t) is not str for t in vocab):
        raise TypeError("vocab must be a list of str")
    if type(text) is not str:
        raise TypeError("text must be a str")
    if type(unk) is not str:
        raise TypeError("unk must be a str")
    _check_int(max_chars, "max_chars", 1)
    known = frozenset(vocab)
    result = []
    for word in re.findall(WORD_PATTERN, text):
        pieces = _greedy(known, word, 0) if len(word) <= max_chars else None
        result += [unk] if pieces is None else pieces
    return result


def compare_vocabularies(a, b):
    for name, vocab in (("a", a), ("b", b)):
        if type(vocab) is not list or any(type(t) is not str for t in vocab):
            raise TypeError(f"{name} must be a list of str")
    A, B = frozenset(a), frozenset(b)
    both, either = A & B, A | B

    def mean_len(tokens):
        lengths = [len(t) - 2 if t.startswith("##") else len(t) for t in tokens]
        return sum(lengths) / len(lengths) if lengths else 0.0

    return dict(shared=len(both), only_a=sorted(A - B), only_b=sorted(B - A),
                jaccard=(len(both) / len(either)) if either else 0.0,
                mean_len_a=mean_len(A), mean_len_b=mean_len(B))
