"""The incremental BPE trainer shared by exercises 1, 2, 3 and 5.

Training works on weighted *words*: sequences of symbols (byte ids, or strings), each with a
positive weight, between which no pair is ever counted. One long text is a single word of
weight 1; a pre-tokenized corpus is one word per distinct pre-token, weighted by how often it
occurs. The result is exactly what recounting every pair before every merge would give:

- every adjacent position counts, overlapping included, times the word's weight;
- the merge is applied left to right without overlap (``a a a`` on ``(a, a)`` gives ``X a``);
- the best pair has the highest count; ties go to the pair whose first occurrence is leftmost
  in the current sequences (words in order, each left to right), which is the order in which
  a left-to-right ``Counter`` first sees the pairs, so it is what ``max(counter)`` picks.

Instead of recounting, the trainer keeps the symbols in a doubly linked list over their
original positions (a merged symbol keeps the position of its left part, so positions stay
in reading order), the weighted count of every pair, and for every pair a heap of the
positions where it was created. Merging one occurrence only changes the pairs next to it, so
only those counts are touched. The best pair comes from a global heap keyed by
``(-count, first position)`` with lazy invalidation: after every merge, each pair whose
occurrences changed gets a fresh entry, and an entry is used only if it is its pair's latest.

Why the per-pair position heaps are exact: a position's symbol only changes by absorbing its
right neighbour, and a merged symbol is new at that position (a fresh id, or a strictly longer
string), so the pair at a position never comes back once it has changed. Hence "the pair at
position ``p`` is still ``pair``" tells a live position from a stale one.
"""

import heapq
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import NamedTuple

_NONE = -1  # "no neighbour" in the linked list
_DEAD = object()  # the symbol stored at a position that was merged into its left neighbour


class Merge(NamedTuple):
    """One training step: the merged pair, the new symbol, the pair's count when it was
    chosen, and the total weighted length of all words after the merge."""

    pair: tuple
    symbol: Hashable
    count: int
    length: int


def replace_pair(symbols: Sequence, pair: tuple, new: Hashable) -> list:
    """Replace the occurrences of ``pair`` in ``symbols`` by ``new``, left to right, without
    overlap, and return the new list."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


class _Corpus:
    """The words as one linked list of positions, with pair counts kept up to date."""

    def __init__(self, words: Iterable[tuple[Sequence, int]]):
        self.symbol, self.prev, self.next, self.weight = [], [], [], []
        self.length = 0
        for symbols, weight in words:
            start, size = len(self.symbol), len(symbols)
            for i, sym in enumerate(symbols):
                self.symbol.append(sym)
                self.weight.append(weight)
                self.prev.append(start + i - 1 if i > 0 else _NONE)
                self.next.append(start + i + 1 if i + 1 < size else _NONE)
            self.length += weight * size
        self.counts: dict[tuple, int] = {}
        self.where: defaultdict[tuple, list[int]] = defaultdict(list)
        self.changed: set[tuple] = set()
        self.heap: list[tuple[int, int, tuple]] = []
        self.latest: dict[tuple, tuple[int, int]] = {}  # pair -> key of its newest heap entry
        for pos in range(len(self.symbol)):
            if self.next[pos] != _NONE:
                self._add(pos)
        self._push_changed()

    def _pair_at(self, pos: int) -> tuple | None:
        """The pair starting at ``pos`` now, or ``None`` at the end of a word or a dead slot."""
        nxt = self.next[pos]
        return None if nxt == _NONE else (self.symbol[pos], self.symbol[nxt])

    def _add(self, pos: int) -> None:
        """Count the pair that starts at ``pos`` (called after the position changed)."""
        pair = self._pair_at(pos)
        self.counts[pair] = self.counts.get(pair, 0) + self.weight[pos]
        heapq.heappush(self.where[pair], pos)
        self.changed.add(pair)

    def _remove(self, pos: int) -> None:
        """Uncount the pair that starts at ``pos`` (called before the position changes)."""
        pair = self._pair_at(pos)
        self.counts[pair] -= self.weight[pos]
        self.changed.add(pair)

    def _first(self, pair: tuple) -> int:
        """The leftmost live position of ``pair``, dropping stale positions on the way."""
        where = self.where[pair]
        while self._pair_at(where[0]) != pair:
            heapq.heappop(where)
        return where[0]

    def _push_changed(self) -> None:
        """Give every pair touched since the last call a heap entry with its current key,
        and forget pairs that no longer occur."""
        for pair in self.changed:
            if self.counts[pair] > 0:
                key = self.latest[pair] = (-self.counts[pair], self._first(pair))
                heapq.heappush(self.heap, (*key, pair))
            else:
                del self.counts[pair], self.where[pair]
                self.latest.pop(pair, None)
        self.changed.clear()

    def best(self) -> tuple | None:
        """The pair to merge next (highest count, then leftmost), or ``None`` if none is left."""
        while self.heap:
            neg_count, first, pair = self.heap[0]
            if self.latest.get(pair) == (neg_count, first):
                return pair
            heapq.heappop(self.heap)
        return None

    def merge(self, pair: tuple, new: Hashable) -> None:
        """Merge every occurrence of ``pair`` into ``new``, left to right, without overlap."""
        for pos in sorted(self.where[pair]):
            if self._pair_at(pos) == pair:  # an overlapping occurrence may be gone already
                self._merge_at(pos, new)
        self._push_changed()

    def _merge_at(self, pos: int, new: Hashable) -> None:
        """Merge the pair at ``pos`` with its right neighbour, updating the nearby counts."""
        before, right = self.prev[pos], self.next[pos]
        after = self.next[right]
        if before != _NONE:
            self._remove(before)
        self._remove(pos)
        if after != _NONE:
            self._remove(right)
        self.symbol[pos], self.next[pos] = new, after
        if after != _NONE:
            self.prev[after] = pos
        self.symbol[right], self.next[right] = _DEAD, _NONE
        self.length -= self.weight[pos]
        if before != _NONE:
            self._add(before)
        if after != _NONE:
            self._add(pos)


def train(
    words: Iterable[tuple[Sequence, int]],
    num_merges: int,
    new_symbol: Callable[[int, tuple], Hashable],
) -> Iterator[Merge]:
    """Run up to ``num_merges`` BPE merges on weighted ``words`` and yield each step.

    ``words`` holds ``(symbols, weight)`` pairs with positive weights; ``new_symbol(k, pair)``
    names the symbol made by the k-th merge (k from 0). Training stops early when no pair is
    left. The trainer is a generator, so a caller may stop it as soon as it has seen enough.
    """
    corpus = _Corpus(words)
    for k in range(num_merges):
        pair = corpus.best()
        if pair is None:
            return
        count = corpus.counts[pair]
        symbol = new_symbol(k, pair)
        corpus.merge(pair, symbol)
        yield Merge(pair, symbol, count, corpus.length)
