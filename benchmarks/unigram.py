"""Benchmark: exercise 6's reference ``train_unigram`` on the course corpus.

Run with ``make bench`` (or ``.venv/bin/python benchmarks/unigram.py``). Trains a Unigram
vocabulary of ``--vocab`` pieces (1,000 by default) on the corpus that
``python -m tokcourse.assets fetch corpus`` puts in ``.cache/data/corpus.txt``, best of
``--repeat`` runs, and says whether it stays under the issue's budget of 30 s. This is a
measurement, not a test: the machine may be shared, so nothing fails on a slow run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solutions.ex6_unigram import train_unigram  # noqa: E402

BUDGET = 30.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=ROOT / ".cache" / "data" / "corpus.txt")
    args = parser.parse_args()
    if not args.corpus.is_file():
        sys.exit(f"{args.corpus} is missing: run .venv/bin/python -m tokcourse.assets fetch corpus")
    text = args.corpus.read_text(encoding="utf-8")
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        vocab = train_unigram(text, args.vocab)
        times.append(time.perf_counter() - start)
    best = min(times)
    verdict = "within" if best < BUDGET else "OVER"
    print(f"train_unigram({len(text):,} characters, {args.vocab}): {len(vocab)} pieces in {best:.2f} s "
          f"(best of {args.repeat}; {verdict} the {BUDGET:.0f} s budget)")


if __name__ == "__main__":
    main()
