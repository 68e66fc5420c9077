"""Exercise 3, written the naive way: recount units and pairs before every merge."""

import re
from collections import Counter

WORD_PATTERN = r"\w+|[^\w\s]"


def wordpiece_score(pair_count, left_count, right_count):
    for name, value in (("pair_count", pair_count), ("left_count", left_count), ("right_count", right_count)):
        if type(value) is not int:
            raise TypeError(f"{name} must be an int")
    if pair_count < 0:
        raise ValueError("pair_count must be >= 0")
    if left_count < 1:
        raise ValueError("left_count must be >= 1")
    if right_count < 1:
        raise ValueError("right_count must be >= 1")
    return pair_count / (left_count * right_count)


def word_units(word):
    if not isinstance(word, str):
        raise TypeError("word must be a str")
    units = []
    for i, ch in enumerate(word):
        units.append(ch if i == 0 else "##" + ch)
    return units


def _train(text, num_merges, wordpiece):
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    if type(num_merges) is not int:
        raise TypeError("num_merges must be an int")
    if num_merges < 0:
        raise ValueError("num_merges must be >= 0")
    freq = Counter(re.findall(WORD_PATTERN, text))
    split = {word: word_units(word) for word in freq}
    vocab = sorted({unit for units in split.values() for unit in units})
    for _ in range(num_merges):
        pairs, units = {}, Counter()
        for word, n in freq.items():
            for unit in split[word]:
                units[unit] += n
            for pair in zip(split[word], split[word][1:], strict=False):
                pairs[pair] = pairs.get(pair, 0) + n
        if not pairs:
            break
        if wordpiece:
            best = max(pairs, key=lambda p: (wordpiece_score(pairs[p], units[p[0]], units[p[1]]), pairs[p]))
        else:
            best = max(pairs, key=pairs.get)
        new = best[0] + best[1][2:] if best[1].startswith("##") else best[0] + best[1]
        vocab.append(new)
        for word in split:
            old, out, i = split[word], [], 0
            while i < len(old):
                if i + 1 < len(old) and (old[i], old[i + 1]) == best:
                    out.append(new)
                    i += 2
                else:
                    out.append(old[i])
                    i += 1
            split[word] = out
    return vocab


def train_wordpiece(text, num_merges):
    return _train(text, num_merges, wordpiece=True)


def train_bpe_pieces(text, num_merges):
    return _train(text, num_merges, wordpiece=False)


def tokenize_wordpiece(vocab, text, unk="[UNK]", max_chars=100):
    if not isinstance(vocab, list) or not all(isinstance(t, str) for t in vocab):
        raise TypeError("vocab must be a list of str")
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    if not isinstance(unk, str):
        raise TypeError("unk must be a str")
    if type(max_chars) is not int:
        raise TypeError("max_chars must be an int")
    if max_chars < 1:
        raise ValueError("max_chars must be >= 1")
    known = set(vocab)
    out = []
    for word in re.findall(WORD_PATTERN, text):
        if len(word) > max_chars:
            out.append(unk)
            continue
        pieces, start, ok = [], 0, True
        while start < len(word):
            end = len(word)
            found = None
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in known:
                    found = piece
                    break
                end -= 1
            if found is None:
                ok = False
                break
            pieces.append(found)
            start = end
        out.extend(pieces if ok else [unk])
    return out


def compare_vocabularies(a, b):
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, list) or not all(isinstance(t, str) for t in v):
            raise TypeError(f"{name} must be a list of str")
    sa, sb = set(a), set(b)

    def mean(s):
        return sum(len(t[2:]) if t.startswith("##") else len(t) for t in s) / len(s) if s else 0.0

    return {
        "shared": len(sa & sb),
        "only_a": sorted(sa - sb),
        "only_b": sorted(sb - sa),
        "jaccard": len(sa & sb) / len(sa | sb) if sa | sb else 0.0,
        "mean_len_a": mean(sa),
        "mean_len_b": mean(sb),
    }
