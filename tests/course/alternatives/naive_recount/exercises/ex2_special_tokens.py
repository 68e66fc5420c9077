"""Exercise 2, written the naive way: recount pairs over the distinct pre-tokens each step."""

import re
from collections import Counter

from .lesson import get_pair_counts, merge_pair

SPECIAL_TOKENS = {"<pad>": 0, "<eos>": 1, "<unk>": 2}

PRETOKEN_PATTERN = r" ?\S+|\s+(?!\S)|\s+"


def pretokenize(text):
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    return re.findall(PRETOKEN_PATTERN, text)


def _split(text, specials):
    """[ordinary, special, ordinary, ...]"""
    if not specials:
        return [text]
    pattern = "|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True))
    return re.split(f"({pattern})", text)


class SpecialTokenizer:
    def __init__(self):
        self.merges = {}
        self.vocab = {}

    def train(self, text, num_merges):
        if not isinstance(text, str):
            raise TypeError("text must be a str")
        if type(num_merges) is not int:
            raise TypeError("num_merges must be an int")
        if num_merges < 0:
            raise ValueError("num_merges must be >= 0")
        pieces = Counter()
        for i, part in enumerate(_split(text, SPECIAL_TOKENS)):
            if i % 2 == 0:
                pieces.update(pretokenize(part))
        seqs = {piece: [b + 3 for b in piece.encode("utf-8")] for piece in pieces}
        self.merges, self.vocab = {}, {}
        for k in range(num_merges):
            counts = {}
            for piece, ids in seqs.items():
                for pair, n in get_pair_counts(ids).items():
                    counts[pair] = counts.get(pair, 0) + n * pieces[piece]
            if not counts:
                break
            pair = max(counts, key=counts.get)
            new_id = 259 + k
            self.merges[pair] = new_id
            self.vocab[new_id] = self._bytes(pair[0]) + self._bytes(pair[1])
            seqs = {piece: merge_pair(ids, pair, new_id) for piece, ids in seqs.items()}
        return self

    def _bytes(self, i):
        if i < 3:
            return list(SPECIAL_TOKENS)[i].encode("utf-8")
        if i < 259:
            return bytes([i - 3])
        return self.vocab[i]

    @property
    def vocab_size(self):
        return 259 + len(self.merges)

    def encode(self, text, allowed_special="all", add_eos=False):
        if not isinstance(text, str):
            raise TypeError("text must be a str")
        if allowed_special == "all":
            allowed = set(SPECIAL_TOKENS)
        elif allowed_special == "none":
            allowed = set()
        elif isinstance(allowed_special, str):
            raise ValueError("allowed_special must be 'all', 'none' or a collection of special tokens")
        elif isinstance(allowed_special, (set, frozenset, list, tuple)):
            if not all(isinstance(s, str) for s in allowed_special):
                raise TypeError("allowed_special must hold strings")
            allowed = set(allowed_special)
            if not allowed <= set(SPECIAL_TOKENS):
                raise ValueError("allowed_special may only hold special-token strings")
        else:
            raise TypeError("allowed_special must be 'all', 'none', a set (or frozenset), a list or a tuple")
        if not isinstance(add_eos, bool):
            raise TypeError("add_eos must be a bool")
        out = []
        for i, part in enumerate(_split(text, allowed)):
            if i % 2 == 1:
                out.append(SPECIAL_TOKENS[part])
                continue
            for piece in pretokenize(part):
                ids = [b + 3 for b in piece.encode("utf-8")]
                while len(ids) >= 2:
                    counts = get_pair_counts(ids)
                    pair = min(counts, key=lambda p: self.merges.get(p, float("inf")))
                    if pair not in self.merges:
                        break
                    ids = merge_pair(ids, pair, self.merges[pair])
                out.extend(ids)
        if add_eos:
            out.append(1)
        return out

    def decode(self, ids):
        if not isinstance(ids, list) or not all(type(i) is int for i in ids):
            raise TypeError("ids must be a list of ints")
        for i in ids:
            if not 0 <= i < self.vocab_size:
                raise ValueError(f"ids: {i} is outside the vocabulary")
        return b"".join(self._bytes(i) for i in ids).decode("utf-8", errors="replace")

    def token_to_id(self, piece):
        if not isinstance(piece, str):
            raise TypeError("piece must be a str")
        if piece in SPECIAL_TOKENS:
            return SPECIAL_TOKENS[piece]
        data = piece.encode("utf-8")
        for i in range(3, self.vocab_size):
            if self._bytes(i) == data:
                return i
        return 2

    def id_to_token(self, i):
        if type(i) is not int:
            raise TypeError("i must be an int")
        if not 0 <= i < self.vocab_size:
            raise ValueError(f"i must be in 0 .. {self.vocab_size - 1}, got {i}")
        return self.decode([i])

    def pad_batch(self, batch, length=None):
        if not isinstance(batch, list) or not all(isinstance(row, list) and all(type(i) is int for i in row)
                                                  for row in batch):
            raise TypeError("batch must be a list of lists of ints")
        if not batch:
            return [], []
        if length is None:
            length = max(len(row) for row in batch)
        if type(length) is not int:
            raise TypeError("length must be an int or None")
        if length < 0 or any(len(row) > length for row in batch):
            raise ValueError("length is shorter than a sequence")
        ids = [row + [0] * (length - len(row)) for row in batch]
        mask = [[1] * len(row) + [0] * (length - len(row)) for row in batch]
        return ids, mask
