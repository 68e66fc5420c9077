"""The real exercise-5 run: how many merges reach within 10% of cl100k_base on the corpus.

The figures here are the ones quoted in the course notes (docs/course-notes.md); if the
corpus, the tokenizer file or the reference changes, this test says so.
"""


import pytest
import tiktoken

from solutions.ex5_parity import compression_ratio, merges_for_parity, ratio_curve
from tests.conftest import ROOT

pytestmark = [pytest.mark.data, pytest.mark.slow]

CORPUS = ROOT / ".cache" / "data" / "corpus.txt"


def test_reference_finds_parity_on_the_course_corpus():
    assert CORPUS.is_file(), "run `python -m tokcourse.assets fetch` (make setup does)"
    text = CORPUS.read_text(encoding="utf-8")
    target = compression_ratio(tiktoken.get_encoding("cl100k_base").encode_ordinary, text)
    assert round(target, 4) == 0.2497  # 20,376 tokens for 81,592 bytes
    k = merges_for_parity(text, target)
    curve = ratio_curve(text, k)
    assert curve[k] <= target * 1.10 < curve[k - 1]
    assert k == 1874
