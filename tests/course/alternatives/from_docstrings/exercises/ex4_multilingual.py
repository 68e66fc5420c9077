"""Exercise 4 written from the docstrings alone."""

from ._args import need_callable, need_dict, need_list, need_str


def _tokens(encode, texts):
    return sum(len(encode(text)) for text in texts)


def tokens_per_char(encode, texts):
    need_callable(encode, "encode")
    need_list(texts, "texts", str)
    chars = sum(len(text) for text in texts)
    if not chars:
        raise ValueError("texts must not be empty or all empty strings")
    return _tokens(encode, texts) / chars


def _check_parallel(parallel):
    need_dict(parallel, "parallel", str, (list,))
    for sentences in parallel.values():
        need_list(sentences, "parallel", str)
    if not parallel:
        raise ValueError("parallel must not be empty")
    sizes = {len(sentences) for sentences in parallel.values()}
    if 0 in sizes or len(sizes) > 1:
        raise ValueError("parallel: every language needs the same number of sentences, at least one")


def _check_baseline(baseline, parallel):
    need_str(baseline, "baseline")
    if baseline not in parallel:
        raise ValueError(f"baseline {baseline!r} is not a language of parallel")


def _premium(encode, parallel, baseline):
    tokens = {lang: _tokens(encode, sentences) for lang, sentences in parallel.items()}
    if tokens[baseline] == 0:
        raise ValueError(f"parallel: the baseline {baseline!r} has no tokens")
    return {lang: n / tokens[baseline] for lang, n in tokens.items()}


def tokenization_premium(encode, parallel, baseline="en"):
    need_callable(encode, "encode")
    _check_parallel(parallel)
    _check_baseline(baseline, parallel)
    return _premium(encode, parallel, baseline)


def benchmark(encoders, parallel, baseline="en"):
    if type(encoders) is not dict:
        raise TypeError("encoders must be a dict")
    for name, encode in encoders.items():
        need_str(name, "encoders")
        need_callable(encode, "encoders")
    if not encoders:
        raise ValueError("encoders must not be empty")
    _check_parallel(parallel)
    if any(not "".join(sentences) for sentences in parallel.values()):
        raise ValueError("parallel: every language needs at least one character")
    _check_baseline(baseline, parallel)
    rows = []
    for name in sorted(encoders):
        premium = _premium(encoders[name], parallel, baseline)
        for lang in sorted(parallel):
            sentences = parallel[lang]
            tokens = _tokens(encoders[name], sentences)
            chars = sum(len(s) for s in sentences)
            rows.append({"encoder": name, "language": lang, "tokens": tokens, "chars": chars,
                         "bytes": sum(len(s.encode("utf-8")) for s in sentences),
                         "tokens_per_char": tokens / chars, "premium": premium[lang]})
    return rows


def _cell(value):
    text = f"{value:.3f}" if type(value) is float else str(value)
    return text.replace("|", "\\|")


def render_table(rows):
    need_list(rows, "rows", dict)
    if not rows:
        raise ValueError("rows must not be empty")
    columns = list(rows[0])
    for row in rows:
        if set(row) != set(columns) or len(row) != len(columns):
            raise ValueError("rows: every row needs exactly the first row's keys")
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |",
             "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(_cell(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
