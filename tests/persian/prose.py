"""What a Persian student must not meet: English prose outside code (docs/persian.md)."""

from __future__ import annotations

import re
from functools import cache

from babel.messages.pofile import read_po

from autograder.i18n import LOCALE_DIR

PERSIAN_LETTER = re.compile(r"[\u0620-\u064A\u066E-\u06D3\u06D5\u06FA-\u06FF]")
# names a Persian text keeps in Latin, as the lesson does: algorithms, libraries, formats
LATIN_NAMES = {"BPE", "WordPiece", "Viterbi", "EM", "Unigram", "tiktoken", "UTF", "Markdown", "log-sum-exp",
               "SentencePiece", "Python", "Zipf", "Jaccard", "GPT", "cl100k_base"}
# what hypothesis writes in its notes, which the feedback shows in the course's language
HYPOTHESIS_WORDS = re.compile(r"Falsifying|^\s*Draw \d|\(note: \d+ other explicit", flags=re.M)


def _code_removed(text: str) -> str:
    """``text`` without its code: fenced blocks, ``<pre>`` and ``<code>``, code spans, what an LRI
    isolates, and HTML tags."""
    text = re.sub(r"^ *```.*?^ *```", " ", text, flags=re.S | re.M)
    text = re.sub(r"<pre.*?</pre>|<code.*?</code>", " ", text, flags=re.S)
    text = re.sub(r"``.+?``|`[^`\n]+`", " ", text)
    while re.search("\u2066[^\u2066\u2068\u2069]*\u2069", text):
        text = re.sub("\u2066[^\u2066\u2068\u2069]*\u2069", " ", text)
    return re.sub(r"<[^>]+>", " ", text)


def english_words(text: str) -> list[str]:
    """The Latin words of ``text``'s Persian lines outside code and identifiers (a word with ``_``,
    a digit or a dot), but for the names kept in Latin."""
    found = []
    for line in _code_removed(text).splitlines():
        if PERSIAN_LETTER.search(line):
            found += [word for word in re.findall(r"[A-Za-z][\w.'-]*", line)
                      if word not in LATIN_NAMES and not re.search(r"[_\d.]", word)]
    return found


@cache
def engine_english() -> tuple[str, ...]:
    """The engine's English texts, each as the words before its first placeholder (those long
    enough to be found by themselves)."""
    with (LOCALE_DIR / "fa" / "LC_MESSAGES" / "autograder.po").open("rb") as po:
        ids = [m.id if isinstance(m.id, str) else m.id[0] for m in read_po(po) if m.id]
    heads = {re.split(r"\{", message)[0].strip(" -:#*") for message in ids}
    return tuple(sorted(head for head in heads if len(head) >= 12 and " " in head))


def english_prose(text: str) -> list[str]:
    """Where a Persian page or output says something in English: Latin words in its Persian
    lines, an English text of the engine's anywhere (an untranslated line is no Persian line),
    and hypothesis's own words."""
    said = [f"the word {word!r}" for word in english_words(text)]
    said += [f"the engine's English {head!r}" for head in engine_english() if head in text]
    said += [f"hypothesis's {found.group(0)!r}" for found in HYPOTHESIS_WORDS.finditer(text)]
    return said
