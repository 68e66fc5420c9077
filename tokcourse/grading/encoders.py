"""Reference encoders: plain functions ``str -> list[int]``.

This module is self-contained (standard library, plus tiktoken for ``cl100k``) because
it is copied alone into the grading sandbox as a top-level module named ``encoders``.
Every id is deterministic across calls, processes and machines.

``cl100k`` needs tiktoken's ``cl100k_base`` file without a network: set
``TIKTOKEN_CACHE_DIR`` to the folder filled by ``python -m tokcourse.assets fetch``
(``.cache/tiktoken``), or rely on the copy that command leaves in tiktoken's default cache.
"""

from __future__ import annotations

import functools
import hashlib

__all__ = ["characters", "utf8_bytes", "whitespace_words", "cl100k", "ENCODERS"]


def _check(text) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")


def characters(text: str) -> list[int]:
    """One token per Unicode code point: the code point itself.

    >>> characters("hé 你")
    [104, 233, 32, 20320]
    """
    _check(text)
    return [ord(ch) for ch in text]


def utf8_bytes(text: str) -> list[int]:
    """One token per byte of the UTF-8 encoding (ids 0-255).

    >>> utf8_bytes("hé 你")
    [104, 195, 169, 32, 228, 189, 160]
    """
    _check(text)
    return list(text.encode("utf-8"))


def whitespace_words(text: str) -> list[int]:
    """One token per whitespace-separated word (``text.split()``); whitespace itself is dropped.

    A word's id is the first 4 bytes of its BLAKE2b digest (big-endian), so equal words
    get equal ids in every call and every process; distinct words practically never collide.

    >>> whitespace_words("to be or not to be")
    [608255077, 775683713, 1143867994, 3087309394, 608255077, 775683713]
    >>> whitespace_words("  \\n ")
    []
    """
    _check(text)
    return [
        int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=4).digest(), "big")
        for word in text.split()
    ]


@functools.lru_cache(maxsize=1)
def _cl100k_encoding():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


def cl100k(text: str) -> list[int]:
    """tiktoken's ``cl100k_base`` (GPT-4's encoding), loaded once on first use.

    Any text is accepted: special-token strings such as ``<|endoftext|>`` are encoded
    as ordinary text, never as special ids.

    >>> cl100k("Hello, world!")
    [9906, 11, 1917, 0]
    >>> len(cl100k("<|endoftext|>")) > 1
    True
    """
    _check(text)
    return _cl100k_encoding().encode(text, disallowed_special=())


ENCODERS = {
    "characters": characters,
    "utf8_bytes": utf8_bytes,
    "whitespace_words": whitespace_words,
    "cl100k_base": cl100k,
}
