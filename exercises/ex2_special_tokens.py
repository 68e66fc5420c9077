"""Exercise 2: special tokens and pre-tokenization.

Task
----
Real tokenizers do two things the lesson's ``BPETokenizer`` does not. They reserve ids for
*special tokens* (padding, end of sequence, unknown) that ordinary text can never
produce by accident, and they *pre-tokenize*: the text is first cut into word-like pieces
and merges never cross a piece boundary, so no token spans ``"dog. The"``. Write
``pretokenize`` and the class ``SpecialTokenizer``.

Rules
-----
- Ids: ``SPECIAL_TOKENS`` take ids 0, 1, 2; byte ``b`` has id ``b + 3`` (so ``"a"``, byte
  97, is id 100); merge ``k`` (from 0) creates id ``259 + k``. The vocabulary is the ids
  ``0 .. vocab_size - 1``.
- Pre-tokens: ``re.findall(PRETOKEN_PATTERN, text)``. A word keeps one leading space; other
  whitespace stands alone; joining the pieces gives the text back.
- Special-token strings are found by scanning the text left to right; where two could
  start at the same place, the longest wins. Text between them is ordinary text.
- Training is byte-level BPE with these changes: every special-token string in the
  training text is cut out and acts as a boundary (it is never part of a pair); the rest
  is pre-tokenized; pairs are counted inside each *distinct* pre-token, weighted by how
  often that pre-token occurs; and a pair never crosses two pre-tokens. Ties go to the
  pair seen first when walking the distinct pre-tokens in order of first appearance, each
  left to right. Training stops early when no pre-token has two ids left. Training again
  starts from scratch (the old merges are forgotten).
- Counting and merging follow the lesson: overlapping pairs all count, a merge replaces
  occurrences left to right without overlap.
- Encoding: cut out the allowed special tokens (each becomes its id), pre-tokenize the
  ordinary text, turn each pre-token into byte ids and apply the learned merges in rank
  order (the merge learned first is applied first).
- Bad input raises ``TypeError``/``ValueError`` by the rules in ``exercises/__init__.py``.
  ``True`` is not an int there, and a ``frozenset`` is a set.
- No method changes its arguments.

Example::

    >>> pretokenize("Hi  there,\\n  you!")
    ['Hi', ' ', ' there,', '\\n ', ' you!']
    >>> tok = SpecialTokenizer().train("low lower lowest<eos>", 3)
    >>> tok.vocab_size
    262
    >>> [tok.id_to_token(i) for i in (259, 260, 261)]
    ['lo', 'low', ' low']
    >>> tok.encode("lowest<eos>")
    [260, 104, 118, 119, 1]
    >>> tok.encode("lowest<eos>", allowed_special="none")
    [260, 104, 118, 119, 63, 104, 114, 118, 65]
    >>> tok.encode("low", add_eos=True)
    [260, 1]
    >>> tok.decode([260, 104, 118, 119, 1])
    'lowest<eos>'
    >>> tok.pad_batch([[260, 1], [7]])
    ([[260, 1], [7, 0]], [[1, 1], [1, 0]])

(The pre-tokens are ``"low"``, ``" lower"``, ``" lowest"``; ``<eos>`` is cut out. ``l o``
and ``o w`` both occur 3 times and ``l o`` comes first; then ``lo w`` (3 times); then
``" " low`` (twice).)

Hint
----
Count the pre-tokens once with a ``collections.Counter`` (it remembers first appearance)
and keep one id list per distinct pre-token; each merge step then counts pairs over
those lists, weighting by the pre-token's count. ``exercises.lesson`` has
``get_pair_counts`` and ``merge_pair``. To cut out special tokens, ``re.split`` with a
capturing group of the ``re.escape``-d strings, longest first, keeps them in the result.
"""

SPECIAL_TOKENS = {"<pad>": 0, "<eos>": 1, "<unk>": 2}

PRETOKEN_PATTERN = r" ?\S+|\s+(?!\S)|\s+"


def pretokenize(text: str) -> list[str]:
    """Split ``text`` into pre-tokens: ``re.findall(PRETOKEN_PATTERN, text)``.

    ``"".join(pretokenize(text)) == text`` always; ``""`` gives ``[]``. Example:
    ``pretokenize("Hi  there,\\n  you!") == ['Hi', ' ', ' there,', '\\n ', ' you!']``.

    Raises ``TypeError`` per the bad-input rules.
    """
    raise NotImplementedError("pretokenize is not implemented yet")


class SpecialTokenizer:
    """Byte-level BPE with special tokens and pre-tokenization (see the module docstring)."""

    def __init__(self) -> None:
        """Start untrained: no merges, so ``vocab_size`` is 259. Takes no arguments."""
        raise NotImplementedError("SpecialTokenizer.__init__ is not implemented yet")

    def train(self, text: str, num_merges: int) -> "SpecialTokenizer":
        """Learn up to ``num_merges`` merges from ``text`` and return ``self``.

        Follows the training rule of the module docstring: special-token strings are cut
        out, the rest is pre-tokenized, pairs are counted per distinct pre-token weighted
        by its count, ties go to the first occurrence (distinct pre-tokens in order of
        first appearance, each left to right), merge ``k`` creates id ``259 + k``, and
        training stops early when no pair is left. Previously learned merges are
        discarded first.

        Raises ``TypeError``/``ValueError`` per the bad-input rules (``num_merges`` >= 0).
        """
        raise NotImplementedError("SpecialTokenizer.train is not implemented yet")

    def encode(self, text: str, allowed_special: str | set[str] | list[str] | tuple[str, ...] = "all",
               add_eos: bool = False) -> list[int]:
        """Return the ids of ``text``.

        ``allowed_special`` says which special-token strings in ``text`` become their ids:
        ``"all"`` (all three), ``"none"`` (none: they are encoded as ordinary text, byte by
        byte and merged like any text), or a ``set`` (or ``frozenset``), ``list`` or ``tuple`` of
        special-token strings (only those; the others are ordinary text). Where two allowed
        special tokens could start at the same place, the longest wins. The ordinary text
        between them is pre-tokenized and each pre-token becomes its byte ids (``b + 3``)
        merged with the learned merges in rank order. With ``add_eos=True`` the id of
        ``<eos>`` (1) is appended at the end, whatever ``allowed_special`` is. ``""``
        gives ``[]`` (or ``[1]`` with ``add_eos``).

        Raises ``TypeError``/``ValueError`` per the bad-input rules (``allowed_special``:
        a str, or a set (a ``frozenset`` too), list or tuple of str; a member that is not a
        str, such as the ``5`` of ``{5}``, is a ``TypeError``; a str other than
        ``"all"``/``"none"``, or a str member that is not a special-token string, is a
        ``ValueError``; ``add_eos``: ``True`` or ``False``, not ``0`` or ``1``).
        """
        raise NotImplementedError("SpecialTokenizer.encode is not implemented yet")

    def decode(self, ids: list[int]) -> str:
        """Return the text of ``ids``.

        Each id stands for bytes: a special id for the UTF-8 bytes of its string
        (``1`` -> ``"<eos>"``), a byte id ``b + 3`` for the byte ``b``, a merged id for the
        bytes of its two parts. All the bytes are joined, then decoded once with
        ``decode("utf-8", errors="replace")``, so invalid UTF-8 becomes ``"\\ufffd"``.
        ``decode(encode(text)) == text`` for every text.

        Raises ``TypeError``/``ValueError`` per the bad-input rules (each id in
        ``0 .. vocab_size - 1``).
        """
        raise NotImplementedError("SpecialTokenizer.decode is not implemented yet")

    @property
    def vocab_size(self) -> int:
        """``3 + 256 + the number of merges learned`` (259 before training)."""
        raise NotImplementedError("SpecialTokenizer.vocab_size is not implemented yet")

    def token_to_id(self, piece: str) -> int:
        """The id of the token ``piece``.

        A special-token string gives its id (``"<pad>"`` -> 0). Otherwise the id of the
        token whose bytes are ``piece.encode("utf-8")``; when two merged tokens have the
        same bytes (two different merges can spell the same string), the smaller id. Any
        ``piece`` that is not a single token, including ``""``, gives 2 (``<unk>``).

        Raises ``TypeError`` per the bad-input rules.
        """
        raise NotImplementedError("SpecialTokenizer.token_to_id is not implemented yet")

    def id_to_token(self, i: int) -> str:
        """The text of token ``i``: ``decode([i])``.

        Special ids give their strings, other ids their bytes decoded with
        ``errors="replace"`` (a lone byte of a multi-byte character is ``"\\ufffd"``).
        ``token_to_id(id_to_token(i)) == i`` whenever token ``i``'s bytes are valid UTF-8
        and no smaller id has the same bytes.

        Raises ``TypeError``/``ValueError`` per the bad-input rules (``i`` in
        ``0 .. vocab_size - 1``).
        """
        raise NotImplementedError("SpecialTokenizer.id_to_token is not implemented yet")

    def pad_batch(
        self, batch: list[list[int]], length: int | None = None
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Right-pad every sequence of ``batch`` with ``<pad>`` (0) to ``length``.

        ``length=None`` means the length of the longest sequence. Returns
        ``(ids, attention_mask)``: new lists (``batch`` is not changed), each of
        ``length`` items, the mask holding 1 for a real token and 0 for padding. The ids
        are copied as they are, without checking them against the vocabulary. An empty
        batch gives ``([], [])`` for any valid ``length``.

        Example: ``pad_batch([[5, 6], [7]]) == ([[5, 6], [7, 0]], [[1, 1], [1, 0]])``.

        Raises ``TypeError``/``ValueError`` per the bad-input rules (``length`` >= 0; a
        sequence of ``batch`` longer than ``length`` is a ``ValueError`` naming ``length``).
        """
        raise NotImplementedError("SpecialTokenizer.pad_batch is not implemented yet")
