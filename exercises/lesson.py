"""The lesson's worked code: from characters to byte-level BPE.

A tokenizer turns text into a list of integers (token ids) and back. The lesson builds one
in five steps, one concept per module; read them in this order.

1. ``lesson_chars``: ``CharTokenizer`` gives every character of a training text its own
   id. It is simple, but it cannot encode a character it has never seen.
2. ``lesson_pairs`` and ``lesson_bpe``: byte-level BPE starts instead from the 256
   possible bytes of UTF-8, so every text can be encoded. It then *learns* new tokens: it
   counts adjacent pairs of ids (``get_pair_counts``), replaces the most frequent pair by a
   new id (``merge_pair``), and repeats. ``BPETokenizer`` wraps this up.
3. ``lesson_vocabulary``: ``analyze_vocabulary`` looks at how often each token is used. A
   few tokens are used very often and most are rare: the counts fall roughly like
   ``1 / rank`` (Zipf's law).
4. ``lesson_unigram``: Unigram (SentencePiece's other algorithm) goes the other way: every
   piece has a probability, a word is cut where the product of its pieces' probabilities
   is highest (``viterbi``), EM re-estimates the probabilities (``forward``,
   ``backward``, ``unigram_em_step``), and pruning removes the pieces the corpus misses
   least (``unigram_prune``). Exercise 6 asks for all of it, with its exact rules.
5. ``lesson_spellings``: a tokenizer sees bytes, not letters: one Persian word has several
   spellings a reader takes for one (``spellings``), with or without its zero-width
   non-joiner, with Persian or Arabic yeh and kaf, and each is other bytes and another
   count of tokens.

This module gathers their names: ``from exercises.lesson import BPETokenizer`` works as
well as ``from exercises.lesson_bpe import BPETokenizer``.

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

from .lesson_bpe import BPETokenizer
from .lesson_chars import CharTokenizer
from .lesson_pairs import get_pair_counts, merge_pair
from .lesson_spellings import ARABIC_TWINS, ZWNJ, spellings
from .lesson_unigram import backward, forward, logsumexp, unigram_em_step, unigram_prune, viterbi
from .lesson_vocabulary import analyze_vocabulary, zipf_slope

__all__ = [
    "CharTokenizer",
    "get_pair_counts", "merge_pair",
    "BPETokenizer",
    "analyze_vocabulary", "zipf_slope",
    "viterbi", "logsumexp", "forward", "backward", "unigram_em_step", "unigram_prune",
    "ZWNJ", "ARABIC_TWINS", "spellings",
]
