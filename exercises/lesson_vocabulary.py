"""Step 3 of the lesson: how the vocabulary is used.

A few tokens are used very often and most are rare: the counts fall roughly like ``1 / rank``
(Zipf's law). ``lesson_unigram`` builds a vocabulary the other way round.
"""

import math
from collections import Counter

from .lesson_bpe import BPETokenizer  # noqa: F401 - the examples train one


def analyze_vocabulary(tokenizer, text):
    """Encode ``text`` and describe how often each token is used.

    ``tokenizer`` is a trained ``BPETokenizer`` (anything with ``encode`` and a ``vocab``
    mapping ids to bytes works). Returns a dict of plain data:

    - ``rows``: one ``(rank, token_bytes, count)`` per distinct token used, most frequent
      first (equal counts: smaller id first); ranks start at 1;
    - ``total_tokens``: the length of the encoding (the sum of all counts);
    - ``distinct_tokens``: how many different tokens it uses;
    - ``top10_share``: the fraction of all tokens covered by the most frequent 10% of the
      distinct tokens (rounded up, so at least one token);
    - ``zipf_slope``: the slope of the least-squares line through
      ``(log(rank), log(count))``. Zipf's law predicts about -1. It is ``None`` with fewer
      than two distinct tokens.

    >>> text = "the cat sat on the mat. the dog sat on the log. the cat saw the dog."
    >>> tok = BPETokenizer().train(text, 10)
    >>> stats = analyze_vocabulary(tok, text)
    >>> stats["total_tokens"], stats["distinct_tokens"]
    (27, 15)
    >>> stats["rows"][:3]
    [(1, b' the ', 5), (2, b'.', 3), (3, b'og', 3)]
    >>> sum(count for _, _, count in stats["rows"]) == stats["total_tokens"]
    True

    The top 10% of 15 tokens is 2 tokens; they cover (5 + 3) / 27 of the text:

    >>> round(stats["top10_share"], 3), round(stats["zipf_slope"], 2)
    (0.296, -0.65)

    On a text this short the slope is only a hint; on longer prose it comes close to -1.
    """
    counts = Counter(tokenizer.encode(text))
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    rows = [(rank, tokenizer.vocab[i], n) for rank, (i, n) in enumerate(ordered, start=1)]

    total = sum(counts.values())
    top = math.ceil(len(rows) / 10)
    top_share = sum(n for _, _, n in rows[:top]) / total if total else 0.0
    return {
        "rows": rows,
        "total_tokens": total,
        "distinct_tokens": len(rows),
        "top10_share": top_share,
        "zipf_slope": zipf_slope([n for _, _, n in rows]),
    }


def zipf_slope(counts):
    """The least-squares slope of ``log(count)`` against ``log(rank)``.

    ``counts`` are sorted from most to least frequent; rank ``r`` (from 1) holds
    ``counts[r - 1]``. Perfect Zipf counts (``count ∝ 1 / rank``) give -1.

    >>> round(zipf_slope([60, 30, 20, 15, 12]), 6)
    -1.0
    >>> zipf_slope([7]) is None
    True
    """
    if len(counts) < 2:
        return None
    xs = [math.log(rank) for rank in range(1, len(counts) + 1)]
    ys = [math.log(n) for n in counts]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    variance = sum((x - mean_x) ** 2 for x in xs)
    return covariance / variance
