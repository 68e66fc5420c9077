"""How efficiently each real tokenizer encodes one text.

For every chosen tokenizer of the registry it measures the tokens of the text, characters
and UTF-8 bytes per token, the pieces of the first line, the premium against a baseline
text (tokens / baseline tokens) when one is given, and the share of a 128K context window
the text fills. It ends with the most efficient tokenizer and its lead over the next best.
A tokenizer that has to emit unknown tokens (BERT's ``[UNK]``) loses text, so it is left
out of that choice.

    python -m tokcourse.tools.analyzer TEXT_OR_FILE [--tokenizers NAME ...] [--baseline-file FILE]
                                 [--markdown OUT.md] [--png OUT.png]
    python -m tokcourse.tools.analyzer --write-prompt outputs/prompt-tokenizer-analyzer.md

``--write-prompt`` refills the measured table between the file's ``<!-- table:start -->``
and ``<!-- table:end -->`` markers and leaves everything else as it is.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from solutions.ex4_multilingual import render_table
from tokcourse import assets
from tokcourse.tools import multilingual, registry

CONTEXT_WINDOW = 131_072  # "128K"
MAX_PIECES = 24  # pieces of the first line shown per tokenizer
START, END = "<!-- table:start -->", "<!-- table:end -->"


@dataclass(frozen=True)
class Measurement:
    tokenizer: str
    vocab_size: int
    tokens: int
    chars: int
    bytes: int
    unknown: int  # tokens that are the tokenizer's unknown token
    first_line: tuple[str, ...]  # the pieces of the text's first line
    baseline_tokens: int | None = None

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens

    @property
    def premium(self) -> float | None:
        return None if self.baseline_tokens is None else self.tokens / self.baseline_tokens

    @property
    def context_share(self) -> float:
        return self.tokens / CONTEXT_WINDOW


def measure(name: str, tokenizer: registry.Tokenizer, text: str, baseline: str | None = None) -> Measurement:
    """One tokenizer's measurement of ``text`` (and of ``baseline``, when given)."""
    ids = tokenizer.encode(text)
    if not ids:
        raise ValueError(f"{name} encodes the text to no tokens: give a text with some content")
    baseline_tokens = None if baseline is None else len(tokenizer.encode(baseline))
    if baseline_tokens == 0:
        raise ValueError(f"{name} encodes the baseline to no tokens: give a baseline with some content")
    lines = text.strip().splitlines()
    return Measurement(
        tokenizer=name,
        vocab_size=tokenizer.vocab_size,
        tokens=len(ids),
        chars=len(text),
        bytes=len(text.encode("utf-8")),
        unknown=sum(i == tokenizer.unk_id for i in ids),
        first_line=tuple(tokenizer.pieces(lines[0] if lines else text)),
        baseline_tokens=baseline_tokens,
    )


def analyze(text: str, tokenizers: dict[str, registry.Tokenizer], baseline: str | None = None) -> list[Measurement]:
    """Every tokenizer's measurement of ``text``, in the order of ``tokenizers``."""
    return [measure(name, tokenizer, text, baseline) for name, tokenizer in tokenizers.items()]


def ranking(measurements: list[Measurement]) -> list[Measurement]:
    """The lossless measurements (no unknown tokens), fewest tokens first."""
    return sorted((m for m in measurements if not m.unknown), key=lambda m: m.tokens)


def verdict(measurements: list[Measurement]) -> str:
    """The tokenizer with the fewest tokens and by how much it leads, in a sentence or two."""
    ranked = ranking(measurements)
    lossy = [m.tokenizer for m in measurements if m.unknown]
    note = f" Left out because unknown tokens lose text: {', '.join(lossy)}." if lossy else ""
    if not ranked:
        return "No tokenizer encodes this text without unknown tokens." + note
    best = ranked[0]
    if len(ranked) == 1:
        return f"{best.tokenizer} is the only tokenizer that encodes this text without loss." + note
    tied = [m.tokenizer for m in ranked if m.tokens == best.tokens]
    if len(tied) > 1:
        return f"{' and '.join(tied)} tie for the fewest tokens, {best.tokens:,}." + note
    runner = ranked[1]
    saving = 1 - best.tokens / runner.tokens
    return (
        f"{best.tokenizer} uses {saving:.0%} fewer tokens than the next best, {runner.tokenizer}: "
        f"{best.tokens:,} against {runner.tokens:,}." + note
    )


# -- output -----------------------------------------------------------------------------


def quoted(piece: str) -> str:
    """A piece in quotes, so that its spaces show, with control characters escaped."""
    return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in piece) + "'"


def shown_pieces(pieces: tuple[str, ...]) -> str:
    """The first ``MAX_PIECES`` pieces, quoted."""
    shown = " ".join(quoted(piece) for piece in pieces[:MAX_PIECES])
    return shown + (f" … (+{len(pieces) - MAX_PIECES})" if len(pieces) > MAX_PIECES else "")


def rows(measurements: list[Measurement]) -> list[dict]:
    """The measurements as table rows of formatted cells (premium only with a baseline)."""
    table = []
    for m in measurements:
        row = {
            "tokenizer": m.tokenizer,
            "vocabulary": f"{m.vocab_size:,}",
            "tokens": f"{m.tokens:,}",
            "chars/token": f"{m.chars_per_token:.2f}",
            "bytes/token": f"{m.bytes_per_token:.2f}",
        }
        if m.premium is not None:
            row["premium"] = f"{m.premium:.2f}"
        row["128K context"] = f"{m.context_share:.3%}"
        row["unknown"] = f"{m.unknown:,}"
        table.append(row)
    return table


def terminal_table(measurements: list[Measurement]) -> Table:
    """The measurements as a rich table."""
    data = rows(measurements)
    table = Table()
    for column in data[0]:
        table.add_column(column, justify="left" if column == "tokenizer" else "right")
    for row in data:
        table.add_row(*row.values())
    return table


def markdown(measurements: list[Measurement]) -> str:
    """The measurements, the first-line pieces and the verdict as Markdown."""
    pieces = "\n".join(f"- {m.tokenizer}: `{shown_pieces(m.first_line)}`" for m in measurements)
    return f"{render_table(rows(measurements))}\n\nPieces of the first line:\n\n{pieces}\n\n{verdict(measurements)}\n"


def plot(measurements: list[Measurement], png: Path) -> None:
    """Horizontal bars of the tokens per tokenizer, beside the baseline's when there is one."""
    from matplotlib.figure import Figure  # here: only the plot needs matplotlib, which is slow to import
    names = [m.tokenizer for m in measurements]
    fig = Figure(figsize=(8, 0.5 * len(names) + 1.5))
    ax = fig.subplots()
    has_baseline = measurements[0].baseline_tokens is not None
    height = 0.4 if has_baseline else 0.8
    ax.barh([i - height / 2 * has_baseline for i in range(len(names))], [m.tokens for m in measurements], height,
            label="text")
    if has_baseline:
        ax.barh([i + height / 2 for i in range(len(names))], [m.baseline_tokens for m in measurements], height,
                label="baseline")
        ax.legend()
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("tokens")
    ax.set_title("Tokens per tokenizer")
    fig.tight_layout()
    fig.savefig(png, dpi=90)


# -- the prompt's table -----------------------------------------------------------------


def reference_table(tokenizers: dict[str, registry.Tokenizer]) -> str:
    """Markdown measured on the course's parallel sentences (each language's as one text, a
    sentence per line): per tokenizer, English characters per token and each language's
    premium against English; then the best tokenizer per language."""
    parallel = multilingual.course_set()
    english = "\n".join(parallel["en"])
    others = multilingual.languages(parallel)[1:]
    by_lang = {lang: analyze("\n".join(parallel[lang]), tokenizers, english) for lang in others}
    table = []
    for i, (name, tokenizer) in enumerate(tokenizers.items()):
        row = {"tokenizer": name, "vocabulary": f"{tokenizer.vocab_size:,}"}
        row["en chars/token"] = f"{measure(name, tokenizer, english).chars_per_token:.2f}"
        row |= {f"{lang} premium": f"{by_lang[lang][i].premium:.2f}" for lang in others}
        table.append(row)
    best = ", ".join(f"{lang}: {ranking(by_lang[lang])[0].tokenizer}" for lang in others)
    return (
        f"{render_table(table)}\n\nFewest tokens without unknown tokens, per language: {best}.\n"
        f"Measured on the {len(parallel['en'])} sentences of `data/parallel.json`, each language's "
        "as one text, a sentence per line; premium = tokens / English tokens."
    )


def fill_between_markers(document: str, table: str) -> str:
    """``document`` with the text between the table markers replaced by ``table``."""
    if document.count(START) != 1 or document.count(END) != 1 or document.index(START) > document.index(END):
        raise ValueError(f"the document needs exactly one {START} followed by one {END}")
    head, rest = document.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{table}\n{END}{tail}"


def write_prompt(path: Path, tokenizers: dict[str, registry.Tokenizer]) -> None:
    """Refill the measured table of the prompt at ``path``; nothing else in it changes."""
    text = fill_between_markers(path.read_text(encoding="utf-8"), reference_table(tokenizers))
    path.write_text(text, encoding="utf-8")


# -- command line -----------------------------------------------------------------------


def read_text(text_or_file: str) -> str:
    """The contents of the file called ``text_or_file`` if there is one, else the argument itself."""
    path = Path(text_or_file)
    return path.read_text(encoding="utf-8") if path.is_file() else text_or_file


def report(measurements: list[Measurement], console: Console) -> None:
    """Print the table, each tokenizer's first-line pieces and the verdict."""
    console.print(terminal_table(measurements))
    console.print("Pieces of the first line:")
    for m in measurements:
        console.print(f"  {m.tokenizer}: {shown_pieces(m.first_line)}", markup=False)
    console.print(verdict(measurements), markup=False, style="bold", soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tokcourse.tools.analyzer", description=__doc__.split("\n\n")[0])
    parser.add_argument("text", nargs="?", metavar="TEXT_OR_FILE", help="a file to read, or the text itself")
    parser.add_argument("--tokenizers", nargs="+", metavar="NAME",
                        help=f"names, spaces or commas between (default: all of {', '.join(registry.names())})")
    parser.add_argument("--baseline-file", type=Path, help="a text to compare with (e.g. the English original)")
    parser.add_argument("--markdown", type=Path, metavar="OUT.md", help="also write the analysis as Markdown")
    parser.add_argument("--png", type=Path, metavar="OUT.png", help="also write a bar chart")
    parser.add_argument("--write-prompt", type=Path, metavar="PROMPT.md",
                        help="refill the measured table of this prompt")
    parser.add_argument("--root", type=Path, default=assets.REPO_ROOT,
                        help="folder that holds .cache/ (default: the repo)")
    args = parser.parse_args(argv)
    if (args.text is None) == (args.write_prompt is None):
        parser.error("give either TEXT_OR_FILE or --write-prompt")
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    selected = [name for arg in args.tokenizers for name in arg.split(",") if name] if args.tokenizers else None
    try:
        tokenizers = registry.load_all(selected, args.root)
        if args.write_prompt:
            write_prompt(args.write_prompt, tokenizers)
            console.print(f"refilled the table in {args.write_prompt}")
            return 0
        baseline = args.baseline_file.read_text(encoding="utf-8") if args.baseline_file else None
        measurements = analyze(read_text(args.text), tokenizers, baseline)
    except (assets.AssetError, OSError, ValueError) as error:
        console.print(f"error: {error}", style="red", markup=False, soft_wrap=True)
        return 1
    report(measurements, console)
    if args.markdown:
        args.markdown.write_text(markdown(measurements), encoding="utf-8")
    if args.png:
        plot(measurements, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
