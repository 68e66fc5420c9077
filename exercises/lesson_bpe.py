"""Step 2b of the lesson: byte-level BPE.

``BPETokenizer`` starts from the 256 bytes of UTF-8, so it encodes every text, and learns
merges with the operations of ``lesson_pairs``. ``lesson_vocabulary`` looks at how its
tokens are used.
"""

import math

from .lesson_pairs import get_pair_counts, merge_pair


class BPETokenizer:
    """Byte-level byte-pair encoding.

    Before training, the vocabulary is the 256 single bytes and there are no merges:

    >>> tok = BPETokenizer()
    >>> len(tok.vocab), tok.merges
    (256, {})
    >>> tok.encode("hi!")
    [104, 105, 33]

    Training learns merges from a text. In "the then there" the pairs ``t h`` and ``h e``
    both occur three times; ``t h`` comes first, so it is merged first:

    >>> tok = BPETokenizer().train("the then there", 2)
    >>> tok.merges
    {(116, 104): 256, (256, 101): 257}
    >>> tok.vocab[256], tok.vocab[257]
    (b'th', b'the')
    >>> tok.encode("the other")
    [257, 32, 111, 257, 114]
    >>> tok.decode([111, 257, 114])
    'other'

    Every text can be encoded, whatever its script, because every text is made of bytes:

    >>> tok.decode(tok.encode("θ 天 🙂")) == "θ 天 🙂"
    True

    A single id may hold only part of a character; alone, it decodes to the replacement
    character:

    >>> tok.decode([0xE5])
    '\ufffd'
    """

    def __init__(self):
        self.merges = {}  # (left id, right id) -> new id, in the order they were learned
        self.vocab = {i: bytes([i]) for i in range(256)}  # id -> the bytes it stands for

    def train(self, text, num_merges):
        """Learn up to ``num_merges`` merges from ``text``; return the tokenizer.

        Each step merges the most frequent adjacent pair (ties: the leftmost first
        occurrence). Training stops early when fewer than two tokens are left.

        >>> BPETokenizer().train("aaaa", 5).merges  # aaaa -> (aa)(aa) -> (aaaa), then stop
        {(97, 97): 256, (256, 256): 257}
        >>> BPETokenizer().train("abc", -1)
        Traceback (most recent call last):
        ...
        ValueError: num_merges must be >= 0, got -1
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not isinstance(num_merges, int):
            raise TypeError(f"num_merges must be an int, got {type(num_merges).__name__}")
        if num_merges < 0:
            raise ValueError(f"num_merges must be >= 0, got {num_merges}")
        merges = {}
        vocab = {i: bytes([i]) for i in range(256)}
        ids = list(text.encode("utf-8"))
        for k in range(num_merges):
            counts = get_pair_counts(ids)
            if not counts:  # fewer than two tokens: nothing left to merge
                break
            pair = max(counts, key=counts.get)  # ties: the pair counted first
            new_id = 256 + k
            ids = merge_pair(ids, pair, new_id)
            merges[pair] = new_id
            vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        self.merges, self.vocab = merges, vocab
        return self

    def encode(self, text):
        """The token ids of ``text``: its UTF-8 bytes, then the learned merges.

        Merges are applied in the order they were learned (their rank): at each step the
        pair present with the lowest rank is merged everywhere, until no learned pair
        is left.
        """
        ids = list(text.encode("utf-8"))
        while len(ids) >= 2:
            counts = get_pair_counts(ids)
            pair = min(counts, key=lambda p: self.merges.get(p, math.inf))
            if pair not in self.merges:  # no learned pair left in ids
                break
            ids = merge_pair(ids, pair, self.merges[pair])
        return ids

    def decode(self, ids):
        """The text spelled by ``ids``; invalid UTF-8 becomes the replacement character."""
        for i in ids:
            if i not in self.vocab:
                raise ValueError(f"ids: unknown token id {i!r}")
        data = b"".join(self.vocab[i] for i in ids)
        return data.decode("utf-8", errors="replace")
