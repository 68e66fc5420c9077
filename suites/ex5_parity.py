"""Exercise 5: tiktoken-parity tuning. Properties of compression_ratio, ratio_curve and
merges_for_parity, graded against the docstrings' rules, and one real run on the course
corpus."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.signatures import graded_functions
from autograder.suite import expect, expect_bad_input_rules, expect_close, expect_equal, expect_error, say, show
from tokcourse.grading import encoders
from tokcourse.grading import strategies as S

points = pytest.mark.points
hidden = pytest.mark.hidden
docstring_examples = pytest.mark.examples  # the stub's >>> examples a property checks (autograder.engine.examples)

CORPUS_CHARS = 20_000  # the real run: the first 20,000 characters of the course corpus
CORPUS_MERGES = 200


def _is_curve(curve) -> bool:
    return isinstance(curve, list) and len(curve) > 0 and all(type(x) in (int, float) for x in curve)


def _check_curve(got, expected, what):
    expect(isinstance(got, list), say("{what}: expected a list of floats, got {got}", what=what, got=show(got)))
    expect(len(got) == len(expected), say("{what}: expected {wanted} ratios, got {count}: {got}", what=what,
                                          wanted=len(expected), count=len(got), got=show(got)))
    for k, (ratio, want) in enumerate(zip(got, expected, strict=True)):
        expect_close(ratio, want, f"{what}[{k}]")


def _known_curve(run: bool, size: int, max_merges: int) -> tuple[str, list[float]]:
    """A text whose curve is known without training: a run of 2**size equal bytes halves its
    tokens with every merge; size + 2 distinct bytes lose one token per merge."""
    if run:
        return "z" * 2**size, [0.5**k for k in range(min(size, max_merges) + 1)]
    n = size + 2
    return "qwertyuiop"[:n], [(n - k) / n for k in range(min(n - 1, max_merges) + 1)]


def _own_curve(student, text, max_merges):
    """The student's ratio curve of ``text``: merges_for_parity's rule is stated on ratio_curve's answer,
    so its properties judge it on the student's own curve (a wrong curve is the curve's properties')."""
    curve = student.ratio_curve(text, max_merges)
    expect(isinstance(curve, list) and all(type(x) in (int, float) for x in curve),
           say("{what}: expected a list of ratios, got {got}", what=f"ratio_curve({text!r}, {max_merges})",
               got=show(curve)))
    return curve


def _smallest(curve, threshold):
    """The smallest k with ``curve[k] <= threshold``, or None when there is none."""
    return next((k for k, ratio in enumerate(curve) if ratio <= threshold), None)


def _expect_parity(student, args, expected, what):
    """``merges_for_parity(*args)`` is ``expected``, or a ValueError when that is None."""
    if expected is None:
        expect_error(lambda: student.merges_for_parity(*args), ("ValueError",), what)
    else:
        expect_equal(student.merges_for_parity(*args), expected, what)


# --------------------------------------------------------------------------- compression_ratio


@points(1)
@docstring_examples("compression_ratio(utf8, 'héllo')", using={"utf8": "encoders.utf8_bytes"})
@given(name=st.sampled_from(["characters", "utf8_bytes", "whitespace_words"]), text=S.nonempty_texts())
@example(name="utf8_bytes", text="héllo")
@example(name="characters", text="中文")
def test_compression_ratio_is_tokens_over_utf8_bytes(student, sandbox, name, text):
    """compression_ratio is len(encode(text)) / len(text.encode('utf-8')), per byte, not per character."""
    expect_close(student.compression_ratio(getattr(sandbox.module("encoders"), name), text),
                 len(getattr(encoders, name)(text)) / len(text.encode("utf-8")),
                 f"compression_ratio({name}, {text!r})")


# --------------------------------------------------------------------------- ratio_curve


@points(2)
@docstring_examples("ratio_curve('aaaa', 5)")
@given(max_merges=st.integers(2, 10), run=st.booleans(), size=st.integers(1, 6))
@example(max_merges=3, run=False, size=5)
def test_ratio_curve_worked_example_aaaa(student, max_merges, run, size):
    ("""ratio_curve('aaaa', n) is [1.0, 0.5, 0.25]: (aa)(aa), then (aaaa), then no pair is left; so on other runs """
     """and texts.""")
    _check_curve(student.ratio_curve("aaaa", max_merges), [1.0, 0.5, 0.25], f"ratio_curve('aaaa', {max_merges})")
    _check_curve(student.ratio_curve("aaaa", 1), [1.0, 0.5], "ratio_curve('aaaa', 1)")
    _check_curve(student.ratio_curve("the then there", 2), [1.0, 11 / 14, 8 / 14], "ratio_curve('the then there', 2)")
    text, expected = _known_curve(run, size, max_merges)
    _check_curve(student.ratio_curve(text, max_merges), expected, f"ratio_curve({text!r}, {max_merges})")


@points(2)
@given(text=S.nonempty_texts(), max_merges=S.merges())
@example(text="the then there", max_merges=5)
@example(text="\x00ab\x00ba", max_merges=6)  # a merged id equal to a byte's (0 here) changes the curve
@example(text="\x01ab\x01ba", max_merges=6)
@example(text=" ".join(a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "abcdefghijklmnop"), max_merges=300)
@example(text="".join(a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "!\"#$%&'()*+,") * 2, max_merges=320)
def test_ratio_curve_matches_reference(student, reference, text, max_merges):
    """ratio_curve equals the reference's: the ratio after each merge of byte-level BPE trained on the text."""
    _check_curve(student.ratio_curve(text, max_merges), reference.ratio_curve(text, max_merges),
                 f"ratio_curve({text!r}, {max_merges})")


@points(2)
@given(text=S.nonempty_texts(), max_merges=S.merges())
@example(text="x", max_merges=3)
@example(text="abcabc", max_merges=4)
def test_ratio_curve_starts_at_one_and_never_increases(student, reference, text, max_merges):
    """The curve starts at exactly 1.0, has at most max_merges + 1 ratios, and falls with every merge."""
    curve = student.ratio_curve(text, max_merges)
    what = f"ratio_curve({text!r}, {max_merges})"
    expect(_is_curve(curve) and 1 <= len(curve) <= max_merges + 1,
           say("{what}: expected a list of 1 to {most} ratios, got {got}", what=what, most=max_merges + 1,
               got=show(curve)))
    expected = len(reference.ratio_curve(text, max_merges))
    expect(len(curve) == expected,
           say("{what}: expected {wanted} ratios (one per merge the text allows, plus 1.0), got {got}", what=what,
               wanted=expected, got=show(curve)))
    expect_equal(curve[0], 1.0, f"{what}[0]")
    for k in range(1, len(curve)):
        expect(0 < curve[k] < curve[k - 1],
               say("{what}: the ratio rises or stalls at merge {k}: {curve}", what=what, k=k, curve=show(curve)))


@hidden
@points(1)
@given(text=st.one_of(S.nonempty_texts(), S.tie_texts().filter(bool)), max_merges=S.merges())
@example(text="abcd", max_merges=5)
@example(text="abab", max_merges=5)
def test_ratio_curve_stops_early_only_when_no_pair_left(student, reference, text, max_merges):
    """The curve is shorter than max_merges + 1 only when a single token is left (no pair remains)."""
    curve = student.ratio_curve(text, max_merges)
    what = f"ratio_curve({text!r}, {max_merges})"
    expect(_is_curve(curve), say("{what}: expected a list of ratios, got {got}", what=what, got=show(curve)))
    size = len(text.encode("utf-8"))
    expected_len = min(max_merges + 1, size)  # each merge removes at least one token
    left = round(curve[-1] * size)
    expect(len(curve) == max_merges + 1 or left == 1,
           say("{what}: stopped after {merges} merges with {left} tokens left (a pair was still there)", what=what,
               merges=len(curve) - 1, left=left))
    expect(len(curve) <= expected_len,
           say("{what}: {ratios} ratios for {size} bytes", what=what, ratios=len(curve), size=size))
    expected = reference.ratio_curve(text, max_merges)
    expect(len(curve) == len(expected), say("{what}: expected {wanted} ratios, got {count}: {got}", what=what,
                                            wanted=len(expected), count=len(curve), got=show(curve)))
    expect_close(curve[-1], expected[-1], say("{what}, the ratio where the curve stops", what=f"{what}[-1]"))


@hidden
@points(2)
@given(text=st.one_of(S.tie_texts().filter(bool), S.overlap_tie_texts()), max_merges=st.integers(1, 12))
@example(text="aaabcbc", max_merges=3)
@example(text="badcab", max_merges=3)
@example(text="abcdcdab", max_merges=2)
def test_ratio_curve_ties_break_to_leftmost_first_occurrence(student, reference, text, max_merges):
    """With ties between equally frequent pairs, the curve follows the pair whose first occurrence is leftmost."""
    _check_curve(student.ratio_curve(text, max_merges), reference.ratio_curve(text, max_merges),
                 f"ratio_curve({text!r}, {max_merges})")


# --------------------------------------------------------------------------- merges_for_parity


@points(1)
@docstring_examples("merges_for_parity('aaaa', target_ratio=0.5)")
@given(run=st.booleans(), size=st.integers(1, 6), target=st.sampled_from([0.02, 0.1, 0.3, 0.5, 0.7, 0.9]))
@example(run=False, size=4, target=0.5)
def test_merges_for_parity_worked_example(student, run, size, target):
    ("""merges_for_parity('aaaa', 0.5) is 1: the threshold is 0.55 and 1 merge gives 0.5; so on other runs and texts """
     """(each judged on ratio_curve's own answer, with the default tolerance and max_merges).""")
    aaaa = _own_curve(student, "aaaa", 20000)
    on = f"ratio_curve('aaaa', 20000) = {show(aaaa)}"
    _expect_parity(student, ("aaaa", 0.5, 0.10, 20000), _smallest(aaaa, 0.55),
                   say("{call}, on {curve}", call="merges_for_parity('aaaa', 0.5, 0.10, 20000)", curve=on))
    _expect_parity(student, ("aaaa", 1.0), _smallest(aaaa, 1.1),
                   say("{call}, on {curve}", call="merges_for_parity('aaaa', 1.0)", curve=on))
    text, _curve = _known_curve(run, size, 20000)
    curve = _own_curve(student, text, 20000)
    _expect_parity(student, (text, target), _smallest(curve, target * (1 + 0.10)),
                   say("{call}, on {curve}", call=f"merges_for_parity({text!r}, {target!r})",
                       curve=f"ratio_curve({text!r}, 20000) = {show(curve)}"))


@points(2)
@given(text=S.nonempty_texts(), target=st.floats(0.05, 1.2), tolerance=S.tolerances(), max_merges=S.merges())
@example(text="aaaa", target=0.5, tolerance=0.1, max_merges=20)
def test_parity_returns_smallest_qualifying_k(student, text, target, tolerance, max_merges):
    ("""merges_for_parity returns the smallest k whose ratio (in ratio_curve's answer) is within tolerance (not """
     """k + 1, not any larger k).""")
    curve = _own_curve(student, text, max_merges)
    threshold = target * (1 + tolerance)
    what = f"merges_for_parity({text!r}, {target!r}, {tolerance!r}, {max_merges})"
    expected = _smallest(curve, threshold)
    if expected is None:
        expect_error(lambda: student.merges_for_parity(text, target, tolerance, max_merges), ("ValueError",), what)
        return
    got = student.merges_for_parity(text, target, tolerance, max_merges)
    expect(type(got) is int and 0 <= got < len(curve) and curve[got] <= threshold,
           say("{what}: {got} merges do not reach the threshold {threshold!r} (curve {curve})", what=what,
               got=show(got), threshold=threshold, curve=show(curve)))
    expect_equal(got, expected, say("{what}, on the curve {curve}", what=what, curve=show(curve)))


@points(2)
@given(text=S.nonempty_texts(), index=st.integers(0, 30), tolerance=S.tolerances(),
       nudge=st.sampled_from([1.0, 0.999, 1.001]))
@example(text="aaaa", index=1, tolerance=0.25, nudge=1.0)
@example(text="the then there", index=2, tolerance=0.1, nudge=1.0)
def test_parity_threshold_is_target_times_one_plus_tolerance(student, text, index, tolerance, nudge):
    """The threshold is target_ratio * (1 + tolerance), met with <= (a ratio equal to it counts)."""
    max_merges = 30
    curve = _own_curve(student, text, max_merges)
    expect(bool(curve) or len(text.encode("utf-8")) < 2,
           say("{what}: expected the ratios of the text's merges, got {got}",
               what=f"ratio_curve({text!r}, {max_merges})", got=show(curve)))
    if not curve or not all(ratio > 0 for ratio in curve):
        return  # no ratio to put the threshold on: the curve's own properties say what is wrong with it
    target = curve[index % len(curve)] / (1 + tolerance) * nudge  # the threshold lands on (or near) a ratio
    what = say("{what}, on the curve {curve}", what=f"merges_for_parity({text!r}, {target!r}, {tolerance!r}, "
                                                    f"{max_merges})", curve=show(curve))
    _expect_parity(student, (text, target, tolerance, max_merges), _smallest(curve, target * (1 + tolerance)), what)


@hidden
@points(1)
@given(text=S.nonempty_texts(), max_merges=st.integers(0, 10))
@example(text="aaaa", max_merges=20)
def test_unreachable_target_raises_value_error_naming_target_and_max_merges(student, text, max_merges):
    ("""When no k up to max_merges reaches the threshold, merges_for_parity raises ValueError naming target_ratio """
     """and max_merges.""")
    target = 0.5 / len(text.encode("utf-8"))  # below one token for the whole text: never reached
    expect_error(lambda: student.merges_for_parity(text, target, 0.1, max_merges), ("ValueError",),
            f"merges_for_parity({text!r}, {target!r}, 0.1, {max_merges})", naming=("target_ratio", "max_merges"))


@hidden
@points(1)
@given(tolerance=st.sampled_from([0, 0.0, 1, 1.0, -0.1, 1.5]), target=st.sampled_from([0, 0.0, -0.5]))
def test_parity_rejects_bad_tolerance_and_target(student, tolerance, target):
    ("""A tolerance outside (0, 1) or a target_ratio that is not above 0 is a ValueError naming it; an empty text """
     """and a negative max_merges are ValueErrors too.""")
    expect_error(lambda: student.merges_for_parity("abab", 0.5, tolerance), ("ValueError",),
            f"merges_for_parity('abab', 0.5, {tolerance!r})", naming=("tolerance",))
    expect_error(lambda: student.merges_for_parity("abab", target), ("ValueError",),
            f"merges_for_parity('abab', {target!r})", naming=("target_ratio",))
    expect_error(lambda: student.ratio_curve("", 3), ("ValueError",), "ratio_curve('', 3)", naming=("text",))
    expect_error(lambda: student.ratio_curve("abab", -1), ("ValueError",), "ratio_curve('abab', -1)",
                 naming=("max_merges",))


# --------------------------------------------------------------------------- the real run


@hidden
@points(2)
def test_real_corpus_ratio_curve_matches_reference(student, reference, sandbox, course):
    ("""The real run: ratio_curve on the first 20,000 characters of the course corpus for 200 merges, and """
     """cl100k_base's ratio.""")
    from tokcourse.assets import use_offline_tiktoken

    text = course.path(course.data["corpus"]).read_text(encoding="utf-8")[:CORPUS_CHARS]
    corpus = say("<the first {chars} characters of the corpus>", chars=CORPUS_CHARS)
    what = f"ratio_curve({corpus}, {CORPUS_MERGES})"
    _check_curve(student.ratio_curve(text, CORPUS_MERGES), reference.ratio_curve(text, CORPUS_MERGES), what)
    use_offline_tiktoken(course.root)
    expect_close(student.compression_ratio(sandbox.module("encoders").cl100k, text),
                 reference.compression_ratio(encoders.cl100k, text),
                 f"compression_ratio(cl100k, {corpus})")


# --------------------------------------------------------------------------- bad input


@points(1)
def test_bad_argument_types_raise_type_errors_by_the_shared_rules(student, sandbox, course):
    ("""Every graded function, on every parameter, follows the type rules of exercises/__init__.py: True is not a """
     """number, bytes are not a str, a number is not an encoder, each a TypeError naming the argument.""")
    expect_bad_input_rules(student, graded_functions(course, "ex5_parity"),
                           callable_value=sandbox.module("encoders").characters)
