"""Reference solution of exercise 3: WordPiece scoring against BPE.

Decisions where the spec is silent:

- A word's units are its Python characters (code points); the first keeps no prefix, every
  later one carries ``##``. ``word_units("")`` is ``[]``.
- Unit counts for the score are the counts of each unit in the current segmentation of all
  words (weighted by word frequency), recounted before every merge, as are pair counts.
- Merging ``left`` and ``right`` gives ``left + right`` without the ``##`` of ``right``. The
  returned vocabulary gets one entry per merge even if two merges happen to spell the same
  token (so its length is the number of initial units plus the number of merges made).
- ``wordpiece_score`` needs positive unit counts (``ValueError``); counts must be ints.
- ``tokenize_wordpiece`` accepts the vocabulary as a list, tuple or set of strings;
  ``max_chars`` must be a positive int. A word of exactly ``max_chars`` characters is still
  tokenized.
- ``compare_vocabularies`` treats each vocabulary as a set for ``shared``, ``only_a``,
  ``only_b`` and ``jaccard`` (``|A & B| / |A | B|``, and ``0.0`` when both are empty). The mean
  lengths are over the distinct tokens too, ``##`` not counted, ``0.0`` for an empty
  vocabulary.
"""

import re
from collections import Counter
from itertools import pairwise

from . import _bpe
from ._checks import check_int, check_str

WORD_PATTERN = r"\w+|[^\w\s]"
CONTINUATION = "##"


def wordpiece_score(pair_count: int, left_count: int, right_count: int) -> float:
    """``pair_count / (left_count * right_count)``, the integer product divided once."""
    check_int(pair_count, "pair_count")
    check_int(left_count, "left_count", minimum=1)
    check_int(right_count, "right_count", minimum=1)
    return pair_count / (left_count * right_count)


def word_units(word: str) -> list[str]:
    """The starting units of ``word``: ``"hug"`` gives ``["h", "##u", "##g"]``."""
    check_str(word, "word")
    return [ch if i == 0 else CONTINUATION + ch for i, ch in enumerate(word)]


def _join(left: str, right: str) -> str:
    """The token made by merging two units: ``"a" + "##b"`` gives ``"ab"``."""
    return left + right.removeprefix(CONTINUATION)


def _words(text: str, num_merges: int) -> list[tuple[list[str], int]]:
    """Each distinct word of ``text`` (in order of first appearance) as units, with its count."""
    check_str(text, "text")
    check_int(num_merges, "num_merges")
    return [(word_units(word), n) for word, n in Counter(re.findall(WORD_PATTERN, text)).items()]


def _initial_vocab(words: list[tuple[list[str], int]]) -> list[str]:
    """The sorted set of all starting units."""
    return sorted({unit for units, _n in words for unit in units})


def _best_wordpiece_pair(words: list[tuple[list[str], int]]) -> tuple[str, str] | None:
    """The pair with the highest score, then highest count, then first occurrence."""
    pair_counts: dict[tuple[str, str], int] = {}
    unit_counts: Counter[str] = Counter()
    for units, n in words:
        for unit in units:
            unit_counts[unit] += n
        for pair in pairwise(units):
            pair_counts[pair] = pair_counts.get(pair, 0) + n

    def rank(pair: tuple[str, str]) -> tuple[float, int]:
        count = pair_counts[pair]
        return wordpiece_score(count, unit_counts[pair[0]], unit_counts[pair[1]]), count

    # max keeps the first of equal ranks, and the dict is in first-occurrence order.
    return max(pair_counts, key=rank, default=None)


def train_wordpiece(text: str, num_merges: int) -> list[str]:
    """Train WordPiece for up to ``num_merges`` merges; return the initial sorted units
    followed by the merged tokens in merge order."""
    words = _words(text, num_merges)
    vocab = _initial_vocab(words)
    for _ in range(num_merges):
        pair = _best_wordpiece_pair(words)
        if pair is None:
            break
        token = _join(*pair)
        vocab.append(token)
        words = [(_bpe.replace_pair(units, pair, token), n) for units, n in words]
    return vocab


def train_bpe_pieces(text: str, num_merges: int) -> list[str]:
    """BPE on the same units (highest pair count, then first occurrence); returns the
    initial sorted units followed by the merged tokens in merge order."""
    words = _words(text, num_merges)
    merges = _bpe.train(words, num_merges, lambda _k, pair: _join(*pair))
    return _initial_vocab(words) + [merge.symbol for merge in merges]


def _check_vocab(vocab, name: str) -> list[str]:
    """Return a copy of ``vocab`` if it is a list of strings."""
    if not isinstance(vocab, list):
        raise TypeError(f"{name} must be a list of strings, got {type(vocab).__name__}")
    for token in vocab:
        check_str(token, f"{name} entry")
    return list(vocab)


def _tokenize_word(vocab: set[str], word: str) -> list[str] | None:
    """Greedy longest-match-first pieces of ``word``, or ``None`` if it cannot be covered."""
    pieces, start = [], 0
    while start < len(word):
        prefix = CONTINUATION if start > 0 else ""
        end = len(word)
        while end > start and prefix + word[start:end] not in vocab:
            end -= 1
        if end == start:
            return None
        pieces.append(prefix + word[start:end])
        start = end
    return pieces


def tokenize_wordpiece(
    vocab: list[str], text: str, unk: str = "[UNK]", max_chars: int = 100
) -> list[str]:
    """BERT's WordPiece: each word of ``text`` is split greedily, longest match first; a word
    that cannot be covered, or has more than ``max_chars`` characters, becomes one ``unk``."""
    known = set(_check_vocab(vocab, "vocab"))
    check_str(text, "text")
    check_str(unk, "unk")
    check_int(max_chars, "max_chars", minimum=1)
    tokens: list[str] = []
    for word in re.findall(WORD_PATTERN, text):
        pieces = _tokenize_word(known, word) if len(word) <= max_chars else None
        tokens.extend(pieces if pieces is not None else [unk])
    return tokens


def _mean_len(vocab: set[str]) -> float:
    """Mean characters per token, a leading ``##`` not counted; ``0.0`` for no tokens."""
    if not vocab:
        return 0.0
    return sum(len(token.removeprefix(CONTINUATION)) for token in vocab) / len(vocab)


def compare_vocabularies(a: list[str], b: list[str]) -> dict:
    """Compare two vocabularies: shared count, tokens only in each (sorted), Jaccard index,
    and mean token length of each."""
    a, b = _check_vocab(a, "a"), _check_vocab(b, "b")
    set_a, set_b = set(a), set(b)
    union = set_a | set_b
    return {
        "shared": len(set_a & set_b),
        "only_a": sorted(set_a - set_b),
        "only_b": sorted(set_b - set_a),
        "jaccard": len(set_a & set_b) / len(union) if union else 0.0,
        "mean_len_a": _mean_len(set_a),
        "mean_len_b": _mean_len(set_b),
    }
