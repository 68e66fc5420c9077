"""Exercise 6 (bonus, 10 extra points): a Unigram language-model tokenizer, from scratch.

Task
----
BPE and WordPiece grow a vocabulary by merging. SentencePiece's Unigram mode goes the other
way: it starts from a large vocabulary and prunes it. Each piece has a probability; a word's
segmentation is scored by multiplying its pieces' probabilities (adding their logs), and
the tokenizer picks the best one. Write that scoring (Viterbi), the sum over all
segmentations (the forward algorithm), the expected piece counts (forward–backward), one
EM step, the loss of removing each piece, and the whole training loop.

Rules
-----
- A vocabulary is ``logprobs: dict[str, float]``: non-empty pieces mapped to natural-log
  probabilities (finite, at most 0). They need not sum to 1. An empty piece ``""``, or a
  log-probability above 0 or not finite (``nan``, ``inf``, ``-inf``), is a ``ValueError``
  naming ``logprobs``.
- A segmentation of ``text`` splits it into pieces of the vocabulary, left to right. Its
  score is the sum of its pieces' log-probabilities, added left to right
  (``(lp[p1] + lp[p2]) + lp[p3] ...``).
- Words are ``re.findall(WORD_PATTERN, text)`` with exercise 3's pattern, counted:
  ``word_counts`` maps each word to how often it occurs (every count at least 1).
- Viterbi ties: among segmentations with equal scores, the one whose last piece is longest
  wins, then the one whose second-to-last piece is longest, and so on.
- Bad input raises ``TypeError``/``ValueError`` by the rules in ``exercises/__init__.py``.
  ``True`` is not a number there.
- No function changes its arguments.

Example::

    >>> logprobs = {"a": -2.0, "b": -2.0, "ab": -4.0, "ba": -3.0}
    >>> viterbi_segment("aba", logprobs)
    (['a', 'ba'], -5.0)
    >>> viterbi_segment("ab", logprobs)
    (['ab'], -4.0)
    >>> marginal_logprob("ab", logprobs)                           # doctest: +SKIP
    -3.3068528194400546
    >>> removal_loss({"ab": 1, "aba": 1}, logprobs)                # doctest: +SKIP
    {'ab': 0.0, 'ba': 1.0}

``"aba"`` has three segmentations: ``a b a`` (-6), ``ab a`` (-6) and ``a ba`` (-5); the
last wins. ``"ab"`` has two, ``a b`` and ``ab``, both -4: the tie goes to the longer last
piece, ``ab``. Their probabilities add up to ``2 * exp(-4)``, whose log is
``-4 + log(2)``. Removing ``"ab"`` costs nothing (``a b`` scores the same); removing
``"ba"`` drops ``"aba"`` from -5 to -6.

Hint
----
Everything is one lattice: position ``i`` of the text is a node, and every vocabulary piece
``text[i:j]`` is an edge from ``i`` to ``j``. Viterbi keeps, for each end position, the best
score and where its last piece starts (loop over ``end``, then over ``start`` from the left,
and replace only on a strictly better score: that gives the tie rule). The forward
algorithm is the same loop with log-sum-exp in place of max; run it backwards too, and the
posterior of an edge is ``exp(alpha[i] + lp + beta[j] - alpha[n])``. Write log-sum-exp as
``m + log(sum(exp(x - m)))`` with ``m`` the largest term.
``exercises/lesson_unigram.py`` walks through all of it.
"""

WORD_PATTERN = r"\w+|[^\w\s]"


def viterbi_segment(text: str, logprobs: dict[str, float]) -> tuple[list[str], float]:
    """The segmentation of ``text`` into pieces of ``logprobs`` with the highest score, and that score.

    Ties follow the module's rule (longest last piece, then longest second-to-last, ...).
    ``viterbi_segment("", logprobs) == ([], 0.0)``.

    Example: with ``logprobs = {"a": -2.0, "b": -2.0, "ab": -4.0, "ba": -3.0}``,
    ``viterbi_segment("aba", logprobs) == (["a", "ba"], -5.0)``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (a ``ValueError`` naming
    ``text`` when no segmentation covers it).
    """
    raise NotImplementedError("viterbi_segment is not implemented yet")


def marginal_logprob(text: str, logprobs: dict[str, float]) -> float:
    """``log(Σ exp(score))`` over every segmentation of ``text`` into pieces of ``logprobs``:
    the forward algorithm.

    ``0.0`` for ``""`` (one segmentation, with no pieces). It is at least the Viterbi score,
    and equal to it when only one segmentation exists.

    Example: ``marginal_logprob("ab", {"a": -2.0, "b": -2.0, "ab": -4.0}) == -4 + log(2)``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (a ``ValueError`` naming
    ``text`` when no segmentation covers it).
    """
    raise NotImplementedError("marginal_logprob is not implemented yet")


def expected_counts(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    """For each piece, how often it is expected to occur in the corpus.

    For one word, a segmentation ``s`` has posterior probability
    ``exp(score(s) - marginal_logprob(word))``; the piece's expected count in that word is
    ``Σ posterior(s) * (number of times s uses the piece)``. The result sums these over the
    words, each times its count. Its keys are exactly the pieces of ``logprobs``, in that
    order (0.0 for a piece no word can use).

    Example: ``expected_counts({"ab": 3}, {"a": -2.0, "b": -2.0, "ab": -4.0})`` is
    ``{"a": 1.5, "b": 1.5, "ab": 1.5}`` up to float rounding (``a b`` and ``ab`` are equally
    likely).

    Raises ``TypeError``/``ValueError`` per the bad-input rules (counts >= 1; a
    ``ValueError`` naming ``word_counts`` when one of its words has no segmentation).
    """
    raise NotImplementedError("expected_counts is not implemented yet")


def em_step(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    """One EM step on ``logprobs`` over the words of ``word_counts``: ``{p: log(expected[p] /
    Σ expected)}`` with ``expected`` what ``expected_counts`` gives.

    Pieces whose expected count is 0 are dropped; the others keep the vocabulary's order.
    Compute ``log(expected[p]) - log(Σ expected)``: the quotient of a tiny count can
    underflow to 0.0, and ``math.log(0.0)`` raises.
    The new probabilities sum to 1, and the corpus's marginal log-likelihood
    ``Σ count(w) * marginal_logprob(w)`` never goes down from one step to the next.

    Example: ``em_step({"ab": 3}, {"a": -2.0, "b": -2.0, "ab": -4.0, "c": -1.0})`` gives
    ``log(1/3)`` to ``a``, ``b`` and ``ab``, and drops ``c``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules, as ``expected_counts``.
    """
    raise NotImplementedError("em_step is not implemented yet")


def removal_loss(word_counts: dict[str, int], logprobs: dict[str, float]) -> dict[str, float]:
    """For each piece of ``logprobs`` longer than one character, in order: ``L - L'``.

    ``L`` is the corpus's Viterbi log-likelihood ``Σ count(w) * viterbi_segment(w, logprobs)[1]``
    over the words ``w`` of ``word_counts``; ``L'`` is the same with that one piece removed,
    every other log-probability unchanged (not renormalised). A loss is never negative. If
    removing the piece leaves some word with no segmentation, its loss is ``float("inf")``.

    Example: ``removal_loss({"ab": 1, "aba": 1}, {"a": -2.0, "b": -2.0, "ab": -4.0,
    "ba": -3.0}) == {"ab": 0.0, "ba": 1.0}``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules, as ``expected_counts``.
    """
    raise NotImplementedError("removal_loss is not implemented yet")


def train_unigram(text: str, vocab_size: int, *, max_piece_len: int = 16, seed_size: int = 10_000,
                  em_iterations: int = 2, shrink_factor: float = 0.75) -> dict[str, float]:
    """Train a Unigram vocabulary of (at most) ``vocab_size`` pieces on the words of ``text``.

    1. Seed. Count the words. Every character of a word is a seed piece, with score its
       frequency. Every substring of a word with 2 to ``max_piece_len`` characters that
       occurs at least twice (all occurrences, overlapping ones too, times the word's count)
       has score frequency × length; keep the ``seed_size`` of highest score (ties:
       alphabetical). The seed vocabulary is the characters and kept substrings sorted by
       descending score (ties: alphabetical), each with ``log(score / total score)``.
    2. Repeat: run ``em_iterations`` ``em_step``s. Stop if at most ``vocab_size`` pieces are
       left or none is longer than one character. Otherwise compute ``removal_loss``, let
       ``target = max(vocab_size, int(len(vocab) * shrink_factor))``, and remove the
       ``len(vocab) - target`` multi-character pieces with the smallest losses, ordered by
       ``(round(loss, 9), position in the vocabulary)``. Keep the others as they are.
    3. Finish with one more ``em_step``, and return its result.

    In steps 2 and 3, a piece that an ``em_step`` drops is put back in its old place with
    log-probability ``-1000.0``: EM can starve a piece (a character seen only inside longer
    pieces, or ``"ab"`` beside a likelier ``"abab"``) until its expected count underflows to
    0.0. So every word stays segmentable, and only pruning removes pieces.

    So every character of the words is kept (none is ever pruned), the log-probabilities
    sum to 1, and the size is ``min(vocab_size, len(seed))`` unless the characters alone are
    more. ``train_unigram("", 10) == {}``. The result is the same on every run.

    Example: ``train_unigram("hug hugs pug pun bun hug", 8)`` keeps ``"hug"`` and the seven
    characters: ``{"hug": -1.4663..., "u": -1.4663..., "g": -2.5649..., "h": -34.29...,
    ...}`` (``h`` now occurs only inside ``hug``).

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``vocab_size`` >= 1,
    ``max_piece_len`` >= 1, ``seed_size`` >= 0, ``em_iterations`` >= 0, ``shrink_factor``
    strictly between 0 and 1).
    """
    raise NotImplementedError("train_unigram is not implemented yet")
