"""Reference solution of exercise 6 (bonus): a Unigram language-model tokenizer, trained the
way SentencePiece's Unigram mode trains it (seed, EM, pruning).

Decisions where the spec is silent:

- ``logprobs`` is a dict of non-empty ``str`` pieces to finite numbers at most 0 (``int`` or
  ``float``, not ``bool``); anything else is a ``TypeError`` or ``ValueError`` naming
  ``logprobs``. The pieces need not sum to probability 1 (``removal_loss`` and pruning work on
  vocabularies that are not renormalised).
- ``word_counts`` is a dict of ``str`` to ``int`` counts of at least 1. A word that no
  segmentation covers makes ``expected_counts`` and ``em_step`` raise a ``ValueError`` naming
  ``word_counts``; ``removal_loss`` raises it only when the word cannot be segmented with the
  full vocabulary (a word that only the removal leaves uncovered gives ``inf``, as pinned).
- Log-sum-exp is computed as ``m + log(Σ exp(x - m))`` with ``m`` the largest term, the terms
  taken in order of their start position.
- ``removal_loss`` sums the fall word by word, ``Σ count(w) * (score(w) - score'(w))`` over the
  words whose Viterbi segmentation uses the piece (for the others, an equally good
  segmentation without it stays, so they contribute exactly 0). That equals
  ``L - L'`` up to float rounding; with dyadic log-probabilities it is exact.
- ``train_unigram``: the words are those of ``WORD_PATTERN``, so whitespace never becomes a
  piece. Its options are keyword-only (``max_piece_len=16``, ``seed_size=10_000``,
  ``em_iterations=2``, ``shrink_factor=0.75``); see the stub for the exact loop. Pruning
  sorts candidates by ``(round(loss, 9), position in the vocabulary)`` so that float noise in
  the last bits of a sum cannot decide a tie. A text with no words gives ``{}``.
- EM can starve a piece: a character that occurs only inside longer pieces, or a piece that a
  longer one covers better, sees its log-probability shrink geometrically until its expected
  count underflows to 0.0 (seven steps on ``"hug hug abab abab"``). Training puts such a piece
  back in place with log-probability -1000 (SentencePiece likewise re-adds required characters
  below the lowest score). So pruning the longer piece later cannot leave a word without a
  segmentation, only pruning shrinks the vocabulary, and whether a last bit underflows in
  one implementation but not in another changes only a value the suites compare loosely.
"""

import math
import re
from collections import Counter

from ._checks import check_int, check_str

WORD_PATTERN = r"\w+|[^\w\s]"


# --------------------------------------------------------------------------- checks


def _typed_items(mapping, name: str, kinds: tuple[type, ...], kind: str):
    """The items of ``mapping``, a dict of str to ``kind``, once every key's and value's type is
    checked (types before values, within one argument too)."""
    if not isinstance(mapping, dict):
        raise TypeError(f"{name} must be a dict of str to {kind}, got {type(mapping).__name__}")
    for key, value in mapping.items():
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be str, found {type(key).__name__}")
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise TypeError(f"{name} values must be {kind}s, found {type(value).__name__}")
    return mapping.items()


def _check_logprobs(logprobs) -> dict[str, float]:
    for piece, value in _typed_items(logprobs, "logprobs", (int, float), "float"):
        if not piece:
            raise ValueError("logprobs must not hold the empty piece ''")
        if not math.isfinite(value) or value > 0:
            raise ValueError(f"logprobs values must be finite and <= 0, got {value!r} for {piece!r}")
    return logprobs


def _check_word_counts(word_counts) -> dict[str, int]:
    for word, count in _typed_items(word_counts, "word_counts", (int,), "int"):
        if count < 1:
            raise ValueError(f"word_counts values must be at least 1, got {count} for {word!r}")
    return word_counts


def _check_real(value, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not low < value < high:
        raise ValueError(f"{name} must be strictly between {low} and {high}, got {value}")
    return value


# --------------------------------------------------------------------------- lattice


def _longest(logprobs: dict[str, float]) -> int:
    return max(map(len, logprobs), default=0)


def _edges(text: str, end: int, logprobs: dict[str, float], longest: int):
    """The pieces ending at ``end``: ``(start, logprob)`` with start from the left."""
    for start in range(max(0, end - longest), end):
        value = logprobs.get(text[start:end])
        if value is not None:
            yield start, value


def _viterbi(text: str, logprobs: dict[str, float], longest: int) -> tuple[list[str], float] | None:
    n = len(text)
    best: list[float | None] = [0.0] + [None] * n
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        for start, value in _edges(text, end, logprobs, longest):
            if best[start] is None:
                continue
            score = best[start] + value
            if best[end] is None or score > best[end]:  # strict: the first (longest last piece) wins
                best[end], back[end] = score, start
    if best[n] is None:
        return None
    pieces, end = [], n
    while end > 0:
        pieces.append(text[back[end]:end])
        end = back[end]
    return pieces[::-1], best[n]


def _logsumexp(values: list[float]) -> float:
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def _forward(text: str, logprobs: dict[str, float], longest: int) -> list[float]:
    """``alpha[i]``: log of the total probability of the segmentations of ``text[:i]``."""
    alpha = [0.0] + [-math.inf] * len(text)
    for end in range(1, len(text) + 1):
        alpha[end] = _logsumexp([alpha[start] + value for start, value in _edges(text, end, logprobs, longest)
                                 if alpha[start] > -math.inf])
    return alpha


def _backward(text: str, logprobs: dict[str, float], longest: int) -> list[float]:
    """``beta[i]``: log of the total probability of the segmentations of ``text[i:]``."""
    n = len(text)
    beta = [-math.inf] * n + [0.0]
    for start in range(n - 1, -1, -1):
        terms = []
        for end in range(start + 1, min(n, start + longest) + 1):
            value = logprobs.get(text[start:end])
            if value is not None and beta[end] > -math.inf:
                terms.append(value + beta[end])
        beta[start] = _logsumexp(terms)
    return beta


# --------------------------------------------------------------------------- the graded functions


def viterbi_segment(text: str, logprobs: dict[str, float]) -> tuple[list[str], float]:
    """The best segmentation of ``text`` and its score (ties: longest last piece, and so on)."""
    check_str(text, "text")
    _check_logprobs(logprobs)
    found = _viterbi(text, logprobs, _longest(logprobs))
    if found is None:
        raise ValueError(f"text {text!r} has no segmentation into the vocabulary's pieces")
    return found


def marginal_logprob(text: str, logprobs: dict[str, float]) -> float:
    """``log Σ exp(score)`` over every segmentation of ``text``."""
    check_str(text, "text")
    _check_logprobs(logprobs)
    total = _forward(text, logprobs, _longest(logprobs))[-1]
    if total == -math.inf:
        raise ValueError(f"text {text!r} has no segmentation into the vocabulary's pieces")
    return total


def _expected(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    counts = dict.fromkeys(logprobs, 0.0)
    longest = _longest(logprobs)
    for word, count in word_counts.items():
        alpha, beta = _forward(word, logprobs, longest), _backward(word, logprobs, longest)
        total = alpha[-1]
        if total == -math.inf:
            raise ValueError(f"word_counts: the word {word!r} has no segmentation into the vocabulary's pieces")
        for end in range(1, len(word) + 1):
            for start, value in _edges(word, end, logprobs, longest):
                posterior = math.exp(alpha[start] + value + beta[end] - total)
                counts[word[start:end]] += count * posterior
    return counts


def expected_counts(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    """Each piece's expected number of occurrences over the posterior of each word's segmentations."""
    _check_word_counts(word_counts)
    _check_logprobs(logprobs)
    return _expected(word_counts, logprobs)


def _em(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    counts = _expected(word_counts, logprobs)
    total = sum(counts.values())  # log(c) - log(total), as c / total can underflow to 0.0
    return {piece: math.log(c) - math.log(total) for piece, c in counts.items() if c > 0}


def em_step(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    """One EM step: ``log(expected / total expected)``, pieces never expected dropped."""
    _check_word_counts(word_counts)
    _check_logprobs(logprobs)
    return _em(word_counts, logprobs)


def _losses(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    longest = _longest(logprobs)
    losses = {piece: 0.0 for piece in logprobs if len(piece) > 1}
    for word, count in word_counts.items():
        found = _viterbi(word, logprobs, longest)
        if found is None:
            raise ValueError(f"word_counts: the word {word!r} has no segmentation into the vocabulary's pieces")
        pieces, score = found
        for piece in dict.fromkeys(pieces):
            if len(piece) < 2:
                continue
            without = {p: v for p, v in logprobs.items() if p != piece}
            other = _viterbi(word, without, longest)
            losses[piece] += math.inf if other is None else count * (score - other[1])
    return losses


def removal_loss(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    """How much the corpus's Viterbi log-likelihood falls when each multi-character piece goes."""
    _check_word_counts(word_counts)
    _check_logprobs(logprobs)
    return _losses(word_counts, logprobs)


# --------------------------------------------------------------------------- training


def _seed(word_counts: dict[str, int], max_piece_len: int, seed_size: int) -> dict[str, float]:
    """Every character and the ``seed_size`` substrings (2 to ``max_piece_len`` characters,
    seen at least twice) of highest frequency × length; log of each one's share of the
    scores, in order of descending score, ties alphabetical."""
    chars: Counter[str] = Counter()
    substrings: Counter[str] = Counter()
    for word, count in word_counts.items():
        for i, ch in enumerate(word):
            chars[ch] += count
            for j in range(i + 2, min(len(word), i + max_piece_len) + 1):
                substrings[word[i:j]] += count
    frequent = sorted(((n * len(s), s) for s, n in substrings.items() if n >= 2), key=lambda x: (-x[0], x[1]))
    scored = sorted([*((n, ch) for ch, n in chars.items()), *frequent[:seed_size]], key=lambda x: (-x[0], x[1]))
    total = sum(score for score, _piece in scored)
    return {piece: math.log(score / total) for score, piece in scored}


LOST_PIECE = -1000.0  # the log-probability of a piece put back after EM dropped it


def _em_keeping_pieces(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    """An EM step that puts back, in place, every piece it dropped (its expected count
    underflowed to 0.0), with log-probability ``LOST_PIECE``: every word stays segmentable,
    and only pruning shrinks the vocabulary."""
    new = _em(word_counts, logprobs)
    return {p: new.get(p, LOST_PIECE) for p in logprobs}


def train_unigram(text: str, vocab_size: int, *, max_piece_len: int = 16, seed_size: int = 10_000,
                  em_iterations: int = 2, shrink_factor: float = 0.75) -> dict[str, float]:
    """Seed, EM, prune by smallest removal loss until ``vocab_size`` pieces remain, final EM."""
    check_str(text, "text")
    check_int(vocab_size, "vocab_size", minimum=1)
    check_int(max_piece_len, "max_piece_len", minimum=1)
    check_int(seed_size, "seed_size")
    check_int(em_iterations, "em_iterations")
    _check_real(shrink_factor, "shrink_factor", 0, 1)
    words = dict(Counter(re.findall(WORD_PATTERN, text)))
    logprobs = _seed(words, max_piece_len, seed_size)
    while True:
        for _ in range(em_iterations):
            logprobs = _em_keeping_pieces(words, logprobs)
        candidates = [(i, piece) for i, piece in enumerate(logprobs) if len(piece) > 1]
        if len(logprobs) <= vocab_size or not candidates:
            break
        losses = _losses(words, logprobs)
        target = max(vocab_size, int(len(logprobs) * shrink_factor))
        ranked = sorted(candidates, key=lambda c: (round(losses[c[1]], 9), c[0]))
        removed = {piece for _i, piece in ranked[:len(logprobs) - target]}
        logprobs = {piece: value for piece, value in logprobs.items() if piece not in removed}
    return _em_keeping_pieces(words, logprobs)
