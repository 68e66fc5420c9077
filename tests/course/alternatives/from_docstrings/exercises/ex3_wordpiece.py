"""Exercise 3 written from the docstrings alone."""

import re

from ._args import need_int, need_list, need_str

WORD_PATTERN = r"\w+|[^\w\s]"


def wordpiece_score(pair_count, left_count, right_count):
    need_int(pair_count, "pair_count", 0)
    need_int(left_count, "left_count", 1)
    need_int(right_count, "right_count", 1)
    return pair_count / (left_count * right_count)


def word_units(word):
    need_str(word, "word")
    return [ch if i == 0 else "##" + ch for i, ch in enumerate(word)]


def _words(text):
    counts = {}
    for word in re.findall(WORD_PATTERN, text):
        counts[word] = counts.get(word, 0) + 1
    return [(word_units(word), n) for word, n in counts.items()]


def _join(a, b):
    return a + b.removeprefix("##")


def _replace(units, pair, merged):
    out, i = [], 0
    while i < len(units):
        if i + 1 < len(units) and (units[i], units[i + 1]) == pair:
            out.append(merged)
            i += 2
        else:
            out.append(units[i])
            i += 1
    return out


def _train(text, num_merges, wordpiece):
    need_str(text, "text")
    need_int(num_merges, "num_merges", 0)
    words = _words(text)
    vocab = sorted({unit for units, _ in words for unit in units})
    for _ in range(num_merges):
        pairs, units_seen = {}, {}
        for units, n in words:
            for unit in units:
                units_seen[unit] = units_seen.get(unit, 0) + n
            for pair in zip(units, units[1:], strict=False):
                pairs[pair] = pairs.get(pair, 0) + n
        if not pairs:
            break
        if wordpiece:
            best = max(pairs, key=lambda p: (wordpiece_score(pairs[p], units_seen[p[0]], units_seen[p[1]]), pairs[p]))
        else:
            best = max(pairs, key=pairs.get)
        merged = _join(*best)
        vocab.append(merged)
        words = [(_replace(units, best, merged), n) for units, n in words]
    return vocab


def train_wordpiece(text, num_merges):
    return _train(text, num_merges, wordpiece=True)


def train_bpe_pieces(text, num_merges):
    return _train(text, num_merges, wordpiece=False)


def _split_word(word, vocab, unk, max_chars):
    if len(word) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return [unk]
    return pieces


def tokenize_wordpiece(vocab, text, unk="[UNK]", max_chars=100):
    known = set(need_list(vocab, "vocab", str))
    need_str(text, "text")
    need_str(unk, "unk")
    need_int(max_chars, "max_chars", 1)
    tokens = []
    for word in re.findall(WORD_PATTERN, text):
        tokens += _split_word(word, known, unk, max_chars)
    return tokens


def _mean_len(tokens):
    return sum(len(t.removeprefix("##")) for t in tokens) / len(tokens) if tokens else 0.0


def compare_vocabularies(a, b):
    set_a = set(need_list(a, "a", str))
    set_b = set(need_list(b, "b", str))
    union = set_a | set_b
    return {
        "shared": len(set_a & set_b),
        "only_a": sorted(set_a - set_b),
        "only_b": sorted(set_b - set_a),
        "jaccard": len(set_a & set_b) / len(union) if union else 0.0,
        "mean_len_a": _mean_len(set_a),
        "mean_len_b": _mean_len(set_b),
    }
