"""The side-by-side comparison of BPE, WordPiece and Unigram (tokcourse.tools.compare).

The quick tests check the pieces the measures rest on; the slow one trains all five
tokenizers on part of the course corpus and recounts what the tool reports.
"""

from __future__ import annotations

import re
from itertools import groupby

import pytest

from solutions.ex2_special_tokens import SpecialTokenizer
from solutions.ex3_wordpiece import WORD_PATTERN, train_wordpiece
from solutions.ex6_unigram import train_unigram, viterbi_segment
from tests.conftest import ROOT
from tokcourse import assets
from tokcourse.tools import compare


def test_surface_forms_drop_the_markers_and_the_pieces_without_text():
    assert [compare.surface(p) for p in ("▁the", " the", "##the", "the", "▁", " ", "\n", "\x07")] == [
        "the", "the", "the", "the", None, None, None, None]
    assert compare.surfaces(["▁a", "a", "##a", "▁", "ab"]) == {"a", "ab"}


def test_unknown_characters_stand_alone():
    known = {"a": -1.0, "b": -1.0}
    assert compare.split_unknown(known, "abXaYZ") == ["ab", "X", "a", "Y", "Z"]
    assert compare.split_unknown(known, "ab") == ["ab"]
    assert compare.split_unknown(known, "X") == ["X"]


def test_a_shorter_wordpiece_vocabulary_is_a_prefix_of_a_longer_one():
    """The tool trains WordPiece once and cuts; that is only right if training is a prefix."""
    text = "the cat sat on the mat; then the hat sat on the cat and that was that. " * 3
    units = len(train_wordpiece(text, 0))
    longest = train_wordpiece(text, 12)
    for merges in (0, 1, 5, 12):
        assert longest[: units + merges] == train_wordpiece(text, merges)


def test_the_held_out_text_is_the_rest_of_the_corpus_file():
    corpus = {asset.name: asset for asset in assets.load_manifest()}["corpus"]
    held = compare.HELDOUT
    assert (held.package, held.version, held.dist, held.member, held.member_sha256) == (
        corpus.package, corpus.version, corpus.dist, corpus.member, corpus.member_sha256)
    assert held.transform[0]["start"] == corpus.transform[0]["end"]  # no overlap, no gap
    assert held.dest != corpus.dest


def test_a_missing_held_out_text_names_the_fetch_command(tmp_path):
    with pytest.raises(assets.AssetError, match=r"heldout: missing .*python -m tokcourse.tools.compare --fetch"):
        compare.heldout_text(tmp_path)


def test_sizes_must_leave_room_beside_the_256_bytes():
    with pytest.raises(SystemExit):
        compare.main(["--sizes", "256", "1000"])


def test_sentencepiece_is_trained_in_memory_to_the_size_asked(fetched):
    lines = compare.lines_of(compare.corpus_text(ROOT))[:400]
    for model_type in ("bpe", "unigram"):
        trained = compare.train_sentencepiece(model_type, lines, lines[:50], 300)
        assert trained.algorithm == f"spm-{model_type}" and trained.vocab_size == 300
        assert trained.unknown == 0  # the held-out lines are training lines here
        assert 0 < trained.spaces < trained.tokens
        assert trained.segment("the") is not None and "".join(trained.segment("the")) == "the"


@pytest.mark.slow
def test_the_comparison_on_the_corpus_recounts(fetched, tmp_path):
    corpus = compare.corpus_text(ROOT)
    cut = corpus.index("CHAPTER IV")
    train, heldout = corpus[:cut][:30_000], corpus[cut:][:10_000]
    sizes = (300, 400)
    c = compare.compare(train, heldout, sizes)
    heldout_lines = compare.lines_of(heldout)
    assert c.heldout_bytes == sum(len(line.encode()) for line in heldout_lines)
    for algorithm in compare.ALGORITHMS:
        assert [c.results[algorithm, size].vocab_size for size in sizes] == list(sizes), algorithm
        assert c.tokens_per_byte(algorithm, 400) < c.tokens_per_byte(algorithm, 300), algorithm
    assert c.results["wordpiece", 300].seconds is None and c.results["wordpiece", 400].seconds is not None

    # our Unigram and BPE, recounted from the references directly
    logprobs = train_unigram(train, 400)
    words = re.findall(WORD_PATTERN, "\n".join(heldout_lines))
    expected = 0
    for word in words:  # a run of known characters is segmented; an unknown one is one token each
        for known, group in groupby(word, key=lambda ch: ch in logprobs):
            run = "".join(group)
            expected += len(viterbi_segment(run, logprobs)[0]) if known else len(run)
    assert c.results["unigram", 400].tokens == expected
    bpe = SpecialTokenizer().train(train, 400 - compare.BYTES)
    assert c.results["bpe", 400].tokens == sum(len(bpe.encode(line)) for line in heldout_lines)

    for size in sizes:
        jaccard = c.jaccard[size]
        assert all(0 < j < 1 for j in jaccard.values())
        # of every vocabulary, sentencepiece's Unigram is the one closest to ours
        others = [j for (a, b), j in jaccard.items() if "unigram" in (a, b) and "spm-unigram" not in (a, b)]
        assert jaccard["unigram", "spm-unigram"] > max(others)
        assert 0.3 < c.unigram_agreement[size] < 1
    same = c.results["unigram", 400]
    assert compare.agreement(same, same, heldout) == 1.0

    compare.plot(c, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = compare.report(c)
    assert "| 300 | " + " | ".join(f"{c.tokens_per_byte(a, 300):.4f}" for a in compare.ALGORITHMS) + " |" in report
