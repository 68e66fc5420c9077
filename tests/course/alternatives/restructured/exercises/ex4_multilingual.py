"""Exercise 4 with a different structure: per-language totals first, then everything derived
from them; an aligned Markdown table with colon separators."""


def _check_texts(value, name):
    if type(value) is not list or any(type(t) is not str for t in value):
        raise TypeError(f"{name} must be a list of str")


def _totals(encode, texts):
    """(tokens, chars, bytes) over texts, each text encoded on its own."""
    tokens = chars = size = 0
    for text in texts:
        tokens += len(encode(text))
        chars += len(text)
        size += len(text.encode("utf-8"))
    return tokens, chars, size


def tokens_per_char(encode, texts):
    if not callable(encode):
        raise TypeError("encode must be callable")
    _check_texts(texts, "texts")
    if not texts or not "".join(texts):
        raise ValueError("texts must hold some characters")
    tokens, chars, _ = _totals(encode, texts)
    return tokens / chars


def _check_parallel(parallel, baseline):
    if type(parallel) is not dict or any(type(k) is not str for k in parallel):
        raise TypeError("parallel must be a dict from str to lists of str")
    for sentences in parallel.values():
        _check_texts(sentences, "parallel")
    if len(parallel) == 0:
        raise ValueError("parallel must hold at least one language")
    counts = [len(s) for s in parallel.values()]
    if min(counts) == 0 or max(counts) != min(counts):
        raise ValueError("parallel: every language needs the same, non-zero number of sentences")
    if type(baseline) is not str:
        raise TypeError("baseline must be a str")
    if baseline not in parallel:
        raise ValueError("baseline is not a language of parallel")


def tokenization_premium(encode, parallel, baseline="en"):
    if not callable(encode):
        raise TypeError("encode must be callable")
    _check_parallel(parallel, baseline)
    tokens = {lang: _totals(encode, s)[0] for lang, s in parallel.items()}
    if not tokens[baseline]:
        raise ValueError("parallel: the baseline sentences have no tokens")
    base = tokens.pop(baseline)
    result = {}
    for lang in parallel:
        result[lang] = 1.0 if lang == baseline else tokens[lang] / base
    return result


def benchmark(encoders, parallel, baseline="en"):
    if type(encoders) is not dict or any(type(k) is not str or not callable(v) for k, v in encoders.items()):
        raise TypeError("encoders must be a dict from str to callables")
    if not encoders:
        raise ValueError("encoders must not be empty")
    _check_parallel(parallel, baseline)
    if any(not "".join(s) for s in parallel.values()):
        raise ValueError("parallel: a language has no characters")
    rows = []
    for name, encode in sorted(encoders.items()):
        premium = tokenization_premium(encode, parallel, baseline)
        for lang, sentences in sorted(parallel.items()):
            tokens, chars, size = _totals(encode, sentences)
            rows.append(dict(encoder=name, language=lang, tokens=tokens, chars=chars, bytes=size,
                             tokens_per_char=tokens_per_char(encode, sentences), premium=premium[lang]))
    return rows


def render_table(rows):
    if type(rows) is not list or any(type(r) is not dict for r in rows):
        raise TypeError("rows must be a list of dicts")
    if not rows:
        raise ValueError("rows must not be empty")
    columns = list(rows[0])
    if any(sorted(r) != sorted(columns) for r in rows):
        raise ValueError("rows: every row must have the keys of the first")

    def show(value):
        text = format(value, ".3f") if type(value) is float else str(value)
        return text.replace("|", r"\|")

    grid = [[show(c) for c in columns]] + [[show(r[c]) for c in columns] for r in rows]
    widths = [max(3, *(len(line[i]) for line in grid)) for i in range(len(columns))]
    numeric = [all(type(r[c]) in (int, float) for r in rows) for c in columns]

    def line(cells):
        return "| " + " | ".join(cell.rjust(w) if num else cell.ljust(w)
                                 for cell, w, num in zip(cells, widths, numeric, strict=True)) + " |"

    separator = "|" + "|".join(("-" * (w + 1) + ":") if num else (":" + "-" * (w + 1))
                               for w, num in zip(widths, numeric, strict=True)) + "|"
    return "\n".join([line(grid[0]), separator] + [line(cells) for cells in grid[1:]])
