"""Exercise 1: merge tracing. Watch BPE build its vocabulary.

Task
----
Byte-level BPE learns its tokens one merge at a time: ``t`` + ``h`` -> ``th``, then
``th`` + ``e`` -> ``the``. Write the two operations of BPE, a trainer that records every
merge it makes, a function that shows how a token was built, a printable trace, and the
textbook (word-count) form of BPE.

Rules
-----
- Byte-level: ids 0-255 are the bytes of ``text.encode("utf-8")``; merge ``k`` (``k``
  from 0) creates id ``256 + k``.
- Counting: every adjacent position is a pair, overlapping pairs included:
  ``[5, 5, 5]`` holds ``(5, 5)`` twice.
- Merging: occurrences are replaced left to right without overlap: ``[5, 5, 5]`` merged
  on ``(5, 5)`` gives ``[new, 5]``.
- Ties: among the pairs with the highest count, the pair whose first occurrence is
  leftmost wins. ``max(counts, key=counts.get)`` over a dict filled left to right does
  exactly this.
- Training stops early when no pair is left (fewer than two tokens), so it may make fewer
  merges than asked.
- Bad input raises ``TypeError``/``ValueError`` by the rules in ``exercises/__init__.py``.
  ``True`` is not an int there, and a tuple is not a list (``pair`` is the one tuple).
- No function changes its arguments.

Example::

    >>> steps = trace_merges("the then there", 2)
    >>> steps[0]
    MergeStep(rank=0, pair=(116, 104), new_id=256, count=3, token=b'th', length=11)
    >>> steps[1]
    MergeStep(rank=1, pair=(256, 101), new_id=257, count=3, token=b'the', length=8)
    >>> token_tree(steps, 257)
    ((116, 104), 101)
    >>> print(render_trace(steps))                                # doctest: +SKIP
    0: 't' + 'h' -> 'th'  count=3  length=11
    1: 'th' + 'e' -> 'the'  count=3  length=8

(``t h`` and ``h e`` both occur three times in ``"the then there"``; ``t h`` occurs first.)

Hint
----
``exercises.lesson`` already has ``get_pair_counts``, ``merge_pair`` and the training
loop of ``BPETokenizer.train``; ``trace_merges`` is that loop plus a record per step.
For ``token_tree``, recursion on the two halves of a merged pair is the natural shape.
"""

from typing import NamedTuple


class MergeStep(NamedTuple):
    """One merge made by ``trace_merges`` (given, not graded)."""

    rank: int  # the merge's index, from 0
    pair: tuple[int, int]  # the two ids that were merged
    new_id: int  # the id the merge created: 256 + rank
    count: int  # how often the pair occurred when it was chosen
    token: bytes  # the bytes of the new token
    length: int  # the length of the whole id sequence after this merge


def get_pair_counts(ids: list[int]) -> dict[tuple[int, int], int]:
    """Count every adjacent pair of ``ids``, overlapping pairs included.

    ``ids`` is a list of ints. Returns a dict mapping each pair ``(ids[i], ids[i + 1])``
    to how many times it occurs, with keys in order of first occurrence (a
    ``collections.Counter`` filled left to right is fine). Fewer than two ids give ``{}``.

    Example: ``get_pair_counts([5, 5, 5, 7]) == {(5, 5): 2, (5, 7): 1}``.

    Raises ``TypeError`` per the bad-input rules.
    """
    raise NotImplementedError("get_pair_counts is not implemented yet")


def merge_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Return a new list in which each occurrence of ``pair`` in ``ids`` is ``new_id``.

    The scan goes left to right; after a match it continues after both merged ids, so
    occurrences never overlap. ``ids`` itself is left unchanged.

    Examples: ``merge_pair([1, 2, 3, 1, 2], (1, 2), 256) == [256, 3, 256]`` and
    ``merge_pair([5, 5, 5], (5, 5), 256) == [256, 5]``.

    Raises ``TypeError`` per the bad-input rules (``pair`` is a tuple of exactly two ints: a
    tuple of another length, such as ``(1, 2, 3)``, is a ``TypeError`` too).
    """
    raise NotImplementedError("merge_pair is not implemented yet")


def trace_merges(text: str, num_merges: int) -> list[MergeStep]:
    """Train byte-level BPE on ``text`` and return one ``MergeStep`` per merge made.

    Start from ``list(text.encode("utf-8"))``. Step ``k`` (from 0) counts the pairs of the
    current sequence, picks the most frequent (ties: leftmost first occurrence), merges it
    into id ``256 + k`` and records ``MergeStep(rank=k, pair=pair, new_id=256 + k,
    count=<the pair's count when chosen>, token=<bytes of the new token>,
    length=<len of the whole sequence after the merge>)``.

    Stops after ``num_merges`` merges, or earlier when no pair is left; so the result has
    at most ``num_merges`` steps, and ``""`` gives ``[]``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``num_merges`` >= 0).
    """
    raise NotImplementedError("trace_merges is not implemented yet")


def token_tree(steps: list[MergeStep], token_id: int):
    """Show how ``token_id`` was built by the merges in ``steps``, as nested pairs.

    A byte id (0-255) is a leaf: the tree is the ``int`` itself. An id created by one of
    ``steps`` is the tuple ``(token_tree(steps, left), token_tree(steps, right))`` of the
    two ids of its pair. With merges ``t + h`` (id 256) then ``th + e`` (id 257),
    ``token_tree(steps, 257) == ((116, 104), 101)`` and ``token_tree(steps, 104) == 104``.

    ``steps`` is a list of ``MergeStep`` as returned by ``trace_merges`` (plain tuples with
    the same six fields work too); only their ``pair`` and ``new_id`` are used. The shape
    of each step (six fields, a pair of two ids) needs no checking.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``token_id``: a byte id
    or the ``new_id`` of a step).
    """
    raise NotImplementedError("token_tree is not implemented yet")


def render_trace(steps: list[MergeStep]) -> str:
    """A readable trace: one line per step, lines joined by ``"\\n"``, no trailing newline.

    Each token is shown as text: its bytes decoded with
    ``bytes.decode("utf-8", errors="replace")`` (partial UTF-8 becomes ``"\\ufffd"``) and
    written with ``repr()`` (which escapes control characters such as ``"\\n"``). The
    bytes of a part come from ids 0-255 (single bytes) or from the ``token`` of the
    earlier step that made it.

    Line ``i`` must contain, for ``steps[i]``: the left part, the right part, the new
    token (each as ``repr`` of its text, as above), the count and the length (as decimal
    integers). The grader checks that this information is on each line, not the exact
    layout; this layout is suggested::

        0: 't' + 'h' -> 'th'  count=3  length=11

    An empty list of steps gives ``""``. Raises ``TypeError``/``ValueError`` per the
    bad-input rules (``steps``: each pair's ids are bytes or made by an earlier step); the
    shape of each step (six fields) needs no checking.
    """
    raise NotImplementedError("render_trace is not implemented yet")


def trace_word_merges(
    word_counts: dict[str, int], num_merges: int
) -> list[tuple[tuple[str, str], int]]:
    """Textbook BPE on a table of word counts; return ``(pair, count)`` for each merge.

    Each word (a key of ``word_counts``) starts as the list of its characters, with no
    end-of-word marker. A step counts every adjacent pair of symbols inside each word,
    weighted by the word's count (pairs never cross words), merges the most frequent pair
    ``(a, b)`` into the symbol ``a + b`` in every word (left to right, no overlap), and
    records ``((a, b), count)``. Ties go to the pair seen first when walking the words in
    the dict's order and each word left to right. Stops after ``num_merges`` merges, or
    earlier when no word has two symbols left.

    Example: on ``{"lower": 5, "lowest": 2, "newest": 6}`` the first three merges are
    ``(("w", "e"), 13)``, ``(("we", "s"), 8)``, ``(("wes", "t"), 8)``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``word_counts``: every
    count >= 1; ``num_merges`` >= 0).
    """
    raise NotImplementedError("trace_word_merges is not implemented yet")
