"""Step 4 of the lesson: Unigram, SentencePiece's other algorithm.

Every piece has a probability: Viterbi cuts a word, EM re-estimates the probabilities and
pruning drops the pieces the corpus misses least. Exercise 6 asks for all of it, with its
exact rules; ``lesson_spellings`` comes back to bytes.
"""

import math

# BPE grows a vocabulary by merging. Unigram starts big and prunes. Its model is as
# simple as a language model gets: every piece p has a probability P(p), the pieces of a
# segmentation are independent, so a segmentation's probability is the product of its
# pieces' probabilities. We work with logs (``logprobs``), so products become sums.
#
# A word of n characters is a lattice: nodes 0..n, and an edge i -> j for every piece
# word[i:j] in the vocabulary. Every path from 0 to n is a segmentation.


def viterbi(word, logprobs):
    """The best path through the lattice: ``(pieces, score)``.

    ``best[j]`` is the best score of ``word[:j]``; it extends ``best[i]`` by the piece
    ``word[i:j]``. Trying ``i`` from the left and replacing only on a strictly better
    score keeps, among ties, the path whose last piece is longest.

    >>> lp = {"a": -2.0, "b": -2.0, "ab": -4.0, "ba": -3.0}
    >>> viterbi("aba", lp)
    (['a', 'ba'], -5.0)
    >>> viterbi("ab", lp)  # a b and ab tie at -4: the longer last piece wins
    (['ab'], -4.0)
    """
    n = len(word)
    best, start_of = [0.0] + [None] * n, [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            piece = word[i:j]
            if piece in logprobs and best[i] is not None:
                score = best[i] + logprobs[piece]
                if best[j] is None or score > best[j]:
                    best[j], start_of[j] = score, i
    if best[n] is None:
        raise ValueError(f"{word!r} cannot be segmented")
    pieces, j = [], n
    while j > 0:  # walk back along the chosen edges
        pieces.append(word[start_of[j]:j])
        j = start_of[j]
    return pieces[::-1], best[n]


def logsumexp(values):
    """``log(sum(exp(v)))`` without overflow: factor out the largest term.

    >>> round(logsumexp([-4.0, -4.0]), 6) == round(-4 + math.log(2), 6)
    True
    >>> logsumexp([])
    -inf
    """
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def forward(word, logprobs):
    """``alpha[j]``: the log of the summed probability of every path to node ``j``.

    The same loop as Viterbi with log-sum-exp in place of max. ``alpha[-1]`` is the word's
    marginal log-probability, summed over all its segmentations.

    >>> forward("ab", {"a": -2.0, "b": -2.0, "ab": -4.0})[-1] == logsumexp([-4.0, -4.0])
    True
    """
    alpha = [0.0] + [-math.inf] * len(word)
    for j in range(1, len(word) + 1):
        alpha[j] = logsumexp([alpha[i] + logprobs[word[i:j]] for i in range(j) if word[i:j] in logprobs])
    return alpha


def backward(word, logprobs):
    """``beta[i]``: the log of the summed probability of every path from node ``i`` to the end.

    >>> backward("ab", {"a": -2.0, "b": -2.0, "ab": -4.0})[0] == forward("ab", {"a": -2.0, "b": -2.0, "ab": -4.0})[-1]
    True
    """
    n = len(word)
    beta = [-math.inf] * n + [0.0]
    for i in range(n - 1, -1, -1):
        beta[i] = logsumexp([logprobs[word[i:j]] + beta[j] for j in range(i + 1, n + 1) if word[i:j] in logprobs])
    return beta


def unigram_em_step(word_counts, logprobs):
    """One round of EM: the expected count of every piece, then new probabilities.

    E-step: the posterior probability that a segmentation of ``word`` uses the edge
    ``i -> j`` is ``exp(alpha[i] + lp + beta[j] - alpha[n])`` (paths to ``i``, the edge,
    paths from ``j``, over all paths). Summed over words, times their counts, these are the
    expected counts. M-step: each piece's new probability is its share of them.

    >>> new = unigram_em_step({"ab": 3}, {"a": -2.0, "b": -2.0, "ab": -4.0, "c": -1.0})
    >>> sorted(new), round(new["ab"], 6) == round(math.log(1 / 3), 6)
    (['a', 'ab', 'b'], True)

    ``c`` is never used, so its expected count is 0 and it leaves the vocabulary.
    """
    expected = dict.fromkeys(logprobs, 0.0)
    for word, count in word_counts.items():
        alpha, beta = forward(word, logprobs), backward(word, logprobs)
        for i in range(len(word)):
            for j in range(i + 1, len(word) + 1):
                piece = word[i:j]
                if piece in logprobs:
                    expected[piece] += count * math.exp(alpha[i] + logprobs[piece] + beta[j] - alpha[-1])
    total = sum(expected.values())
    return {piece: math.log(c / total) for piece, c in expected.items() if c > 0}


def unigram_prune(word_counts, logprobs, keep):
    """Keep ``keep`` pieces: drop the multi-character pieces whose removal costs least.

    A piece's loss is how much the corpus's Viterbi log-likelihood falls without it. Single
    characters always stay, so every word can still be segmented.

    >>> lp = {"a": -2.0, "b": -2.0, "ab": -4.0, "ba": -3.0}
    >>> sorted(unigram_prune({"ab": 1, "aba": 1}, lp, 3))  # ab costs nothing: a b scores the same
    ['a', 'b', 'ba']
    """
    def likelihood(vocab):
        return sum(count * viterbi(word, vocab)[1] for word, count in word_counts.items())

    full = likelihood(logprobs)
    losses = {}
    for piece in logprobs:
        if len(piece) > 1:
            rest = {p: v for p, v in logprobs.items() if p != piece}
            try:
                losses[piece] = full - likelihood(rest)
            except ValueError:  # some word needs this piece
                losses[piece] = math.inf
    dropped = sorted(losses, key=losses.get)[:max(0, len(logprobs) - keep)]
    return {p: v for p, v in logprobs.items() if p not in dropped}
