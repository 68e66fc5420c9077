"""The tokenizer analyzer and the prompt whose table it fills.

Needs the fetched tokenizer files (``make setup``); without them the tests that use them are
skipped with the command to run.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT
from tokcourse.tools import analyzer, registry

PROMPT = ROOT / "outputs" / "prompt-tokenizer-analyzer.md"


@pytest.fixture(scope="module")
def tokenizers(fetched) -> dict[str, registry.Tokenizer]:
    return registry.load_all()


@pytest.fixture(scope="module")
def paragraphs() -> dict[str, str]:
    parallel = json.loads((ROOT / "data/parallel.json").read_text(encoding="utf-8"))
    return {lang: "\n".join(sentences) for lang, sentences in parallel.items()}


class Counted:
    """A stand-in tokenizer: ``n`` tokens for any non-empty text, ``unknown`` of them unknown."""

    vocab_size = 100

    def __init__(self, n: int, unknown: int = 0):
        self.n, self.unk_id = n, (1 if unknown else None)
        self.unknown = unknown

    def encode(self, text: str) -> list[int]:
        return [1] * self.unknown + [2] * (self.n - self.unknown) if text else []

    def pieces(self, text: str) -> list[str]:
        return [text[:1]] * self.n


# -- the choice -------------------------------------------------------------------------


def test_korean_against_english_the_choice_agrees_with_the_counts(tokenizers, paragraphs):
    measurements = analyzer.analyze(paragraphs["ko"], tokenizers, baseline=paragraphs["en"])
    by_name = {m.tokenizer: m for m in measurements}
    assert by_name["gpt2"].premium > 1 and by_name["gpt2"].premium > by_name["llama3"].premium
    for m in measurements:
        assert m.tokens == len(tokenizers[m.tokenizer].encode(paragraphs["ko"]))
        assert m.premium == m.tokens / len(tokenizers[m.tokenizer].encode(paragraphs["en"]))
    lossless = [m for m in measurements if m.unknown == 0]
    best, runner = sorted(lossless, key=lambda m: m.tokens)[:2]
    assert analyzer.ranking(measurements)[0] == best
    assert (by_name["bert-base-uncased"].unknown > 0
            and by_name["bert-base-uncased"] not in analyzer.ranking(measurements))
    saving = round(100 * (1 - best.tokens / runner.tokens))
    assert analyzer.verdict(measurements).startswith(
        f"{best.tokenizer} uses {saving}% fewer tokens than the next best, {runner.tokenizer}: "
        f"{best.tokens:,} against {runner.tokens:,}."
    )


def test_english_fits_every_tokenizer_and_measures_add_up(tokenizers, paragraphs):
    (m,) = analyzer.analyze(paragraphs["en"], {"llama3": tokenizers["llama3"]})
    assert m.chars == len(paragraphs["en"]) and m.bytes == len(paragraphs["en"].encode("utf-8"))
    assert m.chars_per_token == m.chars / m.tokens and m.bytes_per_token == m.bytes / m.tokens
    assert m.context_share == m.tokens / 131_072 and m.premium is None
    assert "".join(m.first_line) == paragraphs["en"].splitlines()[0]


def test_the_verdict_on_stand_ins():
    def verdict(**counts):
        return analyzer.verdict(analyzer.analyze("text", counts))

    assert verdict(a=Counted(40), b=Counted(30),
                   c=Counted(50)) == "b uses 25% fewer tokens than the next best, a: 30 against 40."
    assert verdict(a=Counted(30), b=Counted(30)) == "a and b tie for the fewest tokens, 30."
    assert verdict(a=Counted(10, unknown=2), b=Counted(20), c=Counted(40)) == (
        "b uses 50% fewer tokens than the next best, c: 20 against 40. Left out because unknown tokens lose text: a."
    )
    assert verdict(a=Counted(10, unknown=1), b=Counted(20)).startswith("b is the only tokenizer")
    with pytest.raises(ValueError, match="baseline"):
        analyzer.analyze("text", {"a": Counted(3)}, baseline="")
    assert analyzer.quoted(" a\nb") == "' a\\nb'"


# -- the prompt's markers ---------------------------------------------------------------


def test_the_markers_regenerate_idempotently_and_leave_the_prose_alone(tokenizers, tmp_path):
    prompt = tmp_path / "prompt.md"
    prompt.write_text(f"# Prose before\n\n{analyzer.START}\nstale numbers\n{analyzer.END}\n\nProse after.\n",
                      encoding="utf-8")
    analyzer.write_prompt(prompt, tokenizers)
    once = prompt.read_text(encoding="utf-8")
    analyzer.write_prompt(prompt, tokenizers)
    assert prompt.read_text(encoding="utf-8") == once
    assert (once.startswith("# Prose before\n\n<!-- table:start -->\n| tokenizer |")
            and once.endswith("<!-- table:end -->\n\nProse after.\n"))
    assert "stale numbers" not in once and all(f"| {name} |" in once for name in tokenizers)


def test_a_document_without_proper_markers_is_refused():
    for document in ["no markers", f"{analyzer.END} {analyzer.START}",
                     f"{analyzer.START}{analyzer.START}{analyzer.END}"]:
        with pytest.raises(ValueError, match="exactly one"):
            analyzer.fill_between_markers(document, "table")


def test_the_committed_prompt_holds_the_current_measurements(tokenizers, tmp_path):
    copy = tmp_path / PROMPT.name
    copy.write_text(PROMPT.read_text(encoding="utf-8"), encoding="utf-8")
    analyzer.write_prompt(copy, tokenizers)
    assert copy.read_text(encoding="utf-8") == PROMPT.read_text(encoding="utf-8"), (
        "regenerate it: python -m tokcourse.tools.analyzer --write-prompt outputs/prompt-tokenizer-analyzer.md"
    )


# -- the command line -------------------------------------------------------------------


def test_the_command_prints_writes_markdown_and_a_chart(tokenizers, paragraphs, tmp_path, capsys):
    text, baseline = tmp_path / "ko.txt", tmp_path / "en.txt"
    text.write_text(paragraphs["ko"], encoding="utf-8")
    baseline.write_text(paragraphs["en"], encoding="utf-8")
    md, png = tmp_path / "out.md", tmp_path / "out.png"
    args = [str(text), "--baseline-file", str(baseline), "--tokenizers", "gpt2,llama3", "o200k_base", "--markdown",
            str(md), "--png", str(png)]
    assert analyzer.main(args) == 0
    out = capsys.readouterr().out
    assert "premium" in out and "Pieces of the first line:" in out and "fewer tokens than the next best" in out
    written = md.read_text(encoding="utf-8")
    assert written.splitlines()[0] == ("| tokenizer | vocabulary | tokens | chars/token | bytes/token | premium "
                                       "| 128K context | unknown |")
    assert [line.split(" | ")[0] for line in written.splitlines()[2:5]] == ["| gpt2", "| llama3", "| o200k_base"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_command_takes_literal_text_and_reports_missing_files(tokenizers, tmp_path, capsys):
    assert analyzer.main(["Hello, world!", "--tokenizers", "gpt2"]) == 0
    assert "'Hello' ',' ' world' '!'" in capsys.readouterr().out
    assert analyzer.main(["Hello", "--root", str(tmp_path)]) == 1
    assert f"run `{registry.FETCH_COMMAND}`" in capsys.readouterr().out
