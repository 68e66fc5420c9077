"""Reference solution of exercise 1: watch byte-level BPE build its vocabulary.

Decisions where the spec is silent:

- ``ids`` must be a list of ints and ``pair`` a tuple of two ints. Anything else is a
  ``TypeError`` naming the argument; a negative ``num_merges`` is a ``ValueError``.
- ``get_pair_counts`` returns a plain ``dict`` whose order is the order of first occurrence.
- ``trace_merges("")`` and ``trace_word_merges({})`` are empty lists, not errors.
- ``trace_word_merges`` needs positive ``int`` counts (``ValueError`` otherwise); words are
  split into Python characters (code points).
- ``token_tree`` and ``render_trace`` accept the steps as ``MergeStep`` or as plain 6-tuples
  in the same field order (what a NamedTuple becomes after crossing a process boundary).
- ``render_trace`` writes ``rank: 'left' + 'right' -> 'token'`` then the ids, count and
  length; tokens are shown quoted, with control and other non-printing characters escaped as
  ``\\xNN`` / ``\\uNNNN`` and partial UTF-8 shown as U+FFFD.
"""

from itertools import pairwise
from typing import NamedTuple

from . import _bpe
from ._checks import check_ids, check_int, check_str

FIRST_MERGE_ID = 256


class MergeStep(NamedTuple):
    """One merge of ``trace_merges``."""

    rank: int  # merge index, from 0
    pair: tuple[int, int]  # the merged ids
    new_id: int  # 256 + rank
    count: int  # the pair's count when it was chosen
    token: bytes  # the new token's bytes
    length: int  # length of the whole id sequence after the merge


def get_pair_counts(ids: list[int]) -> dict[tuple[int, int], int]:
    """Count every adjacent pair of ``ids`` (overlapping included), in first-occurrence order."""
    ids = check_ids(ids, "ids")
    counts: dict[tuple[int, int], int] = {}
    for pair in pairwise(ids):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace ``pair`` by ``new_id`` in ``ids``, left to right, without overlap."""
    ids = check_ids(ids, "ids")
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise TypeError(f"pair must be a tuple of two ints, got {pair!r}")
    check_ids(pair, "pair", tuple)
    check_int(new_id, "new_id", minimum=None)
    return _bpe.replace_pair(ids, pair, new_id)


def trace_merges(text: str, num_merges: int) -> list[MergeStep]:
    """Train byte-level BPE on ``text`` for up to ``num_merges`` merges and record each one.

    Pair counts are kept incrementally (see ``solutions._bpe``), so thousands of merges on a
    long text stay fast, with results identical to recounting before every merge.
    """
    ids = list(check_str(text, "text").encode("utf-8"))
    check_int(num_merges, "num_merges")
    vocab = {i: bytes([i]) for i in range(FIRST_MERGE_ID)}
    steps = []
    merges = _bpe.train([(ids, 1)], num_merges, lambda k, _pair: FIRST_MERGE_ID + k)
    for rank, (pair, new_id, count, length) in enumerate(merges):
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        steps.append(MergeStep(rank, pair, new_id, count, vocab[new_id], length))
    return steps


def _check_steps(steps: list[MergeStep]) -> list[MergeStep]:
    """Return ``steps`` as ``MergeStep`` values, or raise ``TypeError`` naming ``steps``."""
    if not isinstance(steps, list):
        raise TypeError(f"steps must be a list of MergeStep, got {type(steps).__name__}")
    for step in steps:
        if not isinstance(step, (list, tuple)) or len(step) != len(MergeStep._fields):
            raise TypeError(f"steps must hold MergeStep tuples, found {step!r}")
    return [MergeStep(*step) for step in steps]


def token_tree(steps: list[MergeStep], token_id: int):
    """How ``token_id`` was built: a byte id is a leaf ``int``, a merged id is
    ``(left_tree, right_tree)``. An id that is neither a byte nor made by ``steps`` is a
    ``ValueError``."""
    children = {step.new_id: tuple(step.pair) for step in _check_steps(steps)}
    check_int(token_id, "token_id", minimum=None)

    def build(i: int):
        if 0 <= i < FIRST_MERGE_ID:
            return i
        if i not in children:
            raise ValueError(f"token_id {i} is neither a byte nor made by the given steps")
        left, right = children[i]
        return (build(left), build(right))

    return build(token_id)


def _show(token: bytes) -> str:
    """A token's bytes as quoted text: partial UTF-8 as U+FFFD, non-printing characters escaped."""
    text = token.decode("utf-8", errors="replace")
    return "'" + "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text) + "'"


def render_trace(steps: list[MergeStep]) -> str:
    """One line per merge: both parts and the new token as text, the ids, count and length."""
    vocab = {i: bytes([i]) for i in range(FIRST_MERGE_ID)}
    lines = []
    for rank, (left, right), new_id, count, token, length in _check_steps(steps):
        if left not in vocab or right not in vocab:
            raise ValueError(f"steps: merge {rank} uses an id that no earlier step made")
        vocab[new_id] = bytes(token)
        lines.append(
            f"{rank:>5}: {_show(vocab[left])} + {_show(vocab[right])} -> {_show(vocab[new_id])}"
            f"  ({left} + {right} -> {new_id}, count {count}, length {length})"
        )
    return "\n".join(lines)


def trace_word_merges(
    word_counts: dict[str, int], num_merges: int
) -> list[tuple[tuple[str, str], int]]:
    """Textbook BPE on a word-frequency table: characters, counts weighted by the word's
    count, pairs never crossing words; ties go to the pair seen first walking the words in the
    dict's order, each left to right. Returns ``(pair, count)`` for each merge."""
    if not isinstance(word_counts, dict):
        raise TypeError(f"word_counts must be a dict, got {type(word_counts).__name__}")
    for word, count in word_counts.items():  # every type first, then the values
        check_str(word, "word_counts key")
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"word_counts values must be ints, got {count!r} for {word!r}")
    for word, count in word_counts.items():
        if count <= 0:
            raise ValueError(f"word_counts values must be positive, got {count} for {word!r}")
    check_int(num_merges, "num_merges")
    words = [(list(word), count) for word, count in word_counts.items()]
    merges = _bpe.train(words, num_merges, lambda _k, pair: pair[0] + pair[1])
    return [(merge.pair, merge.count) for merge in merges]
