"""Exercise 3: WordPiece scoring, and how it differs from BPE.

Task
----
BERT's WordPiece builds its vocabulary like BPE, by merging adjacent units, but it picks
the merge by a different score: ``count(pair) / (count(left) * count(right))``. It
prefers pairs whose parts are rare on their own over pairs that are merely frequent.
Write the score, the WordPiece and BPE trainers over the same units, BERT's greedy
tokenizer, and a comparison of two vocabularies.

Rules
-----
- Words are ``re.findall(WORD_PATTERN, text)``: runs of word characters, and each other
  non-space character alone. No lowercasing or accent stripping. Words are counted, and
  the distinct words are kept in order of first appearance.
- Units: the first character of a word is a unit as it is; every following character
  carries the continuation prefix ``"##"``: ``"hug"`` -> ``["h", "##u", "##g"]``.
- Merging units ``a`` and ``b`` gives ``a + b`` without ``b``'s leading ``"##"``:
  ``"a"`` + ``"##b"`` -> ``"ab"``, ``"##a"`` + ``"##b"`` -> ``"##ab"``. It replaces the
  pair in every word, left to right without overlap.
- Counts (recomputed after every merge, all weighted by the word's count): ``count(pair)``
  counts adjacent occurrences inside words (never across words); ``count(unit)`` counts
  every occurrence of the unit in any position of any word, one-unit words included.
- WordPiece picks the pair with the highest ``wordpiece_score`` (compared as the floats it
  returns), then the highest pair count, then the first occurrence (words in order of
  first appearance, each left to right). BPE picks the highest pair count, then the first
  occurrence.
- Both trainers stop early when no word has two units left.
- Bad input raises ``TypeError``/``ValueError`` by the rules in ``exercises/__init__.py``.
  ``True`` is not an int there, and a tuple or a set is not a list.
- No function changes its arguments.

Example::

    >>> word_units("hug")
    ['h', '##u', '##g']
    >>> train_wordpiece("hug hugs pug pun bun", 3)
    ['##g', '##n', '##s', '##u', 'b', 'h', 'p', '##gs', 'hu', 'hugs']
    >>> train_bpe_pieces("hug hugs pug pun bun", 3)
    ['##g', '##n', '##s', '##u', 'b', 'h', 'p', '##ug', 'hug', '##un']
    >>> tokenize_wordpiece(["h", "##u", "##g", "hu", "##gs"], "hugs hug bug")
    ['hu', '##gs', 'hu', '##g', '[UNK]']

WordPiece's first merge is ``##g ##s``: it occurs once, but ``##s`` occurs only once, so
its score 1 / (3 * 1) beats ``##u ##g`` at 3 / (5 * 3). In the second step every pair
scores 0.2; four pairs tie on count 2 as well, and ``h ##u`` comes first.

Hint
----
Keep a ``collections.Counter`` of words and a dict ``word -> list of units``; after each
merge rebuild the pair and unit counts. Write one trainer with the choice of the best
pair as the only difference, e.g. ``max(pair_counts, key=...)`` with a tuple key; ``max``
keeps the first of equal keys, which gives the first-occurrence rule for free.
"""

WORD_PATTERN = r"\w+|[^\w\s]"


def wordpiece_score(pair_count: int, left_count: int, right_count: int) -> float:
    """``pair_count / (left_count * right_count)``: the ints multiplied, then one division.

    Example: ``wordpiece_score(2, 4, 5) == 0.1``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``pair_count`` >= 0,
    ``left_count`` >= 1, ``right_count`` >= 1).
    """
    raise NotImplementedError("wordpiece_score is not implemented yet")


def word_units(word: str) -> list[str]:
    """The units of ``word``: its first character, then ``"##" + c`` for each other ``c``.

    Example: ``word_units("hug") == ["h", "##u", "##g"]``; ``word_units("") == []``.

    Raises ``TypeError`` per the bad-input rules.
    """
    raise NotImplementedError("word_units is not implemented yet")


def train_wordpiece(text: str, num_merges: int) -> list[str]:
    """Train WordPiece on the words of ``text``; return its vocabulary.

    The vocabulary starts as the sorted set of the units of all words. Each step merges
    the best pair by the WordPiece rule (highest score, then highest pair count, then
    first occurrence) and appends the merged unit to the vocabulary. Stops after
    ``num_merges`` steps or when no pair is left. The result is the sorted initial units
    followed by one merged unit per step, in merge order (in the rare case that two
    different merges spell the same unit it appears twice). ``""`` gives ``[]``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``num_merges`` >= 0).
    """
    raise NotImplementedError("train_wordpiece is not implemented yet")


def train_bpe_pieces(text: str, num_merges: int) -> list[str]:
    """Exactly ``train_wordpiece``, but choosing pairs by BPE's rule.

    The best pair is the one with the highest pair count, then the first occurrence
    (words in order of first appearance, each left to right). Same units, same merged
    names, same result layout: sorted initial units, then one merged unit per step.

    Raises ``TypeError``/``ValueError`` per the bad-input rules, on ``text`` and
    ``num_merges`` (>= 0) as ``train_wordpiece`` does.
    """
    raise NotImplementedError("train_bpe_pieces is not implemented yet")


def tokenize_wordpiece(
    vocab: list[str], text: str, unk: str = "[UNK]", max_chars: int = 100
) -> list[str]:
    """Tokenize ``text`` with BERT's greedy longest-match-first rule.

    Each word of ``re.findall(WORD_PATTERN, text)`` is split on its own. From the start
    of the word, take the longest piece that is in ``vocab``, written with ``"##"`` in
    front unless it starts the word; continue after it until the word is used up. If at
    some point no piece matches, the whole word becomes the single token ``unk`` (its
    pieces found so far are dropped). A word longer than ``max_chars`` characters becomes
    ``unk`` without trying. The tokens of all words are returned in order.

    Example: with ``vocab = ["h", "##u", "##g", "hu", "##gs"]``,
    ``tokenize_wordpiece(vocab, "hugs hug bug") == ["hu", "##gs", "hu", "##g", "[UNK]"]``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``max_chars`` >= 1).
    """
    raise NotImplementedError("tokenize_wordpiece is not implemented yet")


def compare_vocabularies(a: list[str], b: list[str]) -> dict:
    """Compare two vocabularies as sets of tokens (duplicates count once).

    Returns a dict with the keys:

    - ``shared``: ``len(A & B)``;
    - ``only_a``, ``only_b``: ``sorted(A - B)``, ``sorted(B - A)``;
    - ``jaccard``: ``len(A & B) / len(A | B)``, and ``0.0`` when both are empty;
    - ``mean_len_a``, ``mean_len_b``: the mean number of characters per distinct token,
      not counting one leading ``"##"`` (``"##ab"`` has 2), and ``0.0`` for an empty
      vocabulary.

    Example: ``compare_vocabularies(["a", "##b", "ab"], ["ab", "c"])`` is
    ``{"shared": 1, "only_a": ["##b", "a"], "only_b": ["c"], "jaccard": 0.25,
    "mean_len_a": 4 / 3, "mean_len_b": 1.5}``.

    Raises ``TypeError`` per the bad-input rules when ``a`` or ``b`` is not a list of str.
    """
    raise NotImplementedError("compare_vocabularies is not implemented yet")
