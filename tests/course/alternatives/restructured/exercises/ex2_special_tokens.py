"""Exercise 2 with a different structure: the vocabulary is a list of byte strings indexed by
id, the merges a ranked list applied one after the other when encoding."""

import re
from collections import Counter

from ._pairs import most_frequent, replace

SPECIAL_TOKENS = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
PRETOKEN_PATTERN = r" ?\S+|\s+(?!\S)|\s+"


def pretokenize(text):
    if type(text) is not str:
        raise TypeError("text must be a str")
    return [m.group(0) for m in re.finditer(PRETOKEN_PATTERN, text)]


def _pieces(text, specials):
    """Yield (is_special, string) in order."""
    if not specials:
        yield False, text
        return
    pattern = re.compile("|".join(re.escape(s) for s in sorted(specials, key=lambda s: -len(s))))
    at = 0
    for match in pattern.finditer(text):
        yield False, text[at:match.start()]
        yield True, match.group(0)
        at = match.end()
    yield False, text[at:]


class SpecialTokenizer:
    def __init__(self):
        self._forget()

    def _forget(self):
        self.table = [s.encode("utf-8") for s in SPECIAL_TOKENS] + [bytes([b]) for b in range(256)]
        self.ranked = []  # [(pair, new_id)] in the order learned
        self.lookup = {}
        for i in range(3, len(self.table)):
            self.lookup.setdefault(self.table[i], i)

    def train(self, text, num_merges):
        if type(text) is not str:
            raise TypeError("text must be a str")
        if type(num_merges) is not int:
            raise TypeError("num_merges must be an int")
        if num_merges < 0:
            raise ValueError("num_merges must be >= 0")
        self._forget()
        counted = Counter()
        for special, part in _pieces(text, SPECIAL_TOKENS):
            if not special:
                counted.update(pretokenize(part))
        sequences = [([b + 3 for b in piece.encode("utf-8")], n) for piece, n in counted.items()]
        for _ in range(num_merges):
            pair, _count = most_frequent(sequences)
            if pair is None:
                break
            new_id = len(self.table)
            self.table.append(self.table[pair[0]] + self.table[pair[1]])
            self.ranked.append((pair, new_id))
            if self.table[new_id] not in self.lookup:
                self.lookup[self.table[new_id]] = new_id
            sequences = [(replace(ids, pair, new_id), n) for ids, n in sequences]
        return self

    @property
    def vocab_size(self):
        return len(self.table)

    def encode(self, text, allowed_special="all", add_eos=False):
        if type(text) is not str:
            raise TypeError("text must be a str")
        if type(allowed_special) is str:
            if allowed_special not in ("all", "none"):
                raise ValueError("allowed_special must be 'all', 'none' or a collection")
            allowed = set(SPECIAL_TOKENS) if allowed_special == "all" else set()
        elif type(allowed_special) in (set, list, tuple, frozenset):
            if any(type(s) is not str for s in allowed_special):
                raise TypeError("allowed_special must hold strings")
            allowed = set(allowed_special)
            if allowed - set(SPECIAL_TOKENS):
                raise ValueError("allowed_special holds a string that is not a special token")
        else:
            raise TypeError("allowed_special must be 'all', 'none' or a collection")
        if type(add_eos) is not bool:
            raise TypeError("add_eos must be a bool")
        ids = []
        for special, part in _pieces(text, allowed):
            if special:
                ids.append(SPECIAL_TOKENS[part])
                continue
            for piece in pretokenize(part):
                seq = [b + 3 for b in piece.encode("utf-8")]
                for pair, new_id in self.ranked:  # rank order: first learned, first applied
                    if len(seq) < 2:
                        break
                    seq = replace(seq, pair, new_id)
                ids += seq
        return ids + [1] if add_eos else ids

    def decode(self, ids):
        if type(ids) is not list or any(type(i) is not int for i in ids):
            raise TypeError("ids must be a list of ints")
        data = bytearray()
        for i in ids:
            if i < 0 or i >= len(self.table):
                raise ValueError(f"ids: {i} is not in 0 .. {len(self.table) - 1}")
            data += self.table[i]
        return bytes(data).decode("utf-8", errors="replace")

    def token_to_id(self, piece):
        if type(piece) is not str:
            raise TypeError("piece must be a str")
        return SPECIAL_TOKENS.get(piece, self.lookup.get(piece.encode("utf-8"), 2))

    def id_to_token(self, i):
        if type(i) is not int:
            raise TypeError("i must be an int")
        if not 0 <= i < len(self.table):
            raise ValueError(f"i is outside the vocabulary: {i}")
        return self.table[i].decode("utf-8", errors="replace")

    def pad_batch(self, batch, length=None):
        if type(batch) is not list or any(type(r) is not list or any(type(x) is not int for x in r) for r in batch):
            raise TypeError("batch must be a list of lists of ints")
        if length is not None and type(length) is not int:
            raise TypeError("length must be an int or None")
        if not batch:
            return ([], [])
        width = max(map(len, batch)) if length is None else length
        if width < 0 or any(len(r) > width for r in batch):
            raise ValueError("length: a sequence is longer than the length")
        padded, mask = [], []
        for row in batch:
            gap = width - len(row)
            padded.append(list(row) + [0] * gap)
            mask.append([1] * len(row) + [0] * gap)
        return (padded, mask)
