"""Exercise 4, written plainly."""


def _texts(texts, name):
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise TypeError(f"{name} must be a list of str")


def tokens_per_char(encode, texts):
    if not callable(encode):
        raise TypeError("encode must be callable")
    _texts(texts, "texts")
    chars = sum(len(t) for t in texts)
    if chars == 0:
        raise ValueError("texts must hold at least one character")
    tokens = 0
    for t in texts:
        tokens += len(encode(t))
    return tokens / chars


def _validate(parallel, baseline):
    if not isinstance(parallel, dict):
        raise TypeError("parallel must be a dict")
    for lang, sents in parallel.items():
        if not isinstance(lang, str):
            raise TypeError("parallel keys must be str")
        _texts(sents, "parallel")
    if not parallel:
        raise ValueError("parallel is empty")
    if any(len(s) == 0 for s in parallel.values()):
        raise ValueError("parallel has a language with no sentences")
    if len({len(s) for s in parallel.values()}) != 1:
        raise ValueError("parallel: the languages have different numbers of sentences")
    if not isinstance(baseline, str):
        raise TypeError("baseline must be a str")
    if baseline not in parallel:
        raise ValueError(f"baseline {baseline!r} is not in parallel")


def tokenization_premium(encode, parallel, baseline="en"):
    if not callable(encode):
        raise TypeError("encode must be callable")
    _validate(parallel, baseline)
    totals = {}
    for lang, sents in parallel.items():
        totals[lang] = sum(len(encode(s)) for s in sents)
    if totals[baseline] == 0:
        raise ValueError("parallel: the baseline has no tokens")
    return {lang: totals[lang] / totals[baseline] for lang in parallel}


def benchmark(encoders, parallel, baseline="en"):
    if not isinstance(encoders, dict) or not all(isinstance(k, str) and callable(v) for k, v in encoders.items()):
        raise TypeError("encoders must be a dict of str to callables")
    if not encoders:
        raise ValueError("encoders is empty")
    _validate(parallel, baseline)
    for _lang, sents in parallel.items():
        if sum(len(s) for s in sents) == 0:
            raise ValueError("parallel: a language has no characters")
    rows = []
    for name in sorted(encoders):
        premium = tokenization_premium(encoders[name], parallel, baseline)
        for lang in sorted(parallel):
            tokens = sum(len(encoders[name](s)) for s in parallel[lang])
            chars = sum(len(s) for s in parallel[lang])
            rows.append({
                "encoder": name,
                "language": lang,
                "tokens": tokens,
                "chars": chars,
                "bytes": sum(len(s.encode("utf-8")) for s in parallel[lang]),
                "tokens_per_char": tokens / chars,
                "premium": premium[lang],
            })
    return rows


def render_table(rows):
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError("rows must be a list of dicts")
    if not rows:
        raise ValueError("rows is empty")
    columns = list(rows[0])
    for row in rows:
        if set(row) != set(columns):
            raise ValueError("rows: every row needs the keys of the first row")

    def cell(v):
        s = f"{v:.3f}" if isinstance(v, float) else str(v)
        return s.replace("|", "\\|")

    lines = ["| " + " | ".join(cell(c) for c in columns) + " |",
             "| " + " | ".join("---" for _ in columns) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(cell(row[c]) for c in columns) + " |")
    return "\n".join(lines)
