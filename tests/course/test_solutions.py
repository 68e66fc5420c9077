"""The hidden reference solutions agree with the naive oracles in tests/course/naive.py, meet the
spec's worked examples and invariants, and reject bad arguments."""

import re
from pydoc_data.topics import topics

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from solutions import ex1_merge_tracing as ex1
from solutions import ex2_special_tokens as ex2
from solutions import ex3_wordpiece as ex3
from solutions import ex4_multilingual as ex4
from solutions import ex5_parity as ex5
from solutions import ex6_unigram as ex6
from tests.course import naive

pytestmark = pytest.mark.slow  # 500 examples a property: the edit loop's test-fast leaves it to make test

SETTINGS = settings(database=None, derandomize=True, deadline=None, max_examples=500)

# Fragments that make overlapping runs, ties, several scripts, emoji, whitespace runs and
# special-token strings (whole and broken) likely.
FRAGMENTS = [
    "a", "b", "aa", "aaaa", "ab", "abab", "abababab", "the", " the", "then", "hug", " pug",
    " ", "  ", "\n", "\n\n", "\t", " \n ", "é", "中文", "日本語", "سلام", " دنیا",
    "سلام دنیا", "😀", "👍🏽", "<pad>", "<eos>", "<unk>", "<eos", "pad>", "!", ",", "x",
]
texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join),
    st.text(alphabet="ab \n", max_size=40),  # tiny alphabet: many ties and overlaps
    st.text(max_size=20),
)
nonempty_texts = texts.filter(bool)
merges = st.integers(0, 40)
SAMPLE = "\n".join(topics[k] for k in sorted(topics))  # real English prose from the stdlib


# ---------------------------------------------------------------- exercise 1


@SETTINGS
@given(st.lists(st.integers(0, 3), max_size=30))
def test_get_pair_counts_matches_naive(ids):
    counts = ex1.get_pair_counts(ids)
    expected = naive.pair_counts([(ids, 1)])
    assert type(counts) is dict
    assert list(counts.items()) == list(expected.items())  # first-occurrence order too


@SETTINGS
@given(st.lists(st.integers(0, 3), max_size=30), st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_merge_pair_matches_naive(ids, pair):
    assert ex1.merge_pair(ids, pair, 99) == naive.merge(ids, pair, 99)


def test_merge_pair_is_left_to_right_without_overlap():
    assert ex1.merge_pair([5, 5, 5], (5, 5), 9) == [9, 5]
    assert ex1.get_pair_counts([5, 5, 5]) == {(5, 5): 2}


@SETTINGS
@given(texts, merges)
def test_trace_merges_matches_naive(text, num_merges):
    steps = ex1.trace_merges(text, num_merges)
    assert [tuple(step) for step in steps] == naive.trace_merges(text, num_merges)
    assert all(isinstance(step, ex1.MergeStep) for step in steps)


@pytest.mark.parametrize(
    "text, num_merges",
    [
        (SAMPLE[:3000], 250),  # real prose: many changing ties
        ("".join("ab "[(i * i + i // 7) % 3] for i in range(1500)), 600),  # until exhaustion
        ("a" * 257 + "b" * 64 + "ab" * 40, 100),  # long overlapping runs
    ],
)
def test_trace_merges_matches_naive_on_longer_texts(text, num_merges):
    steps = ex1.trace_merges(text, num_merges)
    assert [tuple(step) for step in steps] == naive.trace_merges(text, num_merges)


def test_trace_merges_worked_example():
    steps = ex1.trace_merges("the the the then", 2)
    assert [(s.pair, s.new_id, s.token, s.count) for s in steps] == [
        ((116, 104), 256, b"th", 4),
        ((256, 101), 257, b"the", 4),
    ]
    assert ex1.token_tree(steps, 257) == ((116, 104), 101)
    assert ex1.token_tree(steps, 116) == 116
    rendered = ex1.render_trace(steps)
    assert len(rendered.splitlines()) == 2
    assert all(part in rendered for part in ("th", "the", "12", "8", "4"))


def _leaves(tree):
    return [tree] if isinstance(tree, int) else _leaves(tree[0]) + _leaves(tree[1])


@SETTINGS
@given(texts, merges)
def test_token_tree_spells_the_token(text, num_merges):
    steps = ex1.trace_merges(text, num_merges)
    for step in steps:
        assert bytes(_leaves(ex1.token_tree(steps, step.new_id))) == step.token
    assert len(ex1.render_trace(steps).splitlines()) == len(steps)


def test_render_trace_escapes_and_replaces():
    steps = ex1.trace_merges("é\n\né\n\n", 2)
    rendered = ex1.render_trace(steps)
    assert "\\n" in rendered and "\ufffd" in rendered  # newline escaped, half of é replaced
    assert len(rendered.splitlines()) == 2  # one line per merge, raw newlines escaped


def test_trace_word_merges_worked_example():
    result = ex1.trace_word_merges({"lower": 5, "lowest": 2, "newest": 6}, 3)
    assert result == [(("w", "e"), 13), (("we", "s"), 8), (("wes", "t"), 8)]


@SETTINGS
@given(st.dictionaries(st.text("abc", max_size=6), st.integers(1, 5), max_size=6), merges)
def test_trace_word_merges_matches_naive(word_counts, num_merges):
    assert ex1.trace_word_merges(word_counts, num_merges) == naive.trace_word_merges(
        word_counts, num_merges
    )


# ---------------------------------------------------------------- exercise 2

allowed = st.one_of(
    st.sampled_from(["all", "none"]), st.sets(st.sampled_from(sorted(ex2.SPECIAL_TOKENS)))
)


def _naive_allowed(value):
    if value == "all":
        return naive.SPECIALS
    return {} if value == "none" else {s: naive.SPECIALS[s] for s in value}


@SETTINGS
@given(texts, texts, merges, allowed, st.booleans())
def test_special_tokenizer_matches_naive(train_text, text, num_merges, allowed_special, add_eos):
    tok = ex2.SpecialTokenizer().train(train_text, num_merges)
    merges_ = naive.train_special(train_text, num_merges)
    assert tok.merges == merges_
    assert tok.vocab_size == 3 + 256 + len(merges_)
    text += train_text  # so that the learned merges apply
    ids = tok.encode(text, allowed_special, add_eos=add_eos)
    assert ids == naive.encode_special(merges_, text, _naive_allowed(allowed_special), add_eos)
    assert tok.decode(ids) == naive.decode_special(merges_, ids)


@SETTINGS
@given(texts, st.text(max_size=40), merges, allowed)
def test_special_tokenizer_round_trip(train_text, text, num_merges, allowed_special):
    tok = ex2.SpecialTokenizer().train(train_text, num_merges)
    assert tok.decode(tok.encode(text, allowed_special)) == text
    assert tok.decode(tok.encode(text, add_eos=True)) == text + "<eos>"
    assert "".join(ex2.pretokenize(text)) == text


def test_special_tokens_are_cut_out_of_training_and_encoded():
    tok = ex2.SpecialTokenizer().train("ab<eos>ab<eos>ab<pad>", 10)
    assert list(tok.merges) == [(ord("a") + 3, ord("b") + 3)]  # "<eos>" never merged
    assert tok.encode("ab<eos>") == [259, 1]
    assert tok.encode("ab<eos>", allowed_special={"<pad>"}) == [259] + [b + 3 for b in b"<eos>"]
    assert tok.encode("<eos>", "none") == [b + 3 for b in b"<eos>"]
    assert tok.token_to_id("ab") == 259 and tok.token_to_id("<pad>") == 0
    assert tok.token_to_id("zzz") == 2 and tok.id_to_token(259) == "ab"
    assert tok.id_to_token(1) == "<eos>" and tok.vocab_size == 260
    assert ex2.pretokenize("hi  there\n") == ["hi", " ", " there", "\n"]


def test_encode_applies_merges_in_rank_order():
    tok = ex2.SpecialTokenizer().train("bc\nbc\nbc\nab\nab", 2)
    assert tok.merges == {(ord("b") + 3, ord("c") + 3): 259, (ord("a") + 3, ord("b") + 3): 260}
    assert tok.encode("abc") == [ord("a") + 3, 259]  # (b, c) ranks first though (a, b) comes first


def test_pad_batch():
    ids, mask = ex2.SpecialTokenizer().pad_batch([[5, 6, 7], [8], []])
    assert ids == [[5, 6, 7], [8, 0, 0], [0, 0, 0]]
    assert mask == [[1, 1, 1], [1, 0, 0], [0, 0, 0]]
    assert ex2.SpecialTokenizer().pad_batch([[5]], length=3) == ([[5, 0, 0]], [[1, 0, 0]])
    with pytest.raises(ValueError, match="length"):
        ex2.SpecialTokenizer().pad_batch([[5, 6]], length=1)


# ---------------------------------------------------------------- exercise 3


def test_wordpiece_worked_examples():
    assert ex3.word_units("hug") == ["h", "##u", "##g"]
    assert ex3.wordpiece_score(2, 3, 4) == 2 / 12
    vocab = ex3.train_wordpiece("ab ab", 1)
    assert vocab == ["##b", "a", "ab"]
    assert ex3.tokenize_wordpiece(["hug", "##s", "h"], "hugs hux") == ["hug", "##s", "[UNK]"]
    assert ex3.tokenize_wordpiece(["a", "##a"], "aaa", max_chars=2) == ["[UNK]"]


@SETTINGS
@given(texts, st.integers(0, 25))
def test_train_wordpiece_matches_naive(text, num_merges):
    assert ex3.train_wordpiece(text, num_merges) == naive.train_wordpiece(text, num_merges)


@SETTINGS
@given(texts, merges)
def test_train_bpe_pieces_matches_naive(text, num_merges):
    assert ex3.train_bpe_pieces(text, num_merges) == naive.train_bpe_pieces(text, num_merges)


@SETTINGS
@given(texts, texts, st.integers(0, 15), st.integers(1, 8))
def test_tokenize_wordpiece_matches_naive(train_text, text, num_merges, max_chars):
    vocab = ex3.train_wordpiece(train_text, num_merges)
    expected = naive.tokenize_wordpiece(set(vocab), text, max_chars=max_chars)
    assert ex3.tokenize_wordpiece(vocab, text, max_chars=max_chars) == expected


@SETTINGS
@given(
    st.lists(st.sampled_from(["a", "##a", "ab", "##b", "c"]), max_size=6),
    st.lists(st.sampled_from(["a", "ab", "##bc", "d"]), max_size=6),
)
def test_compare_vocabularies(a, b):
    result = ex3.compare_vocabularies(a, b)
    union = set(a) | set(b)
    assert result["shared"] == len(set(a) & set(b))
    assert result["only_a"] == sorted(set(a) - set(b))
    assert result["only_b"] == sorted(set(b) - set(a))
    assert result["jaccard"] == (result["shared"] / len(union) if union else 0.0)
    lengths = [len(t[2:] if t.startswith("##") else t) for t in set(a)]
    assert result["mean_len_a"] == (sum(lengths) / len(lengths) if a else 0.0)


# ---------------------------------------------------------------- exercise 4


def utf8(text):
    return list(text.encode("utf-8"))


def words(text):
    return text.split()


PARALLEL = {
    "en": ["Hello world", "Good day"],
    "fa": ["سلام دنیا", "روز بخیر"],
    "zh": ["你好世界", "日安"],
}


def test_tokens_per_char_and_premium():
    assert ex4.tokens_per_char(utf8, ["ab", "é"]) == 4 / 3
    premium = ex4.tokenization_premium(utf8, PARALLEL)
    assert premium["en"] == 1.0
    assert premium["fa"] == sum(len(s.encode()) for s in PARALLEL["fa"]) / 19


english = st.from_regex(r"[A-Za-z][A-Za-z ]{0,10}", fullmatch=True)


@SETTINGS
@given(st.lists(st.tuples(english, nonempty_texts), min_size=1, max_size=4))
def test_benchmark_rows(pairs):
    parallel = {"xx": [p[1] for p in pairs], "en": [p[0] for p in pairs]}
    rows = ex4.benchmark({"words": words, "bytes": utf8, "chars": list}, parallel)
    assert [(r["encoder"], r["language"]) for r in rows] == [
        (e, lang) for e in ("bytes", "chars", "words") for lang in ("en", "xx")
    ]
    encoders = {"bytes": utf8, "chars": list, "words": words}
    for row in rows:
        sentences, encode = parallel[row["language"]], encoders[row["encoder"]]
        assert row["tokens"] == sum(len(encode(s)) for s in sentences)
        assert row["chars"] == sum(map(len, sentences))
        assert row["bytes"] == sum(len(s.encode()) for s in sentences)
        assert row["tokens_per_char"] == row["tokens"] / row["chars"]
        base = sum(len(encode(s)) for s in parallel["en"])
        assert row["premium"] == row["tokens"] / base
    table = ex4.render_table(rows).splitlines()
    assert len(table) == 2 + len(rows)
    assert all(line.startswith("|") and line.endswith("|") for line in table)
    assert re.fullmatch(r"\|(\s*:?-{3,}:?\s*\|)+", table[1])


def test_render_table_formats_floats():
    table = ex4.render_table([{"a": 1, "b": 0.5, "c": "x|y"}])
    assert table.splitlines()[2] == "| 1 | 0.500 | x\\|y |"


# ---------------------------------------------------------------- exercise 5


@SETTINGS
@given(nonempty_texts, merges)
def test_ratio_curve_matches_naive(text, max_merges):
    curve = ex5.ratio_curve(text, max_merges)
    assert curve == naive.ratio_curve(text, max_merges)
    assert curve[0] == 1.0 and len(curve) <= max_merges + 1


@SETTINGS
@given(nonempty_texts, st.floats(0.05, 1.2), st.floats(0.01, 0.99), merges)
def test_merges_for_parity_matches_naive(text, target, tolerance, max_merges):
    try:
        expected = naive.merges_for_parity(text, target, tolerance, max_merges)
    except ValueError:
        with pytest.raises(ValueError, match="best ratio"):
            ex5.merges_for_parity(text, target, tolerance, max_merges)
    else:
        assert ex5.merges_for_parity(text, target, tolerance, max_merges) == expected


def test_merges_for_parity_threshold_is_inclusive():
    assert ex5.ratio_curve("aaaaaaab", 5) == [1.0, 0.625, 0.5, 0.375, 0.25, 0.125]
    assert ex5.merges_for_parity("aaaaaaab", 0.25, 0.5) == 3  # 0.25 * 1.5 == 0.375 exactly


def test_compression_ratio():
    assert ex5.compression_ratio(utf8, "héllo") == 1.0
    assert ex5.compression_ratio(words, "héllo world") == 2 / 12
    assert ex5.ratio_curve("aaaa", 5) == [1.0, 0.5, 0.25]


# ---------------------------------------------------------------- bad input


def _parallel(**changes):
    return {**PARALLEL, **changes}


BAD_CALLS = [
    (ex1.trace_merges, ("abc", -1), ValueError, "num_merges"),
    (ex1.trace_merges, (b"abc", 3), TypeError, "text"),
    (ex1.trace_merges, ("abc", 1.5), TypeError, "num_merges"),
    (ex1.get_pair_counts, ("abc",), TypeError, "ids"),
    (ex1.merge_pair, ([1, 2], [1, 2], 3), TypeError, "pair"),
    (ex1.token_tree, ([], 300), ValueError, "token_id"),
    (ex1.trace_word_merges, ({"ab": 1}, -2), ValueError, "num_merges"),
    (ex1.trace_word_merges, ({"ab": 0}, 2), ValueError, "word_counts"),
    (ex2.SpecialTokenizer().train, ("abc", -1), ValueError, "num_merges"),
    (ex2.SpecialTokenizer().train, (None, 1), TypeError, "text"),
    (ex2.SpecialTokenizer().encode, ("abc", "some"), ValueError, "allowed_special"),
    (ex2.SpecialTokenizer().encode, ("abc", {"<bos>"}), ValueError, "allowed_special"),
    (ex2.SpecialTokenizer().encode, ("abc", 3), TypeError, "allowed_special"),
    (ex2.SpecialTokenizer().decode, ([259],), ValueError, "259"),
    (ex2.SpecialTokenizer().id_to_token, (-1,), ValueError, "-1"),
    (ex2.pretokenize, (5,), TypeError, "text"),
    (ex3.train_wordpiece, ("abc", -1), ValueError, "num_merges"),
    (ex3.train_bpe_pieces, ("abc", -1), ValueError, "num_merges"),
    (ex3.tokenize_wordpiece, ("abc", "abc"), TypeError, "vocab"),
    (ex3.tokenize_wordpiece, (["a"], "abc", "[UNK]", 0), ValueError, "max_chars"),
    (ex3.compare_vocabularies, (["a"], None), TypeError, "b"),
    (ex4.tokens_per_char, (utf8, []), ValueError, "texts"),
    (ex4.tokens_per_char, (utf8, "abc"), TypeError, "texts"),
    (ex4.tokens_per_char, ("utf8", ["abc"]), TypeError, "encode"),
    (ex4.tokenization_premium, (utf8, {}), ValueError, "parallel"),
    (ex4.tokenization_premium, (utf8, _parallel(fa=["x"])), ValueError, "parallel"),
    (ex4.tokenization_premium, (utf8, _parallel(zh=[])), ValueError, "parallel"),
    (ex4.tokenization_premium, (utf8, PARALLEL, "de"), ValueError, "baseline"),
    (ex4.benchmark, ({}, PARALLEL), ValueError, "encoders"),
    (ex4.benchmark, ({"b": utf8}, PARALLEL, "de"), ValueError, "baseline"),
    (ex4.render_table, ([],), ValueError, "rows"),
    (ex5.compression_ratio, (utf8, ""), ValueError, "text"),
    (ex5.ratio_curve, ("", 3), ValueError, "text"),
    (ex5.ratio_curve, ("abc", -1), ValueError, "max_merges"),
    (ex5.merges_for_parity, ("abc", 0.5, 1.0), ValueError, "tolerance"),
    (ex5.merges_for_parity, ("abc", 0.5, 0.0), ValueError, "tolerance"),
    (ex5.merges_for_parity, ("abc", 0.0), ValueError, "target_ratio"),
    (ex5.merges_for_parity, ("abc", "0.5"), TypeError, "target_ratio"),
    (ex5.merges_for_parity, ("abc", 0.5, 0.1, -1), ValueError, "max_merges"),
    (ex5.merges_for_parity, ("abcd", 0.01, 0.1, 2), ValueError, "best ratio"),
]


@pytest.mark.parametrize("function, args, error, needle", BAD_CALLS)
def test_bad_input_is_rejected(function, args, error, needle):
    with pytest.raises(error, match=re.escape(needle)):
        function(*args)


def test_constants_match_the_spec():
    assert ex2.PRETOKEN_PATTERN == naive.PRETOKEN and ex3.WORD_PATTERN == naive.WORD
    assert ex2.SPECIAL_TOKENS == naive.SPECIALS


# ---------------------------------------------------------------- exercise 6

UNIGRAM_WORDS = ["hug", "hugs", "pug", "pun", "bun", "ab", "abab", "ba", "a", "tab", "!", "ta"]


@SETTINGS
@given(words=st.lists(st.sampled_from(UNIGRAM_WORDS), max_size=14), vocab_size=st.integers(1, 14),
       max_piece_len=st.integers(2, 5))
@example(words=["abab", "abab"], vocab_size=4, max_piece_len=4)  # EM starves "ab" to 0.0
@example(words="tab ab ab a hugs ab hug abab bun bun ! ba".split(), vocab_size=11, max_piece_len=4)
def test_train_unigram_keeps_its_size_however_ems_underflow(words, vocab_size, max_piece_len):
    """The pinned size min(vocab_size, seed) holds even where a piece's expected count underflows
    to 0.0 (it is put back at -1000, not dropped), and no quotient of a tiny count reaches log(0)."""
    text = " ".join(words)
    counts = {w: words.count(w) for w in words}
    chars = {ch for w in words for ch in w}
    seed = ex6._seed(counts, max_piece_len, 10_000)
    got = ex6.train_unigram(text, vocab_size, max_piece_len=max_piece_len)
    assert chars <= set(got) <= set(seed)
    assert len(got) == max(len(chars), min(vocab_size, len(seed)))
