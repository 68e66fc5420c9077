"""Deliberately naive implementations straight from the spec, used as test oracles.

Slow on purpose: every merge recounts every pair with a ``Counter`` walked left to right and
picks ``max`` by count, so ties go to the first pair the walk met. No validation.
"""

import re
from collections import Counter

SPECIALS = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
PRETOKEN = r" ?\S+|\s+(?!\S)|\s+"
WORD = r"\w+|[^\w\s]"


def pair_counts(seqs):
    """``seqs`` is a list of (symbols, weight); every adjacent pair, weighted."""
    counts = Counter()
    for symbols, weight in seqs:
        for pair in zip(symbols, symbols[1:], strict=False):
            counts[pair] += weight
    return counts


def merge(symbols, pair, new):
    out, i = [], 0
    while i < len(symbols):
        if symbols[i : i + 2] == list(pair):
            out.append(new)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def bpe(seqs, num_merges, new_symbol):
    """Return [(pair, new, count, total weighted length after the merge)]."""
    seqs = [(list(s), w) for s, w in seqs]
    out = []
    for k in range(num_merges):
        counts = pair_counts(seqs)
        if not counts:
            break
        pair = max(counts, key=counts.get)
        new = new_symbol(k, pair)
        seqs = [(merge(s, pair, new), w) for s, w in seqs]
        out.append((pair, new, counts[pair], sum(len(s) * w for s, w in seqs)))
    return out


# ---- exercise 1
def trace_merges(text, num_merges):
    vocab = {i: bytes([i]) for i in range(256)}
    steps = []
    for rank, (pair, new, count, length) in enumerate(
        bpe([(list(text.encode()), 1)], num_merges, lambda k, p: 256 + k)
    ):
        vocab[new] = vocab[pair[0]] + vocab[pair[1]]
        steps.append((rank, pair, new, count, vocab[new], length))
    return steps


def trace_word_merges(word_counts, num_merges):
    seqs = [(list(w), c) for w, c in word_counts.items()]
    return [(p, c) for p, _, c, _ in bpe(seqs, num_merges, lambda k, p: p[0] + p[1])]


# ---- exercise 2
def split_specials(text, specials):
    """Alternate [text, special, text, ...], longest special first."""
    if not specials:
        return [text]
    alternatives = sorted(specials, key=len, reverse=True)
    return re.split("(" + "|".join(map(re.escape, alternatives)) + ")", text)


def train_special(text, num_merges):
    """Return the merges {pair: id} of the special-token tokenizer."""
    chunks = split_specials(text, SPECIALS)[::2]
    freq = Counter(p for chunk in chunks for p in re.findall(PRETOKEN, chunk))
    seqs = [([b + 3 for b in p.encode()], n) for p, n in freq.items()]
    return {pair: new for pair, new, _, _ in bpe(seqs, num_merges, lambda k, p: 259 + k)}


def encode_special(merges, text, allowed=SPECIALS, add_eos=False):
    ids = []
    for i, part in enumerate(split_specials(text, allowed)):
        if i % 2:
            ids.append(SPECIALS[part])
            continue
        for piece in re.findall(PRETOKEN, part):
            seq = [b + 3 for b in piece.encode()]
            while len(seq) > 1:
                pair = min(zip(seq, seq[1:], strict=False), key=lambda p: merges.get(p, float("inf")))
                if pair not in merges:
                    break
                seq = merge(seq, pair, merges[pair])
            ids += seq
    return ids + [1] * add_eos


def decode_special(merges, ids):
    vocab = {b + 3: bytes([b]) for b in range(256)}
    vocab.update({i: s.encode() for s, i in SPECIALS.items()})
    for (a, b), new in sorted(merges.items(), key=lambda kv: kv[1]):
        vocab[new] = vocab[a] + vocab[b]
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")


# ---- exercise 3
def units(word):
    return [c if i == 0 else "##" + c for i, c in enumerate(word)]


def join(a, b):
    return a + b.removeprefix("##")


def wordpiece_words(text):
    return [(units(w), c) for w, c in Counter(re.findall(WORD, text)).items()]


def train_wordpiece(text, num_merges):
    seqs = wordpiece_words(text)
    vocab = sorted({u for s, _ in seqs for u in s})
    for _ in range(num_merges):
        pairs = pair_counts(seqs)
        if not pairs:
            break
        unit = Counter()
        for s, w in seqs:
            for u in s:
                unit[u] += w
        order = list(pairs)
        pair = min(
            pairs,
            key=lambda p: (-pairs[p] / (unit[p[0]] * unit[p[1]]), -pairs[p], order.index(p)),
        )
        vocab.append(join(*pair))
        seqs = [(merge(s, pair, join(*pair)), w) for s, w in seqs]
    return vocab


def train_bpe_pieces(text, num_merges):
    seqs = wordpiece_words(text)
    vocab = sorted({u for s, _ in seqs for u in s})
    return vocab + [new for _, new, _, _ in bpe(seqs, num_merges, lambda k, p: join(*p))]


def tokenize_wordpiece(vocab, text, unk="[UNK]", max_chars=100):
    out = []
    for word in re.findall(WORD, text):
        pieces, start = [], 0
        while start < len(word) and len(word) <= max_chars:
            for end in range(len(word), start, -1):
                piece = ("##" if start else "") + word[start:end]
                if piece in vocab:
                    pieces.append(piece)
                    start = end
                    break
            else:
                break
        out += pieces if start == len(word) and len(word) <= max_chars else [unk]
    return out


# ---- exercise 5
def ratio_curve(text, max_merges):
    data = list(text.encode())
    steps = bpe([(data, 1)], max_merges, lambda k, p: 256 + k)
    return [1.0] + [length / len(data) for *_, length in steps]


def merges_for_parity(text, target_ratio, tolerance=0.10, max_merges=20000):
    for k, r in enumerate(ratio_curve(text, max_merges)):
        if r <= target_ratio * (1 + tolerance):
            return k
    raise ValueError("not reached")
