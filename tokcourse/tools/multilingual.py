"""Exercise 4's benchmark, for real: every registered tokenizer on two parallel sets.

- ``course``: the course's own parallel sentences (``data/parallel.json``).
- ``django``: Django's core interface messages as its translators wrote them, read from the
  pinned wheel's compiled catalogues (``django-<lang>`` assets): every message translated
  into all of the languages below, English being the original text.

It runs the reference ``benchmark`` of exercise 4 and writes ``benchmark.md`` (the premium of
each language per tokenizer, and the vocabulary trade-off) and ``premium.png``.

    python -m tokcourse.tools.multilingual --out outputs/multilingual
"""

from __future__ import annotations

import argparse
import gettext
import json
import re
import sys
import time
from pathlib import Path

from solutions.ex4_multilingual import benchmark, render_table
from tokcourse import assets
from tokcourse.tools import registry

COURSE_SET = assets.REPO_ROOT / "data" / "parallel.json"
DJANGO_LANGUAGES = {"es": "es", "zh_Hans": "zh", "ko": "ko", "ar": "ar", "fa": "fa", "hi": "hi", "ja": "ja", "ru": "ru"}
# printf-style placeholders (%s, %(name)s, %d ...) are removed: they are the same ASCII in
# every language, and kept they would only pull every premium towards 1.
PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[sdifr]")
D_MODEL = 4096
BASELINE = "en"


# -- the two parallel sets --------------------------------------------------------------


def course_set() -> dict[str, list[str]]:
    """The course's parallel sentences, language -> sentences."""
    return json.loads(COURSE_SET.read_text(encoding="utf-8"))


def without_placeholders(message: str) -> str:
    """``message`` with its printf placeholders removed and its spaces normalised."""
    return " ".join(PLACEHOLDER.sub("", message).split())


def django_catalogue(path: Path) -> dict[str, str]:
    """English -> translation for the plain messages of one compiled catalogue (no plural
    forms, no message contexts, no header)."""
    with path.open("rb") as f:
        catalogue = gettext.GNUTranslations(f)._catalog  # the only way to list a catalogue's messages
    return {key: text for key, text in catalogue.items() if isinstance(key, str) and key and "\x04" not in key}


def django_set(root: Path | str | None = None) -> dict[str, list[str]]:
    """Django's messages translated into every language of ``DJANGO_LANGUAGES``, placeholders
    removed, with English (the msgids) first; zh_Hans is labelled zh."""
    root = Path(root or assets.REPO_ROOT)
    manifest = {asset.name: asset for asset in assets.load_manifest()}
    catalogues = {}
    for locale, label in DJANGO_LANGUAGES.items():
        asset = manifest[f"django-{locale}"]
        problem = assets.problem(asset, root)
        if problem:
            raise assets.AssetError(problem)
        catalogues[label] = django_catalogue(root / asset.dest)
    shared = sorted(set.intersection(*(set(c) for c in catalogues.values())))
    rows = [[without_placeholders(key)] + [without_placeholders(c[key]) for c in catalogues.values()] for key in shared]
    rows = [row for row in rows if all(row)]
    return {lang: [row[i] for row in rows] for i, lang in enumerate([BASELINE, *catalogues])}


# -- measuring --------------------------------------------------------------------------


def measure(tokenizers: dict[str, registry.Tokenizer], parallel: dict[str, list[str]]) -> list[dict]:
    """Exercise 4's reference ``benchmark`` over the tokenizers, English as the baseline."""
    return benchmark({name: t.encode for name, t in tokenizers.items()}, parallel, baseline=BASELINE)


def languages(parallel: dict[str, list[str]]) -> list[str]:
    """The set's languages, English first, then in alphabetical order."""
    return sorted(parallel, key=lambda lang: (lang != BASELINE, lang))


def premiums(rows: list[dict]) -> dict[tuple[str, str], float]:
    """(language, tokenizer) -> premium, from the benchmark's rows."""
    return {(row["language"], row["encoder"]): row["premium"] for row in rows}


def premium_table(rows: list[dict], parallel: dict[str, list[str]], order: list[str]) -> str:
    """Markdown: one row per language, one column per tokenizer in ``order``."""
    premium = premiums(rows)
    return render_table([{"language": lang} | {name: f"{premium[lang, name]:.2f}" for name in order}
                         for lang in languages(parallel)])


def tokens_per_sentence(rows: list[dict], name: str, english: bool, sentences: int) -> float:
    """Mean tokens per sentence of tokenizer ``name``: in English, or over the other languages."""
    picked = [row for row in rows if row["encoder"] == name and (row["language"] == BASELINE) == english]
    return sum(row["tokens"] for row in picked) / (len(picked) * sentences)


def tradeoff_table(tokenizers: dict[str, registry.Tokenizer], sets: dict[str, dict],
                   results: dict[str, list[dict]]) -> str:
    """Markdown: vocabulary size, its embedding parameters at ``D_MODEL``, and the measured
    tokens per sentence on each set (English, and the mean of the other languages)."""
    table = []
    for name, tokenizer in tokenizers.items():
        row = {
            "tokenizer": name,
            "vocabulary": f"{tokenizer.vocab_size:,}",
            f"embedding parameters at d_model {D_MODEL:,}": f"{tokenizer.vocab_size * D_MODEL / 1e6:,.1f} M",
        }
        for set_name, rows in results.items():
            sentences = len(sets[set_name][BASELINE])
            row[f"{set_name}: tokens/sentence, en"] = f"{tokens_per_sentence(rows, name, True, sentences):.1f}"
            row[f"{set_name}: tokens/sentence, others"] = f"{tokens_per_sentence(rows, name, False, sentences):.1f}"
        table.append(row)
    return render_table(table)


def unknown_shares(tokenizer: registry.Tokenizer, parallel: dict[str, list[str]]) -> dict[str, float]:
    """Per language, the share of the tokenizer's tokens that are its unknown token."""
    shares = {}
    for lang, sentences in parallel.items():
        ids = [i for sentence in sentences for i in tokenizer.encode(sentence)]
        shares[lang] = sum(i == tokenizer.unk_id for i in ids) / len(ids)
    return shares


def unknown_table(tokenizers: dict[str, registry.Tokenizer], parallel: dict[str, list[str]]) -> str | None:
    """Markdown: the unknown-token share per language of each tokenizer that emits any (else None)."""
    shares = {name: unknown_shares(t, parallel) for name, t in tokenizers.items() if t.unk_id is not None}
    shares = {name: by_lang for name, by_lang in shares.items() if any(by_lang.values())}
    if not shares:
        return None
    return render_table([{"language": lang} | {name: f"{s[lang]:.0%}" for name, s in shares.items()}
                         for lang in languages(parallel)])


# -- writing ----------------------------------------------------------------------------


def plot(sets: dict[str, dict], results: dict[str, list[dict]], order: list[str], png: Path) -> None:
    """Grouped bars of the premium per language (English left out), one panel per set."""
    from matplotlib.figure import Figure  # here: only the plot needs matplotlib, which is slow to import
    fig = Figure(figsize=(11, 4 * len(results)))
    axes = fig.subplots(len(results), 1, squeeze=False)
    for ax, (set_name, rows) in zip(axes[:, 0], results.items(), strict=True):
        premium = premiums(rows)
        shown = languages(sets[set_name])[1:]
        width = 0.8 / len(order)
        for k, name in enumerate(order):
            xs = [i + (k - (len(order) - 1) / 2) * width for i in range(len(shown))]
            ax.bar(xs, [premium[lang, name] for lang in shown], width, label=name)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(shown)), shown)
        ax.set_ylabel("tokens / English tokens")
        ax.set_title(f"Tokenization premium against English: {set_name} set")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncols=len(order), fontsize="small")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(png, dpi=90)


INTRO = (
    "Generated by `python -m tokcourse.tools.multilingual`. Premium = a language's total tokens over "
    "English's for the same sentences and tokenizer (exercise 4's reference `benchmark`). "
    "Tokenizers are ordered by vocabulary size.\n\n![premium per language](premium.png)\n"
)
UNKNOWN_NOTE = (
    "Share of tokens that are the unknown token. That text is lost, and the premium looks "
    "smaller than the real cost:\n"
)
TRADEOFF_NOTE = (
    f"A bigger vocabulary costs embedding parameters (vocabulary × d_model, here {D_MODEL:,}; an "
    "untied output layer costs as much again) and buys fewer tokens per sentence.\n"
)


def report(tokenizers: dict[str, registry.Tokenizer], sets: dict[str, dict], results: dict[str, list[dict]]) -> str:
    """The Markdown document: the premium table of each set, unknown tokens, the trade-off."""
    parts = ["# The tokenization premium of real tokenizers\n", INTRO]
    for set_name, rows in results.items():
        parallel = sets[set_name]
        parts.append(f"## {set_name} set: {len(parallel[BASELINE])} sentences in {len(parallel)} languages\n")
        parts.append(premium_table(rows, parallel, list(tokenizers)) + "\n")
        unknown = unknown_table(tokenizers, parallel)
        if unknown:
            parts += [UNKNOWN_NOTE, unknown + "\n"]
    parts += ["## Vocabulary trade-off\n", TRADEOFF_NOTE, tradeoff_table(tokenizers, sets, results) + "\n"]
    return "\n".join(parts)


def run(out: Path, root: Path | str | None = None) -> dict[str, list[dict]]:
    """Measure both sets with every registered tokenizer; write ``benchmark.md`` and ``premium.png``."""
    tokenizers = registry.load_all(root=root)
    sets = {"course": course_set(), "django": django_set(root)}
    results = {set_name: measure(tokenizers, parallel) for set_name, parallel in sets.items()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "benchmark.md").write_text(report(tokenizers, sets, results), encoding="utf-8")
    plot(sets, results, list(tokenizers), out / "premium.png")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tokcourse.tools.multilingual",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("outputs/multilingual"),
                        help="folder for benchmark.md and premium.png")
    parser.add_argument("--root", type=Path, default=assets.REPO_ROOT,
                        help="folder that holds .cache/ (default: the repo)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        run(args.out, args.root)
    except assets.AssetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print((args.out / "benchmark.md").read_text(encoding="utf-8"))
    seconds = time.perf_counter() - started
    print(f"wrote {args.out / 'benchmark.md'} and {args.out / 'premium.png'} in {seconds:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
