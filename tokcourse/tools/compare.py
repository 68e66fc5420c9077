"""BPE, WordPiece and Unigram side by side: the course's reference trainers and
sentencepiece's, trained on the course corpus at the same vocabulary sizes and measured on
text none of them saw.

- **Training text**: the course corpus, chapters I-IV of *Botchan* (the ``corpus`` asset).
- **Held-out text**: chapters V-XI of the same book, cut from the same pinned file of the
  same sdist (``HELDOUT`` below, fetched by ``--fetch`` and checked by sha256 like every
  course asset; it is not in ``data/assets.json``, so ``make setup`` does not fetch it).
- **The five trainers**:
  - ``bpe``: exercise 2's ``SpecialTokenizer``, byte-level BPE on pre-tokens that keep their
    leading space. It is the course's only BPE that encodes new text: exercises 1 and 5
    train on the text as one sequence, and exercise 3's ``train_bpe_pieces`` returns pieces
    without the merge pairs an encoder needs. Its vocabulary counts the 256 bytes.
  - ``wordpiece``: exercise 3's ``train_wordpiece`` and ``tokenize_wordpiece``.
  - ``unigram``: exercise 6's ``train_unigram`` (default options) and ``viterbi_segment``.
  - ``spm-bpe`` and ``spm-unigram``: sentencepiece's trainers, in memory from the corpus's
    lines, one thread, every character kept, no normalisation (``identity``), no ``<s>`` or
    ``</s>``; ``<unk>`` is not counted in the vocabulary size.
- **Measures**, at each vocabulary size:
  - tokens per byte of the held-out text, which every tokenizer encodes line by line, so
    that no one pays for line breaks; the bytes are those of the lines;
  - training time (CPU time of the trainer alone, see ``timed``);
  - mean piece length and the Jaccard overlap of each pair of vocabularies, both over
    *surface forms* (``surface``): sentencepiece's ``▁``, BPE's leading space and
    WordPiece's ``##`` removed, so ``▁the``, `` the``, ``##the`` and ``the`` are one string;
  - for the two Unigram models, the share of the held-out words that they cut identically.

WordPiece is greedy, so its vocabulary of size V is the first V entries of the one trained
to the largest size: it is trained once (its time is that run's), the others every time.

    python -m tokcourse.tools.compare --fetch --out outputs/compare
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import sentencepiece as spm

from solutions.ex2_special_tokens import SpecialTokenizer
from solutions.ex3_wordpiece import WORD_PATTERN, compare_vocabularies, tokenize_wordpiece, train_wordpiece
from solutions.ex4_multilingual import render_table
from solutions.ex6_unigram import train_unigram, viterbi_segment
from tokcourse import assets

SIZES = (500, 1000, 1500, 2000)
ALGORITHMS = ("bpe", "wordpiece", "unigram", "spm-bpe", "spm-unigram")
OURS = {"bpe": "exercise 2", "wordpiece": "exercise 3", "unigram": "exercise 6"}
BYTES = 256  # the byte-level BPE's base vocabulary
UNK = "[UNK]"
SPM_MARK = "\u2581"  # sentencepiece's ▁, which stands for a space
HELDOUT = assets.Asset(
    name="heldout",
    package="sentencepiece",
    version="0.2.3",
    dist="sdist",
    member="sentencepiece-0.2.3/test/botchan.txt",
    member_sha256="464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7",
    # from the line 'CHAPTER V.' to the line '--(THE END)--' included; the transcriber's
    # notes and the Project Gutenberg licence after it are left out
    transform=({"op": "slice", "start": 90389, "end": 259425}, {"op": "crlf_to_lf"}),
    sha256="4032baf87607f8f33558a919c3b41242424c38e2c1e219fe6aee388d8ef518bb",
    dest=".cache/data/heldout.txt",
)
FETCH = "python -m tokcourse.tools.compare --fetch"


# -- the texts --------------------------------------------------------------------------


def read_asset(asset: assets.Asset, root: Path | str | None, command: str = assets.FETCH_COMMAND) -> str:
    """The text of a fetched asset; missing or corrupt is an ``AssetError`` naming ``command``."""
    root = Path(root or assets.REPO_ROOT)
    problem = assets.problem(asset, root, command)
    if problem:
        raise assets.AssetError(problem)
    return (root / asset.dest).read_text(encoding="utf-8")


def corpus_text(root: Path | str | None = None) -> str:
    corpus = {asset.name: asset for asset in assets.load_manifest()}["corpus"]
    return read_asset(corpus, root)


def heldout_text(root: Path | str | None = None) -> str:
    return read_asset(HELDOUT, root, FETCH)


def lines_of(text: str) -> list[str]:
    """The lines that hold something besides whitespace."""
    return [line for line in text.splitlines() if line.strip()]


def surface(piece: str) -> str | None:
    """The text a piece stands for inside a word, without the markers that say where it may
    go (``▁``, a leading space, ``##``); ``None`` for a piece with no printable text."""
    text = piece.replace(SPM_MARK, "").removeprefix("##").strip()
    return text if text and text.isprintable() else None


def surfaces(pieces: Sequence[str]) -> frozenset[str]:
    return frozenset(s for s in map(surface, pieces) if s is not None)


# -- one trained tokenizer --------------------------------------------------------------


@dataclass
class Trained:
    """One tokenizer at one vocabulary size, measured on the held-out lines."""

    algorithm: str
    vocab_size: int  # the entries of its vocabulary (special tokens not counted)
    seconds: float | None  # training time; None for a prefix of a longer WordPiece run
    tokens: int  # on the held-out lines
    unknown: int  # of which stand for characters it never saw
    spaces: int  # of which stand for whitespace alone (a lone ▁ or space)
    single: int  # of which stand for one character (unknown ones not counted)
    pieces: frozenset[str]  # surface forms
    segment: Callable[[str], list[str] | None] = field(repr=False)  # one word's pieces, or None

    def tokens_per_byte(self, heldout_bytes: int) -> float:
        return self.tokens / heldout_bytes


def timed(train: Callable[[], object]) -> tuple[object, float]:
    """``train()`` and the CPU seconds it took: process time, not wall clock, so that other
    work on a shared machine does not inflate it (every trainer here runs on one thread)."""
    started = time.process_time()
    result = train()
    return result, time.process_time() - started


def train_bpe(corpus: str, lines: list[str], vocab_size: int) -> Trained:
    tokenizer, seconds = timed(lambda: SpecialTokenizer().train(corpus, vocab_size - BYTES))
    assert isinstance(tokenizer, SpecialTokenizer)
    pieces = []
    for token in tokenizer.vocab.values():
        try:
            pieces.append(token.decode("utf-8"))
        except UnicodeDecodeError:  # a lone byte of a longer character: no text of its own
            pass
    tokens = spaces = single = 0
    for line in lines:
        ids = tokenizer.encode(line, allowed_special="none")
        tokens += len(ids)
        spaces += sum(tokenizer.vocab[i].isspace() for i in ids)
        single += sum(len(tokenizer.vocab[i].decode("utf-8", errors="replace").strip()) == 1 for i in ids)
    return Trained("bpe", len(tokenizer.vocab), seconds, tokens, 0, spaces, single, surfaces(pieces),
                   lambda word: [tokenizer.id_to_token(i) for i in tokenizer.encode(word, allowed_special="none")])


def wordpiece_vocabulary(corpus: str, vocab_size: int) -> tuple[list[str], float]:
    """The WordPiece vocabulary of ``vocab_size`` entries (its starting units included) and
    its training time."""
    units = len(train_wordpiece(corpus, 0))
    vocab, seconds = timed(lambda: train_wordpiece(corpus, max(0, vocab_size - units)))
    assert isinstance(vocab, list)
    return vocab, seconds


def wordpiece_from(vocab: list[str], seconds: float | None, heldout: str) -> Trained:
    tokens = tokenize_wordpiece(vocab, heldout, unk=UNK)  # words never cross a line break
    single = sum(len(token.removeprefix("##")) == 1 for token in tokens)
    return Trained("wordpiece", len(vocab), seconds, len(tokens), tokens.count(UNK), 0, single, surfaces(vocab),
                   lambda word: None if UNK in (pieces := tokenize_wordpiece(vocab, word, unk=UNK)) else pieces)


def split_unknown(logprobs: dict[str, float], word: str) -> list[str]:
    """``word`` cut around the characters ``logprobs`` lacks, each of them a part of its own."""
    parts, known = [], ""
    for ch in word:
        if ch in logprobs:
            known += ch
        else:
            parts += [known, ch] if known else [ch]
            known = ""
    return parts + [known] if known else parts


def train_our_unigram(corpus: str, heldout: str, vocab_size: int) -> Trained:
    logprobs, seconds = timed(lambda: train_unigram(corpus, vocab_size))
    assert isinstance(logprobs, dict)
    cache: dict[str, tuple[list[str], int]] = {}

    def cut(word: str) -> tuple[list[str], int]:
        if word not in cache:
            pieces, unknown = [], 0
            for part in split_unknown(logprobs, word):
                if part[0] in logprobs:  # a run of known characters, else one unknown
                    pieces += viterbi_segment(part, logprobs)[0]
                else:
                    unknown += 1
            cache[word] = pieces, unknown
        return cache[word]

    tokens = unknown = single = 0
    for word in re.findall(WORD_PATTERN, heldout):
        pieces, missing = cut(word)
        tokens += len(pieces) + missing
        unknown += missing
        single += sum(len(piece) == 1 for piece in pieces)
    return Trained("unigram", len(logprobs), seconds, tokens, unknown, 0, single, surfaces(list(logprobs)),
                   lambda word: None if cut(word)[1] else cut(word)[0])


def train_sentencepiece(model_type: str, lines: list[str], heldout_lines: list[str], vocab_size: int) -> Trained:
    """sentencepiece's ``model_type`` trainer on ``lines``, in memory; ``vocab_size``
    pieces besides ``<unk>``."""
    model = io.BytesIO()

    def train() -> None:
        with open(os.devnull, "w") as quiet:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(lines), model_writer=model, logstream=quiet,
                model_type=model_type, vocab_size=vocab_size + 1, character_coverage=1.0,
                normalization_rule_name="identity", unk_id=0, bos_id=-1, eos_id=-1, num_threads=1,
            )

    _none, seconds = timed(train)
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size()) if not processor.is_unknown(i)]
    space = processor.piece_to_id(SPM_MARK)
    space = -1 if processor.is_unknown(space) else space  # no lone ▁ in this vocabulary
    tokens = unknown = spaces = single = 0
    for ids in processor.encode(heldout_lines):
        tokens += len(ids)
        unknown += sum(map(processor.is_unknown, ids))
        spaces += ids.count(space)
        single += sum(len(processor.id_to_piece(i).replace(SPM_MARK, "")) == 1
                      for i in ids if not processor.is_unknown(i))

    def segment(word: str) -> list[str] | None:
        ids = processor.encode(word)
        if any(map(processor.is_unknown, ids)):
            return None
        return [s for s in (processor.id_to_piece(i).replace(SPM_MARK, "") for i in ids) if s]

    return Trained(f"spm-{model_type}", len(pieces), seconds, tokens, unknown, spaces, single, surfaces(pieces),
                   segment)


# -- the comparison ---------------------------------------------------------------------


def agreement(a: Trained, b: Trained, heldout: str) -> float:
    """The share of the held-out's alphabetic words (occurrences) that ``a`` and ``b`` cut
    into the same surface pieces, over the words both can cover."""
    same = total = 0
    for word, n in Counter(w for w in re.findall(WORD_PATTERN, heldout) if w.isalpha()).items():
        cut_a, cut_b = a.segment(word), b.segment(word)
        if cut_a is None or cut_b is None:
            continue
        total += n
        same += n * ([p.strip().removeprefix("##") for p in cut_a] == cut_b)
    return same / total if total else 0.0


@dataclass
class Comparison:
    sizes: tuple[int, ...]
    corpus_bytes: int
    heldout_bytes: int
    results: dict[tuple[str, int], Trained]
    jaccard: dict[int, dict[tuple[str, str], float]]
    unigram_agreement: dict[int, float]

    def tokens_per_byte(self, algorithm: str, size: int) -> float:
        return self.results[algorithm, size].tokens_per_byte(self.heldout_bytes)


def compare(corpus: str, heldout: str, sizes: Sequence[int] = SIZES,
            progress: Callable[[str], None] = lambda _message: None) -> Comparison:
    """Train the five tokenizers on ``corpus`` at every size and measure them on ``heldout``."""
    sizes = tuple(sorted(sizes))
    corpus_lines, heldout_lines = lines_of(corpus), lines_of(heldout)
    heldout = "\n".join(heldout_lines)
    results: dict[tuple[str, int], Trained] = {}
    progress(f"wordpiece: one run to {sizes[-1]:,}")
    longest, seconds = wordpiece_vocabulary(corpus, sizes[-1])
    jaccard, unigram_agreement = {}, {}
    for size in sizes:
        progress(f"vocabulary {size:,}")
        results["bpe", size] = train_bpe(corpus, heldout_lines, size)
        results["wordpiece", size] = wordpiece_from(longest[:size], seconds if size == sizes[-1] else None, heldout)
        results["unigram", size] = train_our_unigram(corpus, heldout, size)
        for model_type in ("bpe", "unigram"):
            results[f"spm-{model_type}", size] = train_sentencepiece(model_type, corpus_lines, heldout_lines, size)
        jaccard[size] = {
            (a, b): compare_vocabularies(sorted(results[a, size].pieces), sorted(results[b, size].pieces))["jaccard"]
            for a, b in combinations(ALGORITHMS, 2)
        }
        unigram_agreement[size] = agreement(results["unigram", size], results["spm-unigram", size], heldout)
    return Comparison(sizes, len(corpus.encode("utf-8")), sum(len(line.encode("utf-8")) for line in heldout_lines),
                      results, jaccard, unigram_agreement)


# -- writing ----------------------------------------------------------------------------


def mean_length(pieces: frozenset[str]) -> float:
    return compare_vocabularies(sorted(pieces), [])["mean_len_a"]


def measures_table(c: Comparison) -> str:
    rows = []
    for algorithm in ALGORITHMS:
        for size in c.sizes:
            r = c.results[algorithm, size]
            rows.append({
                "algorithm": algorithm,
                "vocabulary": f"{size:,}",
                "entries": f"{r.vocab_size:,}",
                "surface forms": f"{len(r.pieces):,}",
                "tokens/byte": f"{r.tokens_per_byte(c.heldout_bytes):.4f}",
                "mean piece length": f"{mean_length(r.pieces):.2f}",
                "unknown tokens": f"{r.unknown:,}",
                "whitespace tokens": f"{r.spaces:,}",
                "one-character tokens": f"{r.single / r.tokens:.1%}",
                "tokens/byte, whitespace tokens left out": f"{(r.tokens - r.spaces) / c.heldout_bytes:.4f}",
                "training time": "(prefix)" if r.seconds is None else f"{r.seconds:.2f} s",
            })
    return render_table(rows)


def curve_table(c: Comparison) -> str:
    return render_table([{"vocabulary": f"{size:,}"}
                         | {a: f"{c.tokens_per_byte(a, size):.4f}" for a in ALGORITHMS} for size in c.sizes])


def jaccard_table(c: Comparison) -> str:
    pairs = list(combinations(ALGORITHMS, 2))
    return render_table([{"pair": f"{a} / {b}"} | {f"{size:,}": f"{c.jaccard[size][a, b]:.3f}" for size in c.sizes}
                         for a, b in pairs])


def unigram_table(c: Comparison) -> str:
    """Ours against sentencepiece's Unigram, size by size."""
    rows = []
    for size in c.sizes:
        ours, theirs = c.results["unigram", size], c.results["spm-unigram", size]
        ratio = ours.tokens / theirs.tokens - 1
        ratio_words = ours.tokens / (theirs.tokens - theirs.spaces) - 1
        rows.append({
            "vocabulary": f"{size:,}",
            "tokens/byte: ours": f"{ours.tokens_per_byte(c.heldout_bytes):.4f}",
            "sentencepiece": f"{theirs.tokens_per_byte(c.heldout_bytes):.4f}",
            "ours vs sentencepiece": f"{ratio:+.1%}",
            "the same, its lone ▁ left out": f"{ratio_words:+.1%}",
            "Jaccard": f"{c.jaccard[size]['unigram', 'spm-unigram']:.3f}",
            "same cut of held-out words": f"{c.unigram_agreement[size]:.1%}",
            "mean length: ours": f"{mean_length(ours.pieces):.2f}",
            "sentencepiece ": f"{mean_length(theirs.pieces):.2f}",
            "time: ours": f"{ours.seconds:.1f} s",
            "sentencepiece  ": f"{theirs.seconds:.2f} s",
        })
    return render_table(rows)


def plot(c: Comparison, png: Path) -> None:
    """Tokens per byte of the held-out text against vocabulary size, one line per algorithm."""
    from matplotlib.figure import Figure  # here: only the plot needs matplotlib, which is slow to import
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    for algorithm in ALGORITHMS:
        ys = [c.tokens_per_byte(algorithm, size) for size in c.sizes]
        label = f"{algorithm} ({OURS[algorithm]})" if algorithm in OURS else algorithm
        ax.plot(c.sizes, ys, marker="o", linestyle="-" if algorithm in OURS else "--", label=label)
    ax.set_xlabel("vocabulary size")
    ax.set_ylabel("tokens per byte (held-out text; lower is better)")
    ax.set_xticks(c.sizes, [f"{size:,}" for size in c.sizes])
    ax.set_title(f"Trained on Botchan I-IV ({c.corpus_bytes:,} bytes), measured on V-XI ({c.heldout_bytes:,} bytes)",
                 fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(png, dpi=90)


def report(c: Comparison) -> str:
    return "\n".join([
        "# BPE, WordPiece and Unigram, side by side\n",
        f"Generated by `python -m tokcourse.tools.compare` (see its docstring for the set-up). Trained on the "
        f"course corpus ({c.corpus_bytes:,} bytes), measured on the held-out chapters V-XI of Botchan "
        f"({c.heldout_bytes:,} bytes of non-empty lines).\n",
        "![tokens per byte against vocabulary size](tokens_per_byte.png)\n",
        "## Tokens per byte of the held-out text\n",
        curve_table(c) + "\n",
        "## Every measure\n",
        "Entries: the vocabulary's real size (byte-level BPE counts its 256 bytes; sentencepiece's "
        "`<unk>` is not counted). Surface forms: its distinct pieces once `▁`, a leading space and `##` "
        "are removed, the pieces with no printable text left out. Mean piece length: characters per "
        "distinct surface form. Whitespace tokens: a lone `▁` or space. One-character tokens: share of "
        "the held-out tokens that stand for a single character. Training time: CPU time of the "
        "trainer alone (one thread); WordPiece is trained once to the largest size and the smaller vocabularies "
        "are its prefixes.\n",
        measures_table(c) + "\n",
        "## Vocabulary overlap (Jaccard of surface forms)\n",
        jaccard_table(c) + "\n",
        "## Our Unigram against sentencepiece's\n",
        "Same cut: share of the held-out text's alphabetic words (occurrences) that both cut into the same "
        "pieces, `▁` set aside.\n",
        unigram_table(c) + "\n",
    ])


def run(out: Path, root: Path | str | None = None, sizes: Sequence[int] = SIZES,
        progress: Callable[[str], None] = lambda _message: None) -> Comparison:
    """Compare on the pinned texts; write ``comparison.md`` and ``tokens_per_byte.png`` in ``out``."""
    comparison = compare(corpus_text(root), heldout_text(root), sizes, progress)
    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.md").write_text(report(comparison), encoding="utf-8")
    plot(comparison, out / "tokens_per_byte.png")
    return comparison


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tokcourse.tools.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("outputs/compare"),
                        help="folder for comparison.md and tokens_per_byte.png")
    parser.add_argument("--root", type=Path, default=assets.REPO_ROOT,
                        help="folder that holds .cache/ (default: the repo)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), metavar="V",
                        help=f"vocabulary sizes, at least {BYTES + 1} (default: {' '.join(map(str, SIZES))})")
    parser.add_argument("--fetch", action="store_true",
                        help="first fetch the held-out text if it is missing (pip download, sha256 checked)")
    args = parser.parse_args(argv)
    if min(args.sizes) <= BYTES:
        parser.error(f"every size must exceed the byte-level BPE's {BYTES} bytes")
    started = time.perf_counter()
    try:
        if args.fetch:
            status = assets.fetch_asset(HELDOUT, args.root)
            assets.say(f"held-out text: {status}, {HELDOUT.dest}")
        run(args.out, args.root, args.sizes, lambda message: assets.say(f"  {message}"))
    except assets.AssetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print((args.out / "comparison.md").read_text(encoding="utf-8"))
    seconds = time.perf_counter() - started
    print(f"wrote {args.out / 'comparison.md'} and {args.out / 'tokens_per_byte.png'} in {seconds:.1f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
