"""Exercise 6 (bonus): a Unigram language-model tokenizer. Properties of viterbi_segment,
marginal_logprob, expected_counts, em_step, removal_loss and train_unigram, graded against
the docstrings' rules.

The oracles here enumerate every segmentation of short texts (``_segmentations``): Viterbi
against the best of them (``_brute_viterbi``), the forward algorithm against the log of
their summed probabilities (``_brute_marginal``), forward-backward against their posterior
piece counts (``_brute_counts``), and the removal loss against Viterbi redone without the
piece. Log-probabilities are dyadic (multiples of 1/8, ``dyadic_vocab``), so sums of a few of
them are exact floats and Viterbi's scores and ties can be compared with ``==``; the
quantities that go through ``exp`` and ``log`` are compared within a tolerance.
"""

import functools
import math
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.signatures import graded_functions
from autograder.suite import (
    expect,
    expect_bad_input_rules,
    expect_close,
    expect_equal,
    expect_error,
    say,
    show,
    together,
)

points = pytest.mark.points
hidden = pytest.mark.hidden
docstring_examples = pytest.mark.examples  # the stub's >>> examples a property checks (autograder.engine.examples)

WORD = r"\w+|[^\w\s]"
EXAMPLE = {"a": -2.0, "b": -2.0, "ab": -4.0, "ba": -3.0}


# --------------------------------------------------------------------------- oracles


def _segmentations(text, vocab):
    """Every segmentation of ``text`` into pieces of ``vocab``, as lists."""
    if not text:
        yield []
        return
    for cut in range(1, len(text) + 1):
        if text[:cut] in vocab:
            for rest in _segmentations(text[cut:], vocab):
                yield [text[:cut], *rest]


def _score(pieces, logprobs):
    total = 0.0
    for piece in pieces:
        total += logprobs[piece]
    return total


def _brute_viterbi(text, logprobs):
    """The best segmentation by score, ties to the longest last piece, then second-to-last, ..."""
    segs = list(_segmentations(text, logprobs))
    if not segs:
        return None
    best = max(segs, key=lambda s: (_score(s, logprobs), [len(p) for p in reversed(s)]))
    return best, _score(best, logprobs)


def _brute_marginal(text, logprobs):
    scores = [_score(s, logprobs) for s in _segmentations(text, logprobs)]
    top = max(scores)
    return top + math.log(sum(math.exp(x - top) for x in scores))


def _brute_counts(word_counts, logprobs):
    expected = {piece: 0.0 for piece in logprobs}
    for word, n in word_counts.items():
        total = _brute_marginal(word, logprobs)
        for seg in _segmentations(word, logprobs):
            posterior = math.exp(_score(seg, logprobs) - total)
            for piece in seg:
                expected[piece] += n * posterior
    return expected


def _likelihood(word_counts, logprobs):
    return sum(n * _brute_marginal(word, logprobs) for word, n in word_counts.items())


def _logsumexp(values):
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def _words(text):
    counts = {}
    for word in re.findall(WORD, text):
        counts[word] = counts.get(word, 0) + 1
    return counts


def _seed_size(text, max_piece_len, seed_size):
    """How many pieces the docstring's seed vocabulary has."""
    substrings, chars = {}, set()
    for word, n in _words(text).items():
        chars |= set(word)
        for start in range(len(word)):
            for stop in range(start + 2, min(len(word), start + max_piece_len) + 1):
                substrings[word[start:stop]] = substrings.get(word[start:stop], 0) + n
    return len(chars), len(chars) + min(seed_size, sum(n >= 2 for n in substrings.values()))


# --------------------------------------------------------------------------- strategies

ALPHABET = "abc"
dyadic = st.integers(-24, -1).map(lambda k: k / 8)


@st.composite
def dyadic_vocab(draw, alphabet=ALPHABET, all_chars=True):
    """A vocabulary over ``alphabet``: its characters (all of them unless ``all_chars`` is
    false) and a few longer pieces, in any order, each with a log-probability k/8."""
    chars = list(alphabet) if all_chars else draw(st.lists(st.sampled_from(alphabet), unique=True))
    longer = draw(st.lists(st.text(alphabet, min_size=2, max_size=4), max_size=8, unique=True))
    return {piece: draw(dyadic) for piece in draw(st.permutations(chars + longer))}  # any order: it decides ties


short_texts = st.text(ALPHABET, max_size=8)
short_words = st.dictionaries(st.text(ALPHABET, min_size=1, max_size=6), st.integers(1, 5), min_size=1, max_size=4)
# 2,806 substrings seen twice, more than any seed_size default but the pinned 10,000 keeps
LONG_WORDS = " ".join(["".join(chr(97 + (k + j * (k + 3)) % 26) for j in range(18)) for k in range(20)] * 2)
word_texts = st.lists(st.sampled_from(["hug", "hugs", "pug", "pun", "bun", "ab", "abab", "ba", "a", "tab", "!", "ta"]),
                      max_size=14).map(" ".join)


# --------------------------------------------------------------------------- Viterbi


@points(1)
@docstring_examples("viterbi_segment('aba', logprobs)")
@given(text=short_texts, logprobs=dyadic_vocab())
@example(text="aba", logprobs=EXAMPLE)
@example(text="", logprobs=EXAMPLE)
@example(text="abcab", logprobs={"a": -1.0, "b": -1.5, "c": -0.5, "ab": -3.0, "bca": -2.0, "cab": -2.125})
@example(text="abc", logprobs={"ab": -1.0, "bc": -1.0, "c": -1.0})  # "bc" starts where nothing ends
def test_viterbi_segment_is_the_best_of_every_segmentation(student, text, logprobs):
    """viterbi_segment returns the segmentation with the highest left-to-right sum and that sum
    (every segmentation of the text enumerated)."""
    pieces, score = _brute_viterbi(text, logprobs)
    got = student.viterbi_segment(text, logprobs)
    what = f"viterbi_segment({text!r}, {logprobs!r})"
    expect(isinstance(got, tuple) and len(got) == 2,
           say("{what}: expected a {shape} tuple, got {got}", what=what, shape="(pieces, score)", got=show(got)))
    expect_equal(got[1], score, say("{what}: the score", what=what))
    segs = [s for s in _segmentations(text, logprobs) if _score(s, logprobs) == score]
    expect(got[0] in segs, say("{what}: {got} is not one of the best segmentations {best}", what=what,
                               got=show(got[0]), best=show(segs)))


@points(1)
@docstring_examples("viterbi_segment('ab', logprobs)")
@given(text=st.text("ab", min_size=2, max_size=8), logprobs=dyadic_vocab("ab"), unit=st.integers(1, 3))
@example(text="ab", logprobs=EXAMPLE, unit=1)
@example(text="aaaa", logprobs={"a": -1.0, "aa": -2.0, "aaa": -3.0, "b": -1.0}, unit=1)
def test_viterbi_ties_go_to_the_longest_last_piece(student, text, logprobs, unit):
    """Among equally good segmentations the one whose last piece is longest wins, then the
    one whose second-to-last piece is longest, and so on."""
    logprobs = {p: -len(p) * unit / 8 for p in logprobs}  # every segmentation ties
    expect_equal(student.viterbi_segment(text, logprobs), _brute_viterbi(text, logprobs),
                 f"viterbi_segment({text!r}, {logprobs!r})")


# --------------------------------------------------------------------------- forward, forward-backward


@points(1)
@docstring_examples("marginal_logprob('ab', logprobs)")
@given(text=short_texts, logprobs=dyadic_vocab())
@example(text="ab", logprobs=EXAMPLE)
@example(text="", logprobs=EXAMPLE)
@example(text="abab", logprobs={"a": -1.0, "b": -1.0, "ab": -1.5, "abab": -2.5, "ba": -1.25, "c": -1.0})
def test_marginal_logprob_sums_every_segmentation(student, text, logprobs):
    """marginal_logprob is log(Σ exp(score)) over every segmentation (enumerated here); 0.0 for ''."""
    expected = _brute_marginal(text, logprobs)
    expect_close(student.marginal_logprob(text, logprobs), expected, f"marginal_logprob({text!r}, {logprobs!r})")
    if not text:
        expect_equal(student.marginal_logprob(text, logprobs), 0.0, f"marginal_logprob('', {logprobs!r})")


@points(1)
@given(word_counts=short_words, logprobs=dyadic_vocab())
@example(word_counts={"ab": 3}, logprobs={"a": -2.0, "b": -2.0, "ab": -4.0})
@example(word_counts={"ab": 1, "aba": 2}, logprobs={**EXAMPLE, "c": -1.0, "cc": -1.0})
@example(word_counts={"abcd": 1}, logprobs={"a": -1.0, "b": -1.0, "c": -1.0, "bcd": -1.0})  # a + b + c leads nowhere
def test_expected_counts_are_posterior_piece_counts(student, word_counts, logprobs):
    """expected_counts gives each piece's count averaged over the posterior of every segmentation
    (enumerated here), times the word's count; keys are the vocabulary's, in its order."""
    expected = _brute_counts(word_counts, logprobs)
    got = student.expected_counts(word_counts, logprobs)
    what = f"expected_counts({word_counts!r}, {logprobs!r})"
    expect(isinstance(got, dict) and list(got) == list(logprobs),
           say("{what}: expected a dict with the keys {keys!r} in that order, got {got}", what=what,
               keys=list(logprobs), got=show(got)))
    for piece, value in expected.items():
        expect_close(got[piece], value, f"{what}[{piece!r}]")


# --------------------------------------------------------------------------- EM


@points(1)
@given(word_counts=short_words, logprobs=dyadic_vocab())
@example(word_counts={"ab": 3}, logprobs={"a": -2.0, "b": -2.0, "ab": -4.0, "c": -1.0})
@example(word_counts={"abab": 2, "ba": 1}, logprobs={"a": -1.0, "b": -1.0, "ab": -1.5, "abab": -2.5, "ba": -1.25,
                                                      "c": -0.5})
@example(word_counts={"ab": 1, "aaaa": 1}, logprobs={"a": -1.0, "b": -1.0, "ab": -746.0})  # "ab"'s share underflows
def test_em_step_normalises_expected_counts_and_never_lowers_the_likelihood(student, word_counts, logprobs):
    """em_step gives log(expected / Σ expected), dropping pieces never expected; from a normalised
    vocabulary, three steps in a row never lower the corpus's marginal log-likelihood (within 1e-9)."""
    norm = _logsumexp(list(logprobs.values()))
    current = {p: v - norm for p, v in logprobs.items()}
    before = _likelihood(word_counts, current)
    for step in range(3):
        what = say("{call} (step {step})", call=f"em_step({word_counts!r}, {current!r})", step=step + 1)
        counts = _brute_counts(word_counts, current)
        total = sum(counts.values())
        expected = {p: math.log(c) - math.log(total) for p, c in counts.items() if c > 0}
        got = student.em_step(word_counts, current)
        expect(isinstance(got, dict) and list(got) == list(expected),
               say("{what}: expected the pieces {pieces!r} in that order, got {got}", what=what,
                   pieces=list(expected), got=show(got)))
        for piece, value in expected.items():
            expect_close(got[piece], value, f"{what}[{piece!r}]")
        current = got
        after = _likelihood(word_counts, current)
        expect(after >= before - 1e-9 * max(1.0, abs(before)),
               say("{what}: the marginal log-likelihood fell from {before!r} to {after!r}", what=what,
                   before=before, after=after))
        before = after


# --------------------------------------------------------------------------- pruning


@points(1)
@docstring_examples("removal_loss({'ab': 1, 'aba': 1}, logprobs)")
@given(word_counts=short_words, logprobs=dyadic_vocab())
@example(word_counts={"ab": 1, "aba": 1}, logprobs=EXAMPLE)
@example(word_counts={"abc": 2, "ab": 1}, logprobs={"a": -1.0, "b": -1.0, "ab": -0.5, "abc": -0.25})
def test_removal_loss_is_the_fall_of_the_viterbi_likelihood(student, word_counts, logprobs):
    """removal_loss: for each piece longer than one character, in order, L - L' where L' is the
    corpus's Viterbi log-likelihood without that piece (inf when a word can no longer be segmented)."""
    full = sum(n * _brute_viterbi(w, logprobs)[1] for w, n in word_counts.items())
    expected = {}
    for piece in logprobs:
        if len(piece) > 1:
            rest = {other: value for other, value in logprobs.items() if other != piece}
            best = [_brute_viterbi(w, rest) for w in word_counts]
            expected[piece] = math.inf if None in best else full - sum(
                n * b[1] for n, b in zip(word_counts.values(), best, strict=True))
    got = student.removal_loss(word_counts, logprobs)
    what = f"removal_loss({word_counts!r}, {logprobs!r})"
    expect(isinstance(got, dict) and list(got) == list(expected),
           say("{what}: expected the pieces {pieces!r} in that order, got {got}", what=what, pieces=list(expected),
               got=show(got)))
    for piece, value in expected.items():
        if value == math.inf:
            expect_equal(got[piece], math.inf, f"{what}[{piece!r}]")
        else:
            expect_close(got[piece], value, f"{what}[{piece!r}]")


# --------------------------------------------------------------------------- train_unigram


@points(1)
@given(text=word_texts, vocab_size=st.integers(1, 14), max_piece_len=st.integers(1, 5))
@example(text="hug hugs pug pun bun hug", vocab_size=8, max_piece_len=16)
@example(text="", vocab_size=3, max_piece_len=16)
@example(text="abab abab ba tab ta", vocab_size=5, max_piece_len=3)
@example(text="abab abab", vocab_size=4, max_piece_len=4)  # EM starves "ab" to an expected count of 0.0
@example(text="hugs hugs", vocab_size=14, max_piece_len=2)  # "gs" starts at the third character
@example(text="aaa", vocab_size=5, max_piece_len=3)  # "aa" occurs twice in "aaa", overlapping
@example(text="hug, hug, hugs!", vocab_size=30, max_piece_len=4)  # words are WORD_PATTERN's: "g," is no piece
@example(text=LONG_WORDS, vocab_size=10**6, max_piece_len=16)  # the seed keeps 10,000 substrings by default
def test_train_unigram_keeps_every_character_and_a_distribution_of_the_pinned_size(student, text, vocab_size,
                                                                                 max_piece_len):
    """train_unigram keeps every character of the words, its log-probabilities sum to 1 (log-sum-exp 0
    within 1e-9), it has min(vocab_size, seed size) pieces (at least the characters) and the same
    result on every run."""
    got = student.train_unigram(text=text, vocab_size=vocab_size, max_piece_len=max_piece_len)
    what = f"train_unigram({text!r}, {vocab_size}, max_piece_len={max_piece_len})"
    expect(isinstance(got, dict), say("{what}: expected a dict, got {got}", what=what, got=show(got)))
    chars, seed = _seed_size(text, max_piece_len, 10_000)
    missing = sorted(set("".join(_words(text))) - set(got))
    expect(not missing, say("{what}: the characters {missing!r} are missing: {got}", what=what, missing=missing,
                            got=show(got)))
    expect(all(isinstance(p, str) and 0 < len(p) <= max_piece_len and any(p in w for w in _words(text))
               for p in got), say("{what}: a piece is not a substring of a word, or too long: {got}", what=what,
                                  got=show(got)))
    expect_equal(len(got), max(chars, min(vocab_size, seed)), say("{what}: the number of pieces", what=what))
    if got:
        expect(all(type(v) is float for v in got.values()),
               say("{what}: log-probabilities must be floats: {got}", what=what, got=show(got)))
        total = _logsumexp(list(got.values()))
        expect(abs(total) <= 1e-9,
               say("{what}: the probabilities sum to {sum}, not 1", what=what, sum=f"exp({total!r})"))
    expect_equal(student.train_unigram(text, vocab_size, max_piece_len=max_piece_len), got,
                 say("{what} run again", what=what))


@hidden
@points(1)
@given(text=word_texts, vocab_size=st.integers(4, 16),
       options=st.fixed_dictionaries({}, optional={"em_iterations": st.integers(0, 3), "seed_size": st.integers(0, 8),
                                                   "shrink_factor": st.sampled_from([0.3, 0.5, 0.75, 0.9])}))
@example(text="hug hugs pug pun bun hug", vocab_size=8, options={})  # every default
@example(text="abab abab ba tab ta hug hugs", vocab_size=9, options={"em_iterations": 1, "shrink_factor": 0.5})
@example(text="hugs hugs", vocab_size=6, options={"em_iterations": 0, "shrink_factor": 0.5})  # tied losses
@example(text="hug hugs pug pun bun hug", vocab_size=4, options={"shrink_factor": 0.3})  # below half in one round
@example(text="hug hugs pug pun bun hug", vocab_size=8, options={"seed_size": 2})
@example(text="hugs hugs", vocab_size=12, options={"seed_size": 4})  # the cut falls inside a tie of scores
@example(text="internationalizations internationalizations", vocab_size=300, options={})  # max_piece_len=16
@example(text="hug hug abab abab", vocab_size=7, options={})  # EM starves "a" and "b": put back in place
@example(text="aaaa baaab aaa", vocab_size=6, options={"shrink_factor": 0.5})  # overlapping occurrences count
def test_train_unigram_prunes_smallest_losses_like_reference(student, reference, text, vocab_size, options):
    """train_unigram seeds, runs EM and prunes the pieces of smallest removal loss in the pinned
    order, with the pinned defaults: the same pieces, in the same order, with the same
    log-probabilities as the reference."""
    expected = reference.train_unigram(text, vocab_size, **options)
    got = student.train_unigram(text, vocab_size, **options)
    what = f"train_unigram({', '.join([repr(text), str(vocab_size), *(f'{k}={v!r}' for k, v in options.items())])})"
    expect(isinstance(got, dict) and list(got) == list(expected),
           say("{what}: expected the pieces {pieces!r}, got {got}", what=what, pieces=list(expected), got=show(got)))
    for piece, value in expected.items():  # a starved character (-1000) is compared loosely
        if value > -100:
            expect_close(got[piece], value, f"{what}[{piece!r}]", rel=1e-6)
        else:
            expect(type(got[piece]) is float and got[piece] < -50,
                   say("{what}: expected {value!r}, got {got}", what=f"{what}[{piece!r}]", value=value,
                       got=show(got[piece])))


# --------------------------------------------------------------------------- bad input


@points(1)
def test_bad_argument_types_raise_type_errors_by_the_shared_rules(student, course):
    ("""Every graded function, on every parameter, follows the type rules of exercises/__init__.py: True is not a """
     """number, bytes are not a str, one key or value of the wrong type in word_counts or logprobs is a TypeError """
     """too, each naming the argument.""")
    expect_bad_input_rules(student, graded_functions(course, "ex6_unigram"))


@points(1)
@given(text=st.text("ab", max_size=5), bad=st.sampled_from([0.5, float("nan"), float("inf"), -float("inf")]))
@example(text="ab", bad=0.5)
def test_bad_unigram_arguments_raise_errors_naming_them(student, text, bad):
    ("""Bad values are ValueErrors naming the argument: a log-probability above 0 or not finite, an empty piece, a """
     """count below 1, an option out of range; an uncovered text names text, a word no segmentation covers """
     """word_counts; within one argument its types come first (a TypeError).""")
    ok = {"a": -1.0, "b": -1.0}
    cases = [  # (function, arguments, keyword arguments, the error, the argument it names)
        ("viterbi_segment", (text, {"a": -1.0, "b": bad}), {}, "ValueError", "logprobs"),
        ("viterbi_segment", (text + "c", ok), {}, "ValueError", "text"),
        ("marginal_logprob", (text + "c", ok), {}, "ValueError", "text"),
        ("marginal_logprob", ("ca", ok), {}, "ValueError", "text"),  # the last piece follows a gap
        ("marginal_logprob", (text, {"": -1.0, **ok}), {}, "ValueError", "logprobs"),
        ("expected_counts", ({"ab": 0}, ok), {}, "ValueError", "word_counts"),
        ("expected_counts", ({"ca": 1}, ok), {}, "ValueError", "word_counts"),
        ("expected_counts", ({"ab": 1}, {"": -1.0, **ok, "c": "x"}), {}, "TypeError", "logprobs"),  # types first
        ("em_step", ({"ab": 0, "a": "2"}, ok), {}, "TypeError", "word_counts"),  # types first
        ("em_step", ({"ca": 1}, ok), {}, "ValueError", "word_counts"),
        ("removal_loss", ({"ab": 1}, {"": -1.0, **ok}), {}, "ValueError", "logprobs"),
        ("removal_loss", ({"ab": 1, "ca": 2}, ok), {}, "ValueError", "word_counts"),
        ("train_unigram", (text, 0), {}, "ValueError", "vocab_size"),
        ("train_unigram", (text, 5), {"max_piece_len": 0}, "ValueError", "max_piece_len"),
        *(("train_unigram", (text, 5), {"shrink_factor": factor}, "ValueError", "shrink_factor")
          for factor in (1.0, 0.0, -0.5, 1.5)),
        ("train_unigram", (text, 5), {"em_iterations": -1}, "ValueError", "em_iterations"),
        ("train_unigram", (text, 5), {"seed_size": -1}, "ValueError", "seed_size"),
    ]
    checks = []
    for function, args, kwargs, error, name in cases:
        shown = ", ".join([*map(repr, args), *(f"{key}={value!r}" for key, value in kwargs.items())])
        call = functools.partial(lambda function, args, kwargs: getattr(student, function)(*args, **kwargs),
                                 function, args, kwargs)
        checks.append(functools.partial(expect_error, call, (error,), f"{function}({shown})", naming=(name,)))
    together(checks)
