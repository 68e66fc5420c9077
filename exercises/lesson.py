"""The lesson's worked code: from characters to byte-level BPE.

A tokenizer turns text into a list of integers (token ids) and back. This module builds
one in five steps; read it top to bottom.

1. ``CharTokenizer`` gives every character of a training text its own id. It is simple,
   but it cannot encode a character it has never seen.
2. Byte-level BPE starts instead from the 256 possible bytes of UTF-8, so every text can
   be encoded. It then *learns* new tokens: it counts adjacent pairs of ids
   (``get_pair_counts``), replaces the most frequent pair by a new id (``merge_pair``),
   and repeats. ``BPETokenizer`` wraps this up.
3. ``analyze_vocabulary`` looks at how often each token is used. A few tokens are used
   very often and most are rare: the counts fall roughly like ``1 / rank`` (Zipf's law).
4. Unigram (SentencePiece's other algorithm) goes the other way: every piece has a
   probability, a word is cut where the product of its pieces' probabilities is highest
   (``viterbi``), EM re-estimates the probabilities (``forward``, ``backward``,
   ``unigram_em_step``), and pruning removes the pieces the corpus misses least
   (``unigram_prune``). Exercise 6 asks for all of it, with its exact rules.
5. A tokenizer sees bytes, not letters: one Persian word has several spellings a reader
   takes for one (``spellings``), with or without its zero-width non-joiner, with Persian
   or Arabic yeh and kaf, and each is other bytes and another count of tokens.

The rules used throughout the course:

- ids 0-255 are the bytes of ``text.encode("utf-8")``; merge ``k`` (from 0) creates id
  ``256 + k``;
- every adjacent position is a pair, overlapping ones included: ``[5, 5, 5]`` holds
  ``(5, 5)`` twice;
- a merge replaces occurrences left to right without overlap: ``[5, 5, 5]`` becomes
  ``[new, 5]``;
- ties between equally frequent pairs go to the pair that occurs first (leftmost);
- training stops early when no pair is left.
"""

import math
from collections import Counter

# ---------------------------------------------------------------------------------------
# Step 1: one token per character
# ---------------------------------------------------------------------------------------


class CharTokenizer:
    """A tokenizer whose vocabulary is the set of characters of its training text.

    Ids are given in sorted character order.

    >>> tok = CharTokenizer().train("hello")
    >>> tok.vocab
    {0: 'e', 1: 'h', 2: 'l', 3: 'o'}
    >>> tok.encode("hell")
    [1, 0, 2, 2]
    >>> tok.decode([1, 0, 2, 2, 3])
    'hello'

    Its weakness: a character that was not in the training text has no id.

    >>> tok.encode("help")
    Traceback (most recent call last):
    ...
    ValueError: text: character 'p' is not in the vocabulary
    """

    def __init__(self):
        self.vocab = {}  # id -> character
        self.ids = {}  # character -> id

    def train(self, text):
        """Give each distinct character of ``text`` an id; return the tokenizer."""
        self.vocab = dict(enumerate(sorted(set(text))))
        self.ids = {char: i for i, char in self.vocab.items()}
        return self

    def encode(self, text):
        """The id of every character of ``text``."""
        for char in text:
            if char not in self.ids:
                raise ValueError(f"text: character {char!r} is not in the vocabulary")
        return [self.ids[char] for char in text]

    def decode(self, ids):
        """The text spelled by ``ids``."""
        return "".join(self.vocab[i] for i in ids)


# ---------------------------------------------------------------------------------------
# Step 2a: the two operations of BPE
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Step 2b: byte-level BPE
# ---------------------------------------------------------------------------------------


class BPETokenizer:
    """Byte-level byte-pair encoding.

    Before training, the vocabulary is the 256 single bytes and there are no merges:

    >>> tok = BPETokenizer()
    >>> len(tok.vocab), tok.merges
    (256, {})
    >>> tok.encode("hi!")
    [104, 105, 33]

    Training learns merges from a text. In "the then there" the pairs ``t h`` and ``h e``
    both occur three times; ``t h`` comes first, so it is merged first:

    >>> tok = BPETokenizer().train("the then there", 2)
    >>> tok.merges
    {(116, 104): 256, (256, 101): 257}
    >>> tok.vocab[256], tok.vocab[257]
    (b'th', b'the')
    >>> tok.encode("the other")
    [257, 32, 111, 257, 114]
    >>> tok.decode([111, 257, 114])
    'other'

    Every text can be encoded, whatever its script, because every text is made of bytes:

    >>> tok.decode(tok.encode("θ 天 🙂")) == "θ 天 🙂"
    True

    A single id may hold only part of a character; alone, it decodes to the replacement
    character:

    >>> tok.decode([0xE5])
    '\ufffd'
    """

    def __init__(self):
        self.merges = {}  # (left id, right id) -> new id, in the order they were learned
        self.vocab = {i: bytes([i]) for i in range(256)}  # id -> the bytes it stands for

    def train(self, text, num_merges):
        """Learn up to ``num_merges`` merges from ``text``; return the tokenizer.

        Each step merges the most frequent adjacent pair (ties: the leftmost first
        occurrence). Training stops early when fewer than two tokens are left.

        >>> BPETokenizer().train("aaaa", 5).merges  # aaaa -> (aa)(aa) -> (aaaa), then stop
        {(97, 97): 256, (256, 256): 257}
        >>> BPETokenizer().train("abc", -1)
        Traceback (most recent call last):
        ...
        ValueError: num_merges must be >= 0, got -1
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not isinstance(num_merges, int):
            raise TypeError(f"num_merges must be an int, got {type(num_merges).__name__}")
        if num_merges < 0:
            raise ValueError(f"num_merges must be >= 0, got {num_merges}")
        merges = {}
        vocab = {i: bytes([i]) for i in range(256)}
        ids = list(text.encode("utf-8"))
        for k in range(num_merges):
            counts = get_pair_counts(ids)
            if not counts:  # fewer than two tokens: nothing left to merge
                break
            pair = max(counts, key=counts.get)  # ties: the pair counted first
            new_id = 256 + k
            ids = merge_pair(ids, pair, new_id)
            merges[pair] = new_id
            vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        self.merges, self.vocab = merges, vocab
        return self

    def encode(self, text):
        """The token ids of ``text``: its UTF-8 bytes, then the learned merges.

        Merges are applied in the order they were learned (their rank): at each step the
        pair present with the lowest rank is merged everywhere, until no learned pair
        is left.
        """
        ids = list(text.encode("utf-8"))
        while len(ids) >= 2:
            counts = get_pair_counts(ids)
            pair = min(counts, key=lambda p: self.merges.get(p, math.inf))
            if pair not in self.merges:  # no learned pair left in ids
                break
            ids = merge_pair(ids, pair, self.merges[pair])
        return ids

    def decode(self, ids):
        """The text spelled by ``ids``; invalid UTF-8 becomes the replacement character."""
        for i in ids:
            if i not in self.vocab:
                raise ValueError(f"ids: unknown token id {i!r}")
        data = b"".join(self.vocab[i] for i in ids)
        return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------
# Step 3: how the vocabulary is used
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Step 4: Unigram, the other way round
# ---------------------------------------------------------------------------------------
#
# BPE grows a vocabulary by merging. Unigram starts big and prunes. Its model is as
# simple as a language model gets: every piece p has a probability P(p), the pieces of a
# segmentation are independent, so a segmentation's probability is the product of its
# pieces' probabilities. We work with logs (``logprobs``), so products become sums.
#
# A word of n characters is a lattice: nodes 0..n, and an edge i -> j for every piece
# word[i:j] in the vocabulary. Every path from 0 to n is a segmentation.


def viterbi(word, logprobs):
    """The best path through the lattice: ``(pieces, score)``.

    ``best[j]`` is the best score of ``word[:j]``; it extends ``best[i]`` by the piece
    ``word[i:j]``. Trying ``i`` from the left and replacing only on a strictly better
    score keeps, among ties, the path whose last piece is longest.

    >>> lp = {"a": -2.0, "b": -2.0, "ab": -4.0, "ba": -3.0}
    >>> viterbi("aba", lp)
    (['a', 'ba'], -5.0)
    >>> viterbi("ab", lp)  # a b and ab tie at -4: the longer last piece wins
    (['ab'], -4.0)
    """
    n = len(word)
    best, start_of = [0.0] + [None] * n, [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            piece = word[i:j]
            if piece in logprobs and best[i] is not None:
                score = best[i] + logprobs[piece]
                if best[j] is None or score > best[j]:
                    best[j], start_of[j] = score, i
    if best[n] is None:
        raise ValueError(f"{word!r} cannot be segmented")
    pieces, j = [], n
    while j > 0:  # walk back along the chosen edges
        pieces.append(word[start_of[j]:j])
        j = start_of[j]
    return pieces[::-1], best[n]


def logsumexp(values):
    """``log(sum(exp(v)))`` without overflow: factor out the largest term.

    >>> round(logsumexp([-4.0, -4.0]), 6) == round(-4 + math.log(2), 6)
    True
    >>> logsumexp([])
    -inf
    """
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def forward(word, logprobs):
    """``alpha[j]``: the log of the summed probability of every path to node ``j``.

    The same loop as Viterbi with log-sum-exp in place of max. ``alpha[-1]`` is the word's
    marginal log-probability, summed over all its segmentations.

    >>> forward("ab", {"a": -2.0, "b": -2.0, "ab": -4.0})[-1] == logsumexp([-4.0, -4.0])
    True
    """
    alpha = [0.0] + [-math.inf] * len(word)
    for j in range(1, len(word) + 1):
        alpha[j] = logsumexp([alpha[i] + logprobs[word[i:j]] for i in range(j) if word[i:j] in logprobs])
    return alpha


def backward(word, logprobs):
    """``beta[i]``: the log of the summed probability of every path from node ``i`` to the end.

    >>> backward("ab", {"a": -2.0, "b": -2.0, "ab": -4.0})[0] == forward("ab", {"a": -2.0, "b": -2.0, "ab": -4.0})[-1]
    True
    """
    n = len(word)
    beta = [-math.inf] * n + [0.0]
    for i in range(n - 1, -1, -1):
        beta[i] = logsumexp([logprobs[word[i:j]] + beta[j] for j in range(i + 1, n + 1) if word[i:j] in logprobs])
    return beta


def unigram_em_step(word_counts, logprobs):
    """One round of EM: the expected count of every piece, then new probabilities.

    E-step: the posterior probability that a segmentation of ``word`` uses the edge
    ``i -> j`` is ``exp(alpha[i] + lp + beta[j] - alpha[n])`` (paths to ``i``, the edge,
    paths from ``j``, over all paths). Summed over words, times their counts, these are the
    expected counts. M-step: each piece's new probability is its share of them.

    >>> new = unigram_em_step({"ab": 3}, {"a": -2.0, "b": -2.0, "ab": -4.0, "c": -1.0})
    >>> sorted(new), round(new["ab"], 6) == round(math.log(1 / 3), 6)
    (['a', 'ab', 'b'], True)

    ``c`` is never used, so its expected count is 0 and it leaves the vocabulary.
    """
    expected = dict.fromkeys(logprobs, 0.0)
    for word, count in word_counts.items():
        alpha, beta = forward(word, logprobs), backward(word, logprobs)
        for i in range(len(word)):
            for j in range(i + 1, len(word) + 1):
                piece = word[i:j]
                if piece in logprobs:
                    expected[piece] += count * math.exp(alpha[i] + logprobs[piece] + beta[j] - alpha[-1])
    total = sum(expected.values())
    return {piece: math.log(c / total) for piece, c in expected.items() if c > 0}


def unigram_prune(word_counts, logprobs, keep):
    """Keep ``keep`` pieces: drop the multi-character pieces whose removal costs least.

    A piece's loss is how much the corpus's Viterbi log-likelihood falls without it. Single
    characters always stay, so every word can still be segmented.

    >>> lp = {"a": -2.0, "b": -2.0, "ab": -4.0, "ba": -3.0}
    >>> sorted(unigram_prune({"ab": 1, "aba": 1}, lp, 3))  # ab costs nothing: a b scores the same
    ['a', 'b', 'ba']
    """
    def likelihood(vocab):
        return sum(count * viterbi(word, vocab)[1] for word, count in word_counts.items())

    full = likelihood(logprobs)
    losses = {}
    for piece in logprobs:
        if len(piece) > 1:
            rest = {p: v for p, v in logprobs.items() if p != piece}
            try:
                losses[piece] = full - likelihood(rest)
            except ValueError:  # some word needs this piece
                losses[piece] = math.inf
    dropped = sorted(losses, key=losses.get)[:max(0, len(logprobs) - keep)]
    return {p: v for p, v in logprobs.items() if p not in dropped}


# ---------------------------------------------------------------------------------------
# Step 5: one Persian word, several byte sequences
# ---------------------------------------------------------------------------------------
#
# Two Persian letters have Arabic twins that most fonts draw alike: Persian yeh and kaf
# (U+06CC, U+06A9) and Arabic yeh and kaf (U+064A, U+0643). Text typed on an Arabic
# keyboard, or passed through older software, holds the twins. And Persian writes a
# zero-width non-joiner (ZWNJ, U+200C) between a stem and its suffix, which many writers
# leave out or type as a space. Each spelling is another byte sequence.

ZWNJ = "\u200c"  # zero-width non-joiner: keeps two letters apart without a space
ARABIC_TWINS = str.maketrans({"\u06cc": "\u064a", "\u06a9": "\u0643"})  # Persian yeh, kaf -> Arabic yeh, kaf


def spellings(word):
    r"""Three spellings of a Persian ``word`` that a reader takes for one: as written, without
    its zero-width non-joiners, and with Arabic yeh and kaf in place of the Persian letters.

    >>> word = "کتاب_های".replace("_", ZWNJ)  # ketab-haye, "the books of": stem, ZWNJ, suffix
    >>> for name, spelled in spellings(word).items():
    ...     print(f"{name:15} {len(spelled)} characters, {len(spelled.encode('utf-8'))} bytes")
    persian         8 characters, 17 bytes
    no_zwnj         7 characters, 14 bytes
    arabic_letters  8 characters, 17 bytes

    The ZWNJ is three bytes of UTF-8, and a letter and its twin are two bytes each, not
    the same two:

    >>> ZWNJ.encode("utf-8"), "\u06a9".encode("utf-8"), "\u0643".encode("utf-8")  # ZWNJ, Persian kaf, Arabic kaf
    (b'\xe2\x80\x8c', b'\xda\xa9', b'\xd9\x83')

    A tokenizer trained on Persian as Persian writers write it learns merges for the first
    spelling; the others share few of its byte pairs, so they cost more tokens:

    >>> text = "کتاب_های من روی میز است. کتاب_های تو کجاست؟ این کتاب_ها را کی خواندی؟".replace("_", ZWNJ)
    >>> tok = BPETokenizer().train(text, 20)
    >>> {name: len(tok.encode(spelled)) for name, spelled in spellings(word).items()}
    {'persian': 3, 'no_zwnj': 6, 'arabic_letters': 5}

    Trained tokenizers differ in the same way: tiktoken's ``cl100k_base`` gives the three
    spellings 6, 5 and 7 tokens, so there the ZWNJ that correct Persian needs costs a token.
    To compare languages fairly, measure text as its writers spell it, or normalize it first.
    """
    return {"persian": word, "no_zwnj": word.replace(ZWNJ, ""), "arabic_letters": word.translate(ARABIC_TWINS)}
