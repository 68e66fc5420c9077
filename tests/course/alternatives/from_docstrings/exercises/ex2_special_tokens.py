"""Exercise 2 written from the docstrings alone."""

import re

from ._args import need_int, need_list, need_str

SPECIAL_TOKENS = {"<pad>": 0, "<eos>": 1, "<unk>": 2}

PRETOKEN_PATTERN = r" ?\S+|\s+(?!\S)|\s+"


def pretokenize(text):
    return re.findall(PRETOKEN_PATTERN, need_str(text, "text"))


def _cut(text, specials):
    """``text`` as alternating ordinary text and special-token strings (even, odd indices)."""
    if not specials:
        return [text]
    longest_first = sorted(specials, key=len, reverse=True)
    return re.split("(" + "|".join(map(re.escape, longest_first)) + ")", text)


def _merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if ids[i:i + 2] == list(pair):
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _allowed(allowed_special):
    if type(allowed_special) is str:
        if allowed_special == "all":
            return set(SPECIAL_TOKENS)
        if allowed_special == "none":
            return set()
        raise ValueError(f'allowed_special must be "all" or "none", got {allowed_special!r}')
    if not isinstance(allowed_special, (set, frozenset, list, tuple)):
        raise TypeError(f"allowed_special must be a str, set, list or tuple, got {type(allowed_special).__name__}")
    if any(type(s) is not str for s in allowed_special):
        raise TypeError("allowed_special must hold only strings")
    unknown = [s for s in allowed_special if s not in SPECIAL_TOKENS]
    if unknown:
        raise ValueError(f"allowed_special holds {unknown!r}, which are not special tokens")
    return set(allowed_special)


class SpecialTokenizer:
    def __init__(self):
        self.merges = {}  # pair -> new id, in rank order
        self.tokens = {i: s.encode("utf-8") for s, i in SPECIAL_TOKENS.items()}
        self.tokens.update({b + 3: bytes([b]) for b in range(256)})

    def train(self, text, num_merges):
        need_str(text, "text")
        need_int(num_merges, "num_merges", 0)
        self.__init__()
        counts = {}
        for part in _cut(text, SPECIAL_TOKENS)[::2]:
            for piece in pretokenize(part):
                counts[piece] = counts.get(piece, 0) + 1
        sequences = [([b + 3 for b in piece.encode("utf-8")], n) for piece, n in counts.items()]
        for k in range(num_merges):
            pairs = {}
            for ids, n in sequences:
                for pair in zip(ids, ids[1:], strict=False):
                    pairs[pair] = pairs.get(pair, 0) + n
            if not pairs:
                break
            best = max(pairs, key=pairs.get)
            new_id = 259 + k
            self.merges[best] = new_id
            self.tokens[new_id] = self.tokens[best[0]] + self.tokens[best[1]]
            sequences = [(_merge(ids, best, new_id), n) for ids, n in sequences]
        return self

    def _encode_ordinary(self, text):
        out = []
        for piece in pretokenize(text):
            ids = [b + 3 for b in piece.encode("utf-8")]
            for pair, new_id in self.merges.items():
                ids = _merge(ids, pair, new_id)
            out += ids
        return out

    def encode(self, text, allowed_special="all", add_eos=False):
        need_str(text, "text")
        allowed = _allowed(allowed_special)
        if type(add_eos) is not bool:
            raise TypeError(f"add_eos must be True or False, got {add_eos!r}")
        ids = []
        for i, part in enumerate(_cut(text, allowed)):
            ids += [SPECIAL_TOKENS[part]] if i % 2 else self._encode_ordinary(part)
        if add_eos:
            ids.append(SPECIAL_TOKENS["<eos>"])
        return ids

    def decode(self, ids):
        need_list(ids, "ids", int)
        for i in ids:
            if i not in self.tokens:
                raise ValueError(f"ids holds {i}, outside 0 .. {self.vocab_size - 1}")
        return b"".join(self.tokens[i] for i in ids).decode("utf-8", errors="replace")

    @property
    def vocab_size(self):
        return 259 + len(self.merges)

    def token_to_id(self, piece):
        need_str(piece, "piece")
        if piece in SPECIAL_TOKENS:
            return SPECIAL_TOKENS[piece]
        data = piece.encode("utf-8")
        for i in range(3, self.vocab_size):
            if self.tokens[i] == data:
                return i
        return SPECIAL_TOKENS["<unk>"]

    def id_to_token(self, i):
        need_int(i, "i")
        if not 0 <= i < self.vocab_size:
            raise ValueError(f"i must be in 0 .. {self.vocab_size - 1}, got {i}")
        return self.decode([i])

    def pad_batch(self, batch, length=None):
        need_list(batch, "batch")
        for row in batch:
            need_list(row, "batch", int)
        longest = max((len(row) for row in batch), default=0)
        if length is None:
            length = longest
        need_int(length, "length", 0)
        if longest > length:
            raise ValueError(f"length {length} is shorter than a sequence of batch ({longest} ids)")
        ids = [row + [0] * (length - len(row)) for row in batch]
        mask = [[1] * len(row) + [0] * (length - len(row)) for row in batch]
        return ids, mask
