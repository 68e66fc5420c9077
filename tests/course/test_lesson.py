"""The lesson's worked code: BPE round-trips, follows the rules, passes its doctests."""

import ast
import doctest
import importlib
import inspect
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exercises import lesson
from exercises.lesson import (
    BPETokenizer,
    CharTokenizer,
    analyze_vocabulary,
    get_pair_counts,
    merge_pair,
)
from tests.conftest import ROOT

SETTINGS = settings(database=None, derandomize=True, deadline=None)

# Any text, with extra weight on scripts whose characters take 2-4 UTF-8 bytes.
WORLD = (
    "漢字仮名交じり文ひらがなカタカナ한국어"  # CJK
    " العربية"  # Arabic
    " فارسی گچپژ ی‌ها"  # Persian, with a zero-width non-joiner
    " 😀👍🏽👨‍👩‍👧🇮🇷"  # emoji: skin tone, ZWJ family, flag
)
texts = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(WORLD)), max_size=60)


@SETTINGS
@given(train_text=texts, text=texts, num_merges=st.integers(0, 40))
def test_bpe_round_trips_any_text(train_text, text, num_merges):
    tok = BPETokenizer().train(train_text, num_merges)
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode(tok.encode(train_text)) == train_text


@SETTINGS
@given(text=texts, num_merges=st.integers(0, 40))
def test_merge_k_creates_id_256_plus_k(text, num_merges):
    tok = BPETokenizer().train(text, num_merges)
    assert list(tok.merges.values()) == list(range(256, 256 + len(tok.merges)))
    for (left, right), new_id in tok.merges.items():
        assert left < new_id and right < new_id
        assert tok.vocab[new_id] == tok.vocab[left] + tok.vocab[right]


@SETTINGS
@given(text=texts, num_merges=st.integers(0, 40))
def test_encoding_the_training_text_gives_the_training_sequence(text, num_merges):
    tok = BPETokenizer().train(text, num_merges)
    ids = list(text.encode("utf-8"))
    for pair, new_id in tok.merges.items():
        ids = merge_pair(ids, pair, new_id)
    assert tok.encode(text) == ids


def test_tie_goes_to_the_leftmost_first_occurrence():
    # (c, d) and (a, b) both occur twice; (c, d) occurs first.
    tok = BPETokenizer().train("cdabcdab", 1)
    assert tok.merges == {(ord("c"), ord("d")): 256}
    # Overlap: "aaa" holds (a, a) twice, and merging gives [aa, a].
    assert get_pair_counts([97, 97, 97]) == {(97, 97): 2}
    assert merge_pair([97, 97, 97], (97, 97), 256) == [256, 97]


def test_training_stops_early_when_no_pair_is_left():
    assert BPETokenizer().train("aaaa", 10).merges == {(97, 97): 256, (256, 256): 257}
    assert BPETokenizer().train("", 10).merges == {}
    assert BPETokenizer().train("é", 10).merges == {(0xC3, 0xA9): 256}


def test_negative_num_merges_is_a_value_error():
    try:
        BPETokenizer().train("abc", -1)
    except ValueError as error:
        assert "num_merges" in str(error)
    else:
        raise AssertionError("no ValueError")


def test_training_again_starts_from_scratch():
    tok = BPETokenizer().train("aaaa", 2).train("xyxy", 1)
    assert tok.merges == {(ord("x"), ord("y")): 256}
    assert len(tok.vocab) == 257


def test_decode_replaces_invalid_utf8():
    assert BPETokenizer().decode([0xE5, 0x61]) == "\ufffda"


def test_char_tokenizer_round_trips_its_training_text():
    text = "hello, wörld 🙂"
    tok = CharTokenizer().train(text)
    assert tok.decode(tok.encode(text)) == text
    assert len(tok.vocab) == len(set(text))


@SETTINGS
@given(train_text=texts, text=texts, num_merges=st.integers(0, 30))
def test_analyze_vocabulary_counts_add_up(train_text, text, num_merges):
    tok = BPETokenizer().train(train_text, num_merges)
    stats = analyze_vocabulary(tok, text)
    counts = [count for _, _, count in stats["rows"]]
    assert sum(counts) == stats["total_tokens"] == len(tok.encode(text))
    assert stats["distinct_tokens"] == len(stats["rows"]) == len(set(tok.encode(text)))
    assert counts == sorted(counts, reverse=True)
    assert [rank for rank, _, _ in stats["rows"]] == list(range(1, len(counts) + 1))
    listed = sorted(token for _, token, _ in stats["rows"])
    assert listed == sorted(tok.vocab[i] for i in set(tok.encode(text)))
    assert 0.0 <= stats["top10_share"] <= 1.0
    if len(counts) < 2:
        assert stats["zipf_slope"] is None
    else:
        assert stats["zipf_slope"] <= 1e-9  # counts never grow with rank


LESSON_MODULES = sorted(p.stem for p in (ROOT / "exercises").glob("lesson*.py"))


def test_the_lesson_is_one_module_per_step_gathered_in_lesson():
    """``exercises.lesson`` names what each step's module defines, so either import works."""
    assert LESSON_MODULES == ["lesson", "lesson_bpe", "lesson_chars", "lesson_pairs", "lesson_spellings",
                              "lesson_unigram", "lesson_vocabulary"]
    # imported now: a test that graded another course in this process may have had it forgotten
    lesson = importlib.import_module("exercises.lesson")
    defined = []
    for name in LESSON_MODULES[1:]:
        module = importlib.import_module(f"exercises.{name}")
        tree = ast.parse((ROOT / "exercises" / f"{name}.py").read_text(encoding="utf-8"))
        names = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
        names += [target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets]
        assert names and all(getattr(lesson, key) is getattr(module, key) for key in names), name
        defined += names
    assert sorted(lesson.__all__) == sorted(defined)


@pytest.mark.parametrize("name", LESSON_MODULES)
def test_lesson_doctests_pass(name):
    results = doctest.testmod(importlib.import_module(f"exercises.{name}"))
    assert results.attempted > 0 or name == "lesson"
    assert results.failed == 0


def test_lesson_unigram_agrees_with_the_reference():
    """The lesson's plain Unigram code and exercise 6's reference give the same answers."""
    from solutions import ex6_unigram as reference

    @SETTINGS
    @given(vocab=st.dictionaries(st.text("abc", min_size=2, max_size=3), st.integers(-24, -1).map(lambda k: k / 8),
                                 max_size=6),
           words=st.dictionaries(st.text("abc", min_size=1, max_size=6), st.integers(1, 4), min_size=1, max_size=4))
    def agree(vocab, words):
        logprobs = {"a": -1.0, "b": -1.5, "c": -2.0, **vocab}
        for word in words:
            assert lesson.viterbi(word, logprobs) == reference.viterbi_segment(word, logprobs)
            assert math.isclose(lesson.forward(word, logprobs)[-1], reference.marginal_logprob(word, logprobs))
        new, expected = lesson.unigram_em_step(words, logprobs), reference.em_step(words, logprobs)
        assert list(new) == list(expected)
        assert all(math.isclose(new[p], expected[p], abs_tol=1e-12) for p in expected)

    agree()


def test_one_persian_word_spelled_three_ways_is_three_byte_sequences_and_token_counts(fetched, monkeypatch):
    """The lesson's step 5: without its ZWNJ, or with Arabic yeh and kaf, a Persian word reads
    the same but is other bytes, and the lesson's BPE and cl100k_base count other tokens."""
    from tokcourse import assets
    from tokcourse.grading import encoders

    word = "کتاب" + "\u200c" + "های"
    spelled = lesson.spellings(word)
    assert spelled["persian"] == word
    assert spelled["no_zwnj"] == "کتابهای" and spelled["arabic_letters"] == "\u0643تاب\u200cهاي"
    assert len({s.encode("utf-8") for s in spelled.values()}) == 3
    assert [len(s.encode("utf-8")) for s in spelled.values()] == [17, 14, 17]

    text = "کتاب_های من روی میز است. کتاب_های تو کجاست؟ این کتاب_ها را کی خواندی؟".replace("_", "\u200c")
    tok = BPETokenizer().train(text, 20)
    counts = {name: len(tok.encode(s)) for name, s in spelled.items()}
    assert counts == {"persian": 3, "no_zwnj": 6, "arabic_letters": 5}  # as the docstring's example says

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(assets.tiktoken_cache_dir(ROOT)))
    assert [len(encoders.cl100k(s)) for s in spelled.values()] == [6, 5, 7]  # as the docstring's prose says
    assert "``cl100k_base`` gives the three\n    spellings 6, 5 and 7 tokens" in inspect.getsource(lesson.spellings)
