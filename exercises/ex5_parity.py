"""Exercise 5: tiktoken parity. How many merges does our BPE need to match cl100k_base?

Task
----
Every merge makes the encoding of a text shorter. Measure how fast: the *compression
ratio* (tokens per UTF-8 byte) of a text after each merge of byte-level BPE trained on
it, and the smallest number of merges that brings the ratio within a tolerance of a
target, such as the ratio tiktoken's ``cl100k_base`` reaches on the course corpus.

Rules
-----
- Compression ratio = number of tokens / number of UTF-8 bytes, as a float
  (``len(ids) / len(text.encode("utf-8"))``); lower is better. Raw bytes give 1.0.
- Byte-level BPE as in the lesson: ids 0-255 are the bytes, merge ``k`` creates
  ``256 + k``; every adjacent position is a pair (overlapping ones too); merges replace
  left to right without overlap; ties go to the pair whose first occurrence is leftmost;
  training stops early when no pair is left.
- Bad input raises ``TypeError``/``ValueError`` by the rules in ``exercises/__init__.py``.
  ``True`` is not a number there.

Example::

    >>> utf8 = lambda s: list(s.encode("utf-8"))
    >>> compression_ratio(utf8, "héllo")
    1.0
    >>> ratio_curve("aaaa", 5)
    [1.0, 0.5, 0.25]
    >>> merges_for_parity("aaaa", target_ratio=0.5)
    1

(``aaaa`` -> ``(aa)(aa)`` -> ``(aaaa)``, then no pair is left, so the curve stops after 2
merges. The threshold is ``0.5 * 1.1 = 0.55``; the ratio after 1 merge, 0.5, is below
it.)

Hint
----
Start with the lesson's naive loop (``get_pair_counts`` then ``merge_pair`` per merge, in
``exercises.lesson``) and get it right on small texts. It recounts every pair after each
merge, which is too slow for thousands of merges on the whole corpus. A merge only
changes the pairs next to where it happened: update the counts there instead of
recounting, and keep the tie rule (leftmost first occurrence) exactly; compare your fast
version with the naive one on many small texts.
"""

from collections.abc import Callable


def compression_ratio(encode: Callable[[str], list[int]], text: str) -> float:
    """``len(encode(text)) / len(text.encode("utf-8"))``.

    ``encode`` is any callable from ``str`` to a list of token ids. Example: a UTF-8 byte
    encoder gives 1.0 on any text; tiktoken ``cl100k_base`` gives roughly 0.25 on English
    prose (about four bytes per token).

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``text`` not ``""``).
    """
    raise NotImplementedError("compression_ratio is not implemented yet")


def ratio_curve(text: str, max_merges: int) -> list[float]:
    """The compression ratio of ``text`` after 0, 1, 2, ... merges of BPE trained on it.

    Train byte-level BPE on ``text`` for up to ``max_merges`` merges. Element ``k`` is
    ``len(ids_k) / len(text.encode("utf-8"))``, where ``ids_k`` is the training sequence
    after ``k`` merges (the same as encoding ``text`` with the first ``k`` merges).
    Element 0 is 1.0. The list has ``max_merges + 1`` elements, or fewer when training
    stops early because no pair is left (one element per merge made, plus element 0).

    Example: ``ratio_curve("aaaa", 5) == [1.0, 0.5, 0.25]``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``text`` not ``""``;
    ``max_merges`` >= 0).
    """
    raise NotImplementedError("ratio_curve is not implemented yet")


def merges_for_parity(
    text: str, target_ratio: float, tolerance: float = 0.10, max_merges: int = 20000
) -> int:
    """The fewest merges whose compression ratio on ``text`` is within tolerance of a target.

    Compute ``curve = ratio_curve(text, max_merges)`` once and return the smallest ``k``
    with ``curve[k] <= target_ratio * (1 + tolerance)`` (floats compared as written). The
    answer can be 0 when the raw bytes already qualify.

    Example: ``merges_for_parity("aaaa", 0.5) == 1`` (threshold 0.55).

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``text``, ``max_merges``:
    as in ``ratio_curve``; ``target_ratio`` > 0; ``tolerance`` strictly between 0 and 1),
    and ``ValueError`` naming both ``target_ratio`` and ``max_merges`` when no ``k``
    reaches the threshold (the curve ends above it).
    """
    raise NotImplementedError("merges_for_parity is not implemented yet")
