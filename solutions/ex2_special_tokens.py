"""Reference solution of exercise 2: special tokens and pre-tokenization.

Decisions where the spec is silent:

- The full signature is ``encode(text, allowed_special="all", add_eos=False)``.
  ``allowed_special`` is ``"all"``, ``"none"``, or a set / frozenset / list / tuple of
  special-token strings. Another string, or a collection holding a string that is not a
  special token, is a ``ValueError``; any other type, or a collection holding anything but
  strings, is a ``TypeError`` (both name ``allowed_special``, types checked first).
- Where special tokens overlap in the text, the longest one is matched first (then the
  leftmost, as a regular expression scans).
- ``train`` starts from scratch each time (earlier merges are dropped) and returns the
  tokenizer itself. A new tokenizer has no merges, so it encodes to plain byte ids.
- Encoding merges each pre-token in rank order: repeatedly the adjacent pair with the lowest
  merge id, until no pair of the pre-token has been learned (minbpe's ``encode``).
- ``decode`` joins the bytes of all ids (a special id gives its string's bytes) and decodes
  them once, so a character split over two ids still decodes.
- ``token_to_id`` checks the special-token strings first. If two merges ever produce the same
  bytes, the lower id wins. ``id_to_token`` decodes a token's bytes with U+FFFD for partial
  UTF-8, so for such tokens ``token_to_id(id_to_token(i))`` is ``2`` (``<unk>``).
- ``pad_batch``: an empty batch gives ``([], [])``; ``length`` must be a non-negative int;
  the returned lists are new lists.
"""

import re
from collections import Counter
from itertools import pairwise

from . import _bpe
from ._checks import check_ids, check_int, check_str

SPECIAL_TOKENS = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
PAD_ID, EOS_ID, UNK_ID = 0, 1, 2
_SPECIAL_BY_ID = {i: special for special, i in SPECIAL_TOKENS.items()}
BYTE_OFFSET = 3  # byte b has id b + 3
FIRST_MERGE_ID = BYTE_OFFSET + 256
PRETOKEN_PATTERN = r" ?\S+|\s+(?!\S)|\s+"


def pretokenize(text: str) -> list[str]:
    """Split ``text`` into pre-tokens: words keep one leading space, other whitespace stands
    alone; the pieces always join back to ``text``."""
    return re.findall(PRETOKEN_PATTERN, check_str(text, "text"))


def _split_specials(text: str, specials) -> list[str]:
    """Split ``text`` into ``[ordinary, special, ordinary, ...]`` on the given special-token
    strings, matching the longest first. With no specials the text is one ordinary part."""
    if not specials:
        return [text]
    longest_first = sorted(specials, key=lambda s: (-len(s), s))
    return re.split("(" + "|".join(map(re.escape, longest_first)) + ")", text)


def _allowed_specials(allowed_special) -> set[str]:
    """The special-token strings that ``allowed_special`` asks ``encode`` to recognise."""
    if isinstance(allowed_special, str):
        if allowed_special == "all":
            return set(SPECIAL_TOKENS)
        if allowed_special == "none":
            return set()
        raise ValueError(f'allowed_special must be "all", "none" or a set, got {allowed_special!r}')
    if not isinstance(allowed_special, (set, frozenset, list, tuple)):
        raise TypeError(
            f'allowed_special must be "all", "none" or a set of strings, '
            f"got {type(allowed_special).__name__}"
        )
    if not all(isinstance(s, str) for s in allowed_special):  # types before values
        raise TypeError(f"allowed_special must hold strings only, got {sorted(map(repr, allowed_special))}")
    unknown = [s for s in allowed_special if s not in SPECIAL_TOKENS]
    if unknown:
        raise ValueError(f"allowed_special holds strings that are not special tokens: {unknown!r}")
    return set(allowed_special)


class SpecialTokenizer:
    """Byte-level BPE with ``<pad>``, ``<eos>``, ``<unk>`` and pre-tokenization."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        """Forget every merge: the vocabulary is the 256 bytes (plus the special tokens)."""
        self.merges: dict[tuple[int, int], int] = {}
        self.vocab: dict[int, bytes] = {b + BYTE_OFFSET: bytes([b]) for b in range(256)}
        self._ids_by_bytes = {token: i for i, token in self.vocab.items()}

    def train(self, text: str, num_merges: int) -> "SpecialTokenizer":
        """Learn up to ``num_merges`` merges from ``text`` and return ``self``.

        Special-token strings are cut out of ``text`` first; pairs are counted inside each
        distinct pre-token, weighted by its frequency; ties go to the first occurrence walking
        the distinct pre-tokens in order of first appearance, each left to right.
        """
        check_str(text, "text")
        check_int(num_merges, "num_merges")
        ordinary = _split_specials(text, SPECIAL_TOKENS)[::2]
        freq = Counter(piece for part in ordinary for piece in pretokenize(part))
        words = [([b + BYTE_OFFSET for b in piece.encode("utf-8")], n) for piece, n in freq.items()]
        self._reset()
        for merge in _bpe.train(words, num_merges, lambda k, _pair: FIRST_MERGE_ID + k):
            left, right = merge.pair
            self.merges[merge.pair] = merge.symbol
            self.vocab[merge.symbol] = self.vocab[left] + self.vocab[right]
            self._ids_by_bytes.setdefault(self.vocab[merge.symbol], merge.symbol)
        return self

    @property
    def vocab_size(self) -> int:
        """``3 + 256 + number of merges learned``."""
        return len(SPECIAL_TOKENS) + len(self.vocab)

    def _encode_piece(self, piece: str) -> list[int]:
        """Encode one pre-token, applying the learned merges in rank order."""
        ids = [b + BYTE_OFFSET for b in piece.encode("utf-8")]
        while len(ids) >= 2:
            pair = min(pairwise(ids), key=lambda p: self.merges.get(p, float("inf")))
            if pair not in self.merges:
                break
            ids = _bpe.replace_pair(ids, pair, self.merges[pair])
        return ids

    def encode(self, text: str, allowed_special="all", add_eos: bool = False) -> list[int]:
        """Encode ``text``; the allowed special-token strings become their ids, everything
        else is pre-tokenized and merged. ``add_eos=True`` appends ``<eos>``."""
        check_str(text, "text")
        allowed = _allowed_specials(allowed_special)
        if not isinstance(add_eos, bool):
            raise TypeError(f"add_eos must be a bool, got {type(add_eos).__name__}")
        parts = _split_specials(text, allowed)
        ids: list[int] = []
        for i, part in enumerate(parts):
            if i % 2:
                ids.append(SPECIAL_TOKENS[part])
            else:
                for piece in pretokenize(part):
                    ids.extend(self._encode_piece(piece))
        if add_eos:
            ids.append(EOS_ID)
        return ids

    def _token_bytes(self, i: int) -> bytes:
        """The bytes of id ``i`` (a special id gives its string's bytes)."""
        if i in _SPECIAL_BY_ID:
            return _SPECIAL_BY_ID[i].encode("utf-8")
        if i not in self.vocab:
            raise ValueError(f"ids holds {i}, which is outside the vocabulary (size {self.vocab_size})")
        return self.vocab[i]

    def decode(self, ids: list[int]) -> str:
        """Decode ``ids`` to text; invalid UTF-8 becomes U+FFFD."""
        ids = check_ids(ids, "ids")
        return b"".join(self._token_bytes(i) for i in ids).decode("utf-8", errors="replace")

    def token_to_id(self, piece: str) -> int:
        """The id of a special token by its string, or of the token whose bytes are
        ``piece.encode("utf-8")``; ``2`` (``<unk>``) for anything else."""
        check_str(piece, "piece")
        if piece in SPECIAL_TOKENS:
            return SPECIAL_TOKENS[piece]
        return self._ids_by_bytes.get(piece.encode("utf-8"), UNK_ID)

    def id_to_token(self, i: int) -> str:
        """The token of id ``i`` as text (partial UTF-8 as U+FFFD)."""
        check_int(i, "i", minimum=None)
        return self._token_bytes(i).decode("utf-8", errors="replace")

    @staticmethod
    def pad_batch(
        batch: list[list[int]], length: int | None = None
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Right-pad every sequence with ``<pad>`` to ``length`` (default: the longest) and
        return ``(ids, attention_mask)``; a sequence longer than ``length`` is a ValueError."""
        if not isinstance(batch, list):
            raise TypeError(f"batch must be a list of lists of ints, got {type(batch).__name__}")
        rows = [check_ids(row, "batch") for row in batch]
        if length is None:
            length = max((len(row) for row in rows), default=0)
        check_int(length, "length")
        too_long = [len(row) for row in rows if len(row) > length]
        if too_long:
            raise ValueError(f"length {length} is shorter than a sequence of {max(too_long)} ids")
        ids = [row + [PAD_ID] * (length - len(row)) for row in rows]
        mask = [[1] * len(row) + [0] * (length - len(row)) for row in rows]
        return ids, mask
