"""Benchmark: the reference ``ratio_curve`` against the lesson's naive BPE and sentencepiece.

Run with ``make bench`` (or ``.venv/bin/python benchmarks/ratio_curve.py``). On the same
text and merge counts it times

- the reference ``solutions.ex5_parity.ratio_curve`` (incremental pair counting),
- the lesson's ``BPETokenizer.train`` (every pair recounted at every merge), and
- sentencepiece's BPE trainer with a vocabulary of the same size,

and prints each time with its ratio to the reference. The naive trainer is skipped where
it would take longer than ``--naive-limit`` seconds (estimated from its pace on 100 merges).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sentencepiece  # noqa: E402

from exercises.lesson import BPETokenizer  # noqa: E402
from solutions.ex5_parity import ratio_curve  # noqa: E402


def timed(function, *args) -> float:
    began = time.perf_counter()
    function(*args)
    return time.perf_counter() - began


def sentencepiece_bpe(text: str, merges: int) -> None:
    """Train sentencepiece's BPE to about ``merges`` merges on ``text`` (one line per sentence-ish line)."""
    lines = [line for line in text.splitlines() if line.strip()]
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=io.BytesIO(), model_type="bpe",
        vocab_size=merges + len(set(text)) + 3, character_coverage=1.0, byte_fallback=False,
        hard_vocab_limit=False, minloglevel=2, num_threads=1,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / ".cache/data/corpus.txt")
    parser.add_argument("--naive-limit", type=float, default=300.0)
    args = parser.parse_args()
    corpus = args.corpus.read_text(encoding="utf-8")
    cases = [(20_000, 500), (len(corpus.encode("utf-8")), 3_000)]
    print(f"{'text':>10} {'merges':>7} {'reference':>10} {'naive lesson':>22} {'sentencepiece':>22}")
    for size, merges in cases:
        text = corpus.encode("utf-8")[:size].decode("utf-8", errors="ignore")
        reference = min(timed(ratio_curve, text, merges) for _ in range(3))
        pace = timed(BPETokenizer().train, text, 100) / 100
        if pace * merges <= args.naive_limit:
            naive = timed(BPETokenizer().train, text, merges)
            naive_cell = f"{naive:8.2f} s ({naive / reference:6.0f}×)"
        else:
            naive_cell = f"~{pace * merges:6.0f} s (est., skipped)"
        spm = timed(sentencepiece_bpe, text, merges)
        print(f"{size / 1000:8.1f}KB {merges:7d} {reference:8.3f} s {naive_cell:>22} "
              f"{spm:8.2f} s ({spm / reference:5.1f}×)")


if __name__ == "__main__":
    main()
