"""Step 2a of the lesson: the two operations of BPE.

Count every adjacent pair of ids (``get_pair_counts``) and replace one pair by a new id
(``merge_pair``). ``lesson_bpe`` repeats the two to learn merges, as exercises 1 and 5 do.
"""

from collections import Counter


def get_pair_counts(ids):
    """Count every adjacent pair in ``ids``, overlapping pairs included.

    The result is a ``Counter`` (a dict) whose keys are in order of first occurrence.

    >>> get_pair_counts([5, 5, 5, 7])
    Counter({(5, 5): 2, (5, 7): 1})

    BPE merges the most frequent pair. When several pairs share the highest count, ``max``
    returns the first one it meets, which is the pair that occurs first in ``ids``:

    >>> counts = get_pair_counts([1, 2, 3, 4, 3, 4, 1, 2])
    >>> counts[(1, 2)], counts[(3, 4)]
    (2, 2)
    >>> max(counts, key=counts.get)
    (1, 2)
    """
    return Counter(zip(ids, ids[1:], strict=False))


def merge_pair(ids, pair, new_id):
    """Replace each occurrence of ``pair`` in ``ids`` by ``new_id``, left to right.

    Occurrences do not overlap: once two ids are merged, the scan moves past both.
    ``ids`` itself is not changed; a new list is returned.

    >>> merge_pair([1, 2, 3, 1, 2], (1, 2), 256)
    [256, 3, 256]
    >>> merge_pair([5, 5, 5], (5, 5), 256)
    [256, 5]
    """
    merged = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged
