"""Exercise 6 written from the docstrings alone."""

import math
import re

from ._args import need_dict, need_int, need_logprobs, need_number, need_str

WORD_PATTERN = r"\w+|[^\w\s]"
STARVED = -1000.0


def _log_add(values):
    values = [v for v in values if v != -math.inf]
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def _best(text, logprobs):
    """(pieces, score) of the best segmentation, or None."""
    n = len(text)
    score = [0.0] + [None] * n
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(end):
            piece = text[start:end]
            if score[start] is None or piece not in logprobs:
                continue
            candidate = score[start] + logprobs[piece]
            if score[end] is None or candidate > score[end]:
                score[end], back[end] = candidate, start
    if score[n] is None:
        return None
    pieces, end = [], n
    while end > 0:
        pieces.append(text[back[end]:end])
        end = back[end]
    return pieces[::-1], score[n]


def viterbi_segment(text, logprobs):
    need_str(text, "text")
    need_logprobs(logprobs)
    found = _best(text, logprobs)
    if found is None:
        raise ValueError(f"text {text!r} has no segmentation into the pieces")
    return found


def _forward(text, logprobs):
    alpha = [0.0] + [-math.inf] * len(text)
    for end in range(1, len(text) + 1):
        alpha[end] = _log_add([alpha[start] + logprobs[text[start:end]] for start in range(end)
                               if text[start:end] in logprobs and alpha[start] != -math.inf])
    return alpha


def _backward(text, logprobs):
    n = len(text)
    beta = [-math.inf] * n + [0.0]
    for start in range(n - 1, -1, -1):
        beta[start] = _log_add([logprobs[text[start:end]] + beta[end] for end in range(start + 1, n + 1)
                                if text[start:end] in logprobs and beta[end] != -math.inf])
    return beta


def marginal_logprob(text, logprobs):
    need_str(text, "text")
    need_logprobs(logprobs)
    total = _forward(text, logprobs)[-1]
    if total == -math.inf:
        raise ValueError(f"text {text!r} has no segmentation into the pieces")
    return total


def _check_words(word_counts, logprobs):
    need_dict(word_counts, "word_counts", str, (int,))
    if any(n < 1 for n in word_counts.values()):
        raise ValueError("word_counts: every count must be >= 1")
    need_logprobs(logprobs)
    for word in word_counts:
        if _best(word, logprobs) is None:
            raise ValueError(f"word_counts: the word {word!r} has no segmentation")


def _expected(word_counts, logprobs):
    counts = dict.fromkeys(logprobs, 0.0)
    for word, n in word_counts.items():
        alpha, beta = _forward(word, logprobs), _backward(word, logprobs)
        total = alpha[-1]
        for start in range(len(word)):
            for end in range(start + 1, len(word) + 1):
                piece = word[start:end]
                if piece in logprobs and alpha[start] != -math.inf and beta[end] != -math.inf:
                    counts[piece] += n * math.exp(alpha[start] + logprobs[piece] + beta[end] - total)
    return counts


def expected_counts(word_counts, logprobs):
    _check_words(word_counts, logprobs)
    return _expected(word_counts, logprobs)


def _em(word_counts, logprobs):
    counts = _expected(word_counts, logprobs)
    total = sum(counts.values())
    return {p: math.log(c) - math.log(total) for p, c in counts.items() if c > 0}


def em_step(word_counts, logprobs):
    _check_words(word_counts, logprobs)
    return _em(word_counts, logprobs)


def _likelihood(word_counts, logprobs):
    total = 0.0
    for word, n in word_counts.items():
        found = _best(word, logprobs)
        if found is None:
            return None
        total += n * found[1]
    return total


def _losses(word_counts, logprobs):
    full = _likelihood(word_counts, logprobs)
    losses = {}
    for piece in logprobs:
        if len(piece) > 1:
            without = _likelihood(word_counts, {p: v for p, v in logprobs.items() if p != piece})
            losses[piece] = math.inf if without is None else full - without
    return losses


def removal_loss(word_counts, logprobs):
    _check_words(word_counts, logprobs)
    return _losses(word_counts, logprobs)


def _seed(words, max_piece_len, seed_size):
    chars, substrings = {}, {}
    for word, n in words.items():
        for i, ch in enumerate(word):
            chars[ch] = chars.get(ch, 0) + n
            for j in range(i + 2, min(len(word), i + max_piece_len) + 1):
                substrings[word[i:j]] = substrings.get(word[i:j], 0) + n
    scored = sorted(((n * len(s), s) for s, n in substrings.items() if n >= 2), key=lambda c: (-c[0], c[1]))
    pieces = [(n, ch) for ch, n in chars.items()] + scored[:seed_size]
    pieces.sort(key=lambda c: (-c[0], c[1]))
    total = sum(score for score, _ in pieces)
    return {piece: math.log(score / total) for score, piece in pieces}


def _em_keeping(words, logprobs):
    new = _em(words, logprobs)
    return {p: new.get(p, STARVED) for p in logprobs}


def train_unigram(text, vocab_size, *, max_piece_len=16, seed_size=10_000, em_iterations=2, shrink_factor=0.75):
    need_str(text, "text")
    need_int(vocab_size, "vocab_size", 1)
    need_int(max_piece_len, "max_piece_len", 1)
    need_int(seed_size, "seed_size", 0)
    need_int(em_iterations, "em_iterations", 0)
    if not 0 < need_number(shrink_factor, "shrink_factor") < 1:
        raise ValueError(f"shrink_factor must be strictly between 0 and 1, got {shrink_factor!r}")
    words = {}
    for word in re.findall(WORD_PATTERN, text):
        words[word] = words.get(word, 0) + 1
    if not words:
        return {}
    vocab = _seed(words, max_piece_len, seed_size)
    while True:
        for _ in range(em_iterations):
            vocab = _em_keeping(words, vocab)
        longer = [p for p in vocab if len(p) > 1]
        if len(vocab) <= vocab_size or not longer:
            break
        losses = _losses(words, vocab)
        target = max(vocab_size, int(len(vocab) * shrink_factor))
        position = {p: i for i, p in enumerate(vocab)}
        doomed = set(sorted(longer, key=lambda p: (round(losses[p], 9), position[p]))[:len(vocab) - target])
        vocab = {p: v for p, v in vocab.items() if p not in doomed}
    return _em_keeping(words, vocab)
