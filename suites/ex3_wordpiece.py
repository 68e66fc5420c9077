"""Exercise 3: WordPiece scoring against BPE's raw count. Properties of wordpiece_score,
word_units, train_wordpiece, train_bpe_pieces, tokenize_wordpiece and compare_vocabularies,
graded against the docstrings' rules."""

import re
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.signatures import graded_functions
from autograder.suite import expect, expect_bad_input_rules, expect_close, expect_equal, expect_error, say, show
from tokcourse.grading import strategies as S

points = pytest.mark.points
hidden = pytest.mark.hidden
docstring_examples = pytest.mark.examples  # the stub's >>> examples a property checks (autograder.engine.examples)

wp_texts = st.one_of(S.word_texts(), S.wordpiece_tie_texts(), S.texts(40))


def _expect_same_training(student, reference, text, num_merges):
    expect_equal(student.train_wordpiece(text, num_merges), reference.train_wordpiece(text, num_merges),
                 f"train_wordpiece({text!r}, {num_merges})")


def _mean_len(tokens):
    distinct = set(tokens)
    return sum(len(t.removeprefix("##")) for t in distinct) / len(distinct) if distinct else 0.0


# --------------------------------------------------------------------------- score and units


@points(1)
@given(pair_count=st.integers(0, 60), left_count=st.integers(1, 60), right_count=st.integers(1, 60))
@example(pair_count=2, left_count=4, right_count=5)
@example(pair_count=1, left_count=3, right_count=11)
@example(pair_count=1, left_count=5, right_count=7)
@example(pair_count=7, left_count=10**9 + 7, right_count=10**9 + 9)
def test_wordpiece_score_divides_integer_product_once(student, pair_count, left_count, right_count):
    """wordpiece_score is pair_count / (left_count * right_count): the ints multiplied, then one division."""
    expect_equal(student.wordpiece_score(pair_count, left_count, right_count), pair_count / (left_count * right_count),
                 f"wordpiece_score({pair_count}, {left_count}, {right_count})")


@hidden
@points(1)
@given(pair_count=st.integers(0, 60), count=st.integers(1, 60), bad=st.integers(-3, 0))
@example(pair_count=1, count=5, bad=0)
def test_bad_counts_raise_value_error_naming_them(student, pair_count, count, bad):
    """A unit count below 1 or a negative pair count is a ValueError naming that count."""
    for args, name in (((pair_count, bad, count), "left_count"), ((pair_count, count, bad), "right_count"),
                       ((bad - 1, count, count), "pair_count")):
        expect_error(lambda args=args: student.wordpiece_score(*args), ("ValueError",),
                     f"wordpiece_score{args}", naming=(name,))


@points(1)
@docstring_examples("word_units('hug')")
@given(word=st.one_of(st.text("abc中é", max_size=6), S.world_texts(6)))
@example(word="hug")
@example(word="")
@example(word="a")
def test_word_units_prefix_continuations_with_hashes(student, word):
    """word_units keeps the first character as it is and writes '##' before every other one."""
    expect_equal(student.word_units(word), [c if i == 0 else "##" + c for i, c in enumerate(word)],
                 f"word_units({word!r})")


# --------------------------------------------------------------------------- trainers


@points(2)
@docstring_examples("train_wordpiece('hug hugs pug pun bun', 3)", "train_bpe_pieces('hug hugs pug pun bun', 3)")
@given(num_merges=st.integers(3, 8),
       letters=st.lists(st.sampled_from(string.ascii_lowercase), min_size=7, max_size=7, unique=True),
       repeat=st.integers(1, 3))
@example(num_merges=3, letters=list("bghnpsu"), repeat=2)
def test_train_wordpiece_worked_example(student, num_merges, letters, repeat):
    ("""train_wordpiece('hug hugs pug pun bun', 3) is the docstring's vocabulary (##gs first, then hu, hugs), and so """
     """with other letters.""")
    text = "hug hugs pug pun bun"
    wordpiece = ['##g', '##n', '##s', '##u', 'b', 'h', 'p', '##gs', 'hu', 'hugs']
    bpe = ['##g', '##n', '##s', '##u', 'b', 'h', 'p', '##ug', 'hug', '##un']
    expect_equal(student.train_wordpiece(text, 3), wordpiece, f"train_wordpiece({text!r}, 3)")
    expect_equal(student.train_bpe_pieces(text, 3), bpe, f"train_bpe_pieces({text!r}, 3)")
    longer = student.train_wordpiece(text, num_merges)  # more merges only append to the vocabulary
    expect_equal(longer[:10] if isinstance(longer, list) else longer, wordpiece,
                 say("the first 10 tokens of {call}", call=f"train_wordpiece({text!r}, {num_merges})"))
    # letters renamed in the same order (the sorted units keep their order), every count times `repeat`
    rename = str.maketrans("bghnpsu", "".join(sorted(letters)))
    other = " ".join([text] * repeat).translate(rename)
    expect_equal(student.train_wordpiece(other, 3), [token.translate(rename) for token in wordpiece],
                 f"train_wordpiece({other!r}, 3)")
    expect_equal(student.train_bpe_pieces(other, 3), [token.translate(rename) for token in bpe],
                 f"train_bpe_pieces({other!r}, 3)")


@points(2)
@given(text=wp_texts, num_merges=S.merges(25))
@example(text="", num_merges=3)
@example(text="hug hugs pug pun bun hugs", num_merges=10)
def test_train_wordpiece_picks_highest_score_like_reference(student, reference, text, num_merges):
    """train_wordpiece merges by the highest WordPiece score and returns the sorted units, then the merged tokens."""
    _expect_same_training(student, reference, text, num_merges)


@hidden
@points(2)
@given(text=S.wordpiece_tie_texts(), num_merges=st.integers(1, 8))
@example(text="ab xb cd cd", num_merges=1)
@example(text="hug hugs pug pun bun", num_merges=2)
def test_wordpiece_ties_break_by_pair_count_then_first_occurrence(student, reference, text, num_merges):
    """Among pairs with equal scores, train_wordpiece takes the highest pair count, then the first occurrence."""
    _expect_same_training(student, reference, text, num_merges)


@hidden
@points(1)
@given(text=S.single_unit_word_texts(), num_merges=st.integers(1, 8))
@example(text="a a ab cd", num_merges=1)
def test_unit_counts_include_one_unit_words(student, reference, text, num_merges):
    """count(unit) counts every occurrence of a unit, one-unit words included."""
    _expect_same_training(student, reference, text, num_merges)


@points(1)
@given(text=wp_texts, num_merges=S.merges(15))
@example(text="ab ab abc", num_merges=3)
@example(text="xabc xabc xab", num_merges=4)
def test_merged_unit_drops_right_continuation_prefix(student, text, num_merges):
    """Merging 'a' + '##b' gives 'ab' and '##a' + '##b' gives '##ab': only the right part loses its '##'."""
    words = re.findall(r"\w+|[^\w\s]", text)
    units = {c if i == 0 else "##" + c for word in words for i, c in enumerate(word)}
    for name in ("train_wordpiece", "train_bpe_pieces"):
        vocab = getattr(student, name)(text, num_merges)
        what = f"{name}({text!r}, {num_merges})"
        expect(type(vocab) is list, say("{what}: expected a list, got {got}", what=what, got=show(vocab)))
        for token in vocab:
            expect(type(token) is str and "##" not in token.removeprefix("##") and token not in ("", "##"),
                   say("{what}: {token!r} is not a unit (a {mark} may only come first): {vocab}", what=what,
                       token=token, mark="'##'", vocab=show(vocab)))
        expect(units <= set(vocab), say("{what}: the units of the text's words should all be in it, "
                                        "{missing!r} are missing: {vocab}", what=what,
                                        missing=sorted(units - set(vocab))[:5], vocab=show(vocab)))
        if num_merges and any(len(word) > 1 for word in words):
            expect(any(len(token.removeprefix("##")) > 1 for token in vocab),
                   say("{what}: no merged unit, though a word has two units to merge: {vocab}", what=what,
                       vocab=show(vocab)))


@hidden
@points(2)
@given(text=wp_texts, num_merges=S.merges(25))
@example(text="hug hugs pug pun bun", num_merges=3)
def test_train_bpe_pieces_picks_highest_count_like_reference(student, reference, text, num_merges):
    """train_bpe_pieces merges the most frequent pair (ties: first occurrence) over the same units."""
    expect_equal(student.train_bpe_pieces(text, num_merges), reference.train_bpe_pieces(text, num_merges),
                 f"train_bpe_pieces({text!r}, {num_merges})")


# --------------------------------------------------------------------------- tokenizer


@points(2)
@docstring_examples("tokenize_wordpiece(['h', '##u', '##g', 'hu', '##gs'], 'hugs hug bug')")
@given(vocab=S.wordpiece_vocab(), text=S.word_texts(8))
@example(vocab=["h", "##u", "##g", "hu", "##gs"], text="hugs hug bug")
@example(vocab=["a", "ab", "abc", "##c", "##d"], text="abcd abd")
def test_tokenize_wordpiece_greedy_longest_match_first(student, reference, vocab, text):
    """tokenize_wordpiece takes the longest vocabulary piece first, '##' in front unless it starts the word."""
    expect_equal(student.tokenize_wordpiece(vocab, text), reference.tokenize_wordpiece(vocab, text),
                 f"tokenize_wordpiece({vocab!r}, {text!r})")


@hidden
@points(1)
@given(vocab=S.wordpiece_vocab(), text=S.word_texts(8), unk=st.sampled_from(["[UNK]", "<?>"]),
       max_chars=st.integers(1, 6))
@example(vocab=["a", "##a"], text="aa aaa", unk="[UNK]", max_chars=2)
@example(vocab=["ab", "##c"], text="abd", unk="[UNK]", max_chars=9)
@example(vocab=["é", "##é", "中", "##文"], text="éé 中文", unk="[UNK]", max_chars=2)  # characters, not bytes
def test_unknown_and_too_long_words_become_one_unk(student, reference, vocab, text, unk, max_chars):
    ("""A word that cannot be covered, or has more than max_chars characters (100 unless given), becomes a single """
     """unk; max_chars below 1 is a ValueError.""")
    expect_equal(student.tokenize_wordpiece(vocab, text, unk, max_chars),
                 reference.tokenize_wordpiece(vocab, text, unk, max_chars),
                 f"tokenize_wordpiece({vocab!r}, {text!r}, {unk!r}, {max_chars})")
    expect_equal(student.tokenize_wordpiece(vocab, text, unk=unk, max_chars=max_chars),
                 reference.tokenize_wordpiece(vocab, text, unk, max_chars),
                 f"tokenize_wordpiece({vocab!r}, {text!r}, unk={unk!r}, max_chars={max_chars})")
    edge = f"{'a' * 100} {'a' * 101} {'a' * 99}"  # the default max_chars: 100 characters still count
    expect_equal(student.tokenize_wordpiece(["a", "##a"], edge), reference.tokenize_wordpiece(["a", "##a"], edge),
                 "tokenize_wordpiece(['a', '##a'], 'a' * 100 + ' ' + 'a' * 101 + ' ' + 'a' * 99)")
    expect_error(lambda: student.tokenize_wordpiece(vocab, text, unk, 0), ("ValueError",),
                 f"tokenize_wordpiece({vocab!r}, {text!r}, {unk!r}, 0)", naming=("max_chars",))


# --------------------------------------------------------------------------- compare_vocabularies


@points(2)
@given(a=S.vocab_lists(), b=S.vocab_lists())
@example(a=["a", "##b", "ab"], b=["ab", "c"])
@example(a=[], b=[])
@example(a=["a", "a", "b"], b=["a"])
def test_compare_vocabularies_as_sets_with_jaccard(student, reference, a, b):
    """compare_vocabularies: shared count, sorted tokens only in a / only in b, and the Jaccard index of the sets."""
    got = student.compare_vocabularies(a, b)
    expected = reference.compare_vocabularies(a, b)
    what = f"compare_vocabularies({a!r}, {b!r})"
    expect(isinstance(got, dict), say("{what}: expected a dict, got {got}", what=what, got=show(got)))
    for key in ("shared", "only_a", "only_b"):
        expect_equal(got.get(key), expected[key], f"{what}[{key!r}]")
    expect_close(got.get("jaccard"), expected["jaccard"], f"{what}['jaccard']")


@hidden
@points(1)
@given(a=S.vocab_lists(), b=S.vocab_lists())
@example(a=["a", "##b", "ab"], b=["ab", "c"])
@example(a=["ab", "ab", "c"], b=["##abc", "##abc"])
@example(a=["##ab", "##中"], b=[])
@example(a=["#a", "###b", "a##"], b=["####"])  # one leading '##' only, and only a leading one
def test_mean_length_per_distinct_token_ignores_continuation_prefix(student, a, b):
    """mean_len_a / mean_len_b: mean characters per distinct token, a leading '##' not counted, 0.0 when empty."""
    got = student.compare_vocabularies(a, b)
    what = f"compare_vocabularies({a!r}, {b!r})"
    expect(isinstance(got, dict), say("{what}: expected a dict, got {got}", what=what, got=show(got)))
    expect_close(got.get("mean_len_a"), _mean_len(a), f"{what}['mean_len_a']")
    expect_close(got.get("mean_len_b"), _mean_len(b), f"{what}['mean_len_b']")


# --------------------------------------------------------------------------- bad input


@points(1)
def test_bad_argument_types_raise_type_errors_by_the_shared_rules(student, course):
    ("""Every graded function, on every parameter, follows the type rules of exercises/__init__.py: True is not an """
     """int, a tuple is not a list, one item of the wrong type in a list of str is a TypeError too, each naming the """
     """argument.""")
    expect_bad_input_rules(student, graded_functions(course, "ex3_wordpiece"))
