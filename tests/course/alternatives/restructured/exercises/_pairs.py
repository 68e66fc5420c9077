"""Helpers shared by this submission's exercises: pair counting with an explicit tie scan."""


def count_pairs(sequences):
    """``sequences``: (symbols, weight) pairs. Returns a dict pair -> weighted count."""
    counts = {}
    for symbols, weight in sequences:
        for i in range(len(symbols) - 1):
            key = (symbols[i], symbols[i + 1])
            counts[key] = counts.get(key, 0) + weight
    return counts


def first_occurring(sequences, candidates):
    """The candidate pair met first walking the sequences in order, each left to right."""
    for symbols, _weight in sequences:
        for i in range(len(symbols) - 1):
            if (symbols[i], symbols[i + 1]) in candidates:
                return (symbols[i], symbols[i + 1])
    raise LookupError("no candidate occurs")


def most_frequent(sequences):
    """The most frequent pair, ties to the leftmost first occurrence; None if there is no pair."""
    counts = count_pairs(sequences)
    if not counts:
        return None, 0
    top = max(counts.values())
    tied = {pair for pair, count in counts.items() if count == top}
    return first_occurring(sequences, tied), top


def replace(symbols, pair, new):
    """Left-to-right, non-overlapping replacement, written with an index that skips."""
    out = []
    skip = False
    for i, symbol in enumerate(symbols):
        if skip:
            skip = False
            continue
        if i + 1 < len(symbols) and symbol == pair[0] and symbols[i + 1] == pair[1]:
            out.append(new)
            skip = True
        else:
            out.append(symbol)
    return out
