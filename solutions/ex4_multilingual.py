"""Reference solution of exercise 4: how much more a language costs in tokens.

The stub's docstrings are the contract; where the spec is silent this follows them:

- Every sentence is encoded on its own and the token counts are summed.
- Validation runs in signature order: ``encode``, then ``parallel`` (a non-empty dict of
  equally long, non-empty lists of strings), then ``baseline`` (a language of
  ``parallel``); a baseline with zero tokens is a ``ValueError`` naming ``parallel``.
  ``benchmark`` also refuses a language with no characters at all.
- ``tokenization_premium`` returns the languages in the order of ``parallel``; ``benchmark``
  rows are sorted by encoder name, then language.
- ``render_table``: the columns are the keys of ``rows[0]`` and every row must have exactly
  those keys; floats show three decimals and ``|`` in a cell is escaped.
"""

from collections.abc import Callable

from ._checks import check_callable, check_str

Encode = Callable[[str], list[int]]


def _check_texts(texts, name: str) -> list[str]:
    """Return a copy of ``texts`` if it is a list of strings."""
    if not isinstance(texts, list):
        raise TypeError(f"{name} must be a list of strings, got {type(texts).__name__}")
    for text in texts:
        check_str(text, f"{name} entry")
    return list(texts)


def _count_tokens(encode: Encode, texts: list[str]) -> int:
    """Total tokens of ``texts``, each encoded on its own."""
    return sum(len(encode(text)) for text in texts)


def tokens_per_char(encode: Encode, texts: list[str]) -> float:
    """Total tokens over total characters of ``texts``."""
    check_callable(encode, "encode")
    texts = _check_texts(texts, "texts")
    chars = sum(len(text) for text in texts)
    if chars == 0:
        raise ValueError("texts must hold at least one character")
    return _count_tokens(encode, texts) / chars


def _check_parallel(parallel, baseline: str) -> dict[str, list[str]]:
    """Validate aligned sentences per language, then the baseline, in the stub's order."""
    if not isinstance(parallel, dict):
        raise TypeError(f"parallel must be a dict of sentence lists, got {type(parallel).__name__}")
    checked = {
        check_str(lang, "parallel key"): _check_texts(sentences, f"parallel[{lang!r}]")
        for lang, sentences in parallel.items()
    }
    if not checked:
        raise ValueError("parallel is empty: give at least one language")
    for lang, sentences in checked.items():
        if not sentences:
            raise ValueError(f"parallel[{lang!r}] has no sentences")
    sizes = {lang: len(sentences) for lang, sentences in checked.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"parallel needs the same number of sentences per language, got {sizes}")
    check_str(baseline, "baseline")
    if baseline not in checked:
        raise ValueError(f"baseline {baseline!r} is not a language of parallel: {sorted(checked)}")
    return checked


def _premiums(tokens: dict[str, int], baseline: str) -> dict[str, float]:
    """Each language's tokens over the baseline's tokens."""
    if tokens[baseline] == 0:
        raise ValueError(f"parallel[{baseline!r}] encodes to zero tokens: no premium is defined")
    return {lang: n / tokens[baseline] for lang, n in tokens.items()}


def tokenization_premium(
    encode: Encode, parallel: dict[str, list[str]], baseline: str = "en"
) -> dict[str, float]:
    """For aligned sentences, each language's total tokens over the baseline's (baseline 1.0)."""
    check_callable(encode, "encode")
    parallel = _check_parallel(parallel, baseline)
    return _premiums({lang: _count_tokens(encode, s) for lang, s in parallel.items()}, baseline)


def benchmark(
    encoders: dict[str, Encode], parallel: dict[str, list[str]], baseline: str = "en"
) -> list[dict]:
    """One row per (encoder, language), sorted by encoder then language, with keys ``encoder``,
    ``language``, ``tokens``, ``chars``, ``bytes``, ``tokens_per_char`` and ``premium``."""
    if not isinstance(encoders, dict):
        raise TypeError(f"encoders must be a dict of name -> encode, got {type(encoders).__name__}")
    if not encoders:
        raise ValueError("encoders is empty: give at least one encoder")
    for name, encode in encoders.items():
        check_str(name, "encoders key")
        check_callable(encode, f"encoders[{name!r}]")
    parallel = _check_parallel(parallel, baseline)
    for lang, sentences in parallel.items():
        if not any(sentences):
            raise ValueError(f"parallel[{lang!r}] has no characters at all")
    rows = []
    for name in sorted(encoders):
        tokens = {lang: _count_tokens(encoders[name], s) for lang, s in parallel.items()}
        premium = _premiums(tokens, baseline)
        for lang in sorted(parallel):
            chars = sum(len(s) for s in parallel[lang])
            rows.append({
                "encoder": name,
                "language": lang,
                "tokens": tokens[lang],
                "chars": chars,
                "bytes": sum(len(s.encode("utf-8")) for s in parallel[lang]),
                "tokens_per_char": tokens[lang] / chars,
                "premium": premium[lang],
            })
    return rows


def _cell(value) -> str:
    """One table cell: floats with 3 decimals, anything else ``str``, ``|`` escaped."""
    text = f"{value:.3f}" if isinstance(value, float) else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def render_table(rows: list[dict]) -> str:
    """The rows as a GitHub Markdown table: a header row, a separator, one line per row.

    The columns are the keys of ``rows[0]``; every row must have exactly those keys."""
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise TypeError("rows must be a list of dicts")
    if not rows:
        raise ValueError("rows is empty: nothing to render")
    columns = list(rows[0])
    if any(row.keys() != rows[0].keys() for row in rows):
        raise ValueError("rows must all have the keys of rows[0]")
    lines = [columns, ["---"] * len(columns), *([row[column] for column in columns] for row in rows)]
    return "\n".join("| " + " | ".join(map(_cell, line)) + " |" for line in lines)
