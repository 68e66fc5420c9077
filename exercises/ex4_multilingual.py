"""Exercise 4: a multilingual benchmark. Who pays more tokens for the same meaning?

Task
----
A tokenizer trained mostly on English splits other languages into more tokens, so the
same sentence costs more (in money, context length and time) in Persian or Hindi than in
English. Measure it: tokens per character, the *tokenization premium* of each language
over a baseline on parallel (translated, sentence-aligned) text, a benchmark over several
encoders, and a Markdown table of the results.

Rules
-----
- An encoder (``encode``) is any callable taking a ``str`` and returning a list of token
  ids; the number of tokens of a sentence is ``len(encode(sentence))``. At grading time it
  may be a character, UTF-8 byte, whitespace or tiktoken ``cl100k_base`` encoder.
- Every sentence is encoded on its own and the token counts are summed; sentences are
  never joined. Characters are ``len(sentence)`` and bytes
  ``len(sentence.encode("utf-8"))``, summed the same way.
- ``parallel`` maps a language code to its list of sentences; sentence ``i`` of every
  language says the same thing.
- Bad input raises ``TypeError``/``ValueError`` by the rules in ``exercises/__init__.py``.
  A tuple is not a list there.
- No function changes its arguments.

Example::

    >>> utf8 = lambda s: list(s.encode("utf-8"))
    >>> chars = lambda s: [ord(c) for c in s]
    >>> tokens_per_char(utf8, ["héllo"])
    1.2
    >>> parallel = {"en": ["cat", "dog"], "ru": ["кот", "пёс"]}
    >>> tokenization_premium(utf8, parallel)
    {'en': 1.0, 'ru': 2.0}
    >>> rows = benchmark({"utf8": utf8, "chars": chars}, parallel)
    >>> [(r["encoder"], r["language"], r["premium"]) for r in rows]
    [('chars', 'en', 1.0), ('chars', 'ru', 1.0), ('utf8', 'en', 1.0), ('utf8', 'ru', 2.0)]
    >>> print(render_table(rows[2:]))                                # doctest: +SKIP
    | encoder | language | tokens | chars | bytes | tokens_per_char | premium |
    | --- | --- | --- | --- | --- | --- | --- |
    | utf8 | en | 6 | 6 | 6 | 1.000 | 1.000 |
    | utf8 | ru | 12 | 6 | 12 | 2.000 | 2.000 |

(Every Cyrillic letter is two bytes in UTF-8, so a byte-level encoder pays double.)

Hint
----
Write ``tokens_per_char`` and ``tokenization_premium`` first, then build ``benchmark`` on
them. Validate ``parallel`` once, before encoding anything.
"""

from collections.abc import Callable


def tokens_per_char(encode: Callable[[str], list[int]], texts: list[str]) -> float:
    """Total tokens over total characters of ``texts``.

    Each text is encoded on its own: ``sum(len(encode(t)) for t in texts) /
    sum(len(t) for t in texts)``. Example: with a UTF-8 byte encoder,
    ``tokens_per_char(utf8, ["héllo"]) == 1.2`` (6 bytes, 5 characters).

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``encode``: callable;
    ``texts``: not empty, and not all ``""``).
    """
    raise NotImplementedError("tokens_per_char is not implemented yet")


def tokenization_premium(
    encode: Callable[[str], list[int]], parallel: dict[str, list[str]], baseline: str = "en"
) -> dict[str, float]:
    """How many tokens each language needs relative to ``baseline``, on aligned text.

    For each language: the total tokens of its sentences over the total tokens of the
    baseline's sentences. Returns a dict with the keys of ``parallel`` in the same order;
    the baseline's value is ``1.0``. Example: with a UTF-8 byte encoder,
    ``tokenization_premium(utf8, {"en": ["cat"], "ru": ["кот"]}) == {"en": 1.0, "ru": 2.0}``.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``encode``: callable;
    ``parallel``: not empty, every language with sentences, all with the same number;
    ``baseline``: a key of ``parallel``), then ``ValueError`` naming ``parallel`` when the
    baseline's sentences have 0 tokens in total.
    """
    raise NotImplementedError("tokenization_premium is not implemented yet")


def benchmark(
    encoders: dict[str, Callable[[str], list[int]]],
    parallel: dict[str, list[str]],
    baseline: str = "en",
) -> list[dict]:
    """One row per (encoder, language), sorted by encoder name, then language code.

    Each row is a dict with the keys, in this order:

    - ``encoder``: the encoder's name (its key in ``encoders``);
    - ``language``: the language code (its key in ``parallel``);
    - ``tokens``, ``chars``, ``bytes``: totals over the language's sentences (ints);
    - ``tokens_per_char``: ``tokens / chars``;
    - ``premium``: that encoder's ``tokenization_premium`` for the language.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``encoders``: not empty;
    ``parallel``, ``baseline``: as in ``tokenization_premium``, and every language of
    ``parallel`` has at least one character).
    """
    raise NotImplementedError("benchmark is not implemented yet")


def render_table(rows: list[dict]) -> str:
    """A GitHub Markdown table of ``rows``, ready to paste into a report.

    The columns are the keys of ``rows[0]``, in order. Lines, joined by ``"\\n"`` with no
    trailing newline:

    1. the header: ``"| " + " | ".join(columns) + " |"``;
    2. the separator: ``"| " + " | ".join("---" for each column) + " |"``;
    3. one line per row, in order, built like the header from its cells.

    A ``float`` cell is written with three decimals (``f"{value:.3f}"``, so ``2.0`` is
    ``2.000``); any other value with ``str(value)``. A ``|`` inside a cell or a column
    name is written as ``\\|`` so that the table stays valid.

    Raises ``TypeError``/``ValueError`` per the bad-input rules (``rows``: not empty,
    every row with exactly the first row's keys, in any order; cells follow the columns).
    """
    raise NotImplementedError("render_table is not implemented yet")
