"""What a Persian student must not meet: English prose outside code (docs/persian.md)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from babel.messages.pofile import read_po

from autograder import suite_texts
from autograder.i18n import LOCALE_DIR, PLACEHOLDER

ROOT = Path(__file__).resolve().parent.parent

PERSIAN_LETTER = re.compile(r"[\u0620-\u064A\u066E-\u06D3\u06D5\u06FA-\u06FF]")
# names a Persian text keeps in Latin, as the lesson does: algorithms, libraries, formats
LATIN_NAMES = {"BPE", "WordPiece", "Viterbi", "EM", "Unigram", "tiktoken", "UTF", "Markdown", "log-sum-exp",
               "SentencePiece", "Python", "Zipf", "Jaccard", "GPT", "cl100k_base"}
# what hypothesis writes in its notes, which the feedback shows in the course's language
HYPOTHESIS_WORDS = re.compile(r"Falsifying|^\s*Draw \d|\(note: \d+ other explicit", flags=re.M)
# the small words English prose cannot do without and code seldom names: two of them on a line of
# code (outside its strings) are a sentence, the way an untranslated failure line reads
ENGLISH_GLUE = {"the", "of", "should", "expected", "got", "after", "than", "but", "must", "which", "was", "were",
                "has", "have", "their", "its", "every", "each", "would", "when", "this", "that", "there", "still",
                "does", "though", "instead", "left", "missing", "stopped", "holds", "may", "only"}
# a string as Python writes it: not an apostrophe's (the docstring's example)
_QUOTED = re.compile(r"(?<![A-Za-z])'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def bidi_free(text: str) -> str:
    """``text`` without its bidirectional controls."""
    return re.sub("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", "", text)


def _code_removed(text: str) -> str:
    """``text`` without its code: fenced blocks, ``<pre>`` and ``<code>``, code spans, what an LRI
    isolates (and an FSI, where no Persian is in it), and HTML tags."""
    text = re.sub(r"^ *```.*?^ *```", " ", text, flags=re.S | re.M)
    text = re.sub(r"<pre.*?</pre>|<code.*?</code>", " ", text, flags=re.S)
    text = re.sub(r"``.+?``|`[^`\n]+`", " ", text)
    code = re.compile("\u2066[^\u2066\u2068\u2069]*\u2069|\u2068[^\u2066\u2068\u2069\u0600-\u06FF]*\u2069")
    while code.search(text):  # innermost first: what an LRI isolates, and an FSI without Persian in it
        text = code.sub(" ", text)
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


def glued_lines(text: str) -> list[str]:
    """The lines of ``text`` outside its Persian prose (code blocks, code spans, isolated values,
    lines without Persian) that read as English sentences: two of :data:`ENGLISH_GLUE`'s words
    outside their quoted strings and identifiers."""
    found = []
    for line in text.splitlines():
        words = set(re.findall(r"(?<![\w.])[A-Za-z]+(?![\w.])", _QUOTED.sub(" ", line)))  # not in identifiers
        if len(words & ENGLISH_GLUE) >= 2:
            found.append(line.strip())
    return found


@cache
def suite_english() -> tuple[str, ...]:
    """The suites' English message templates (``say`` in ``suites/``), each as its longest run
    of words between placeholders (those long enough to be found by themselves)."""
    runs = set()
    for path in sorted((ROOT / "suites").glob("*.py")):
        for template in suite_texts.templates(path.read_text(encoding="utf-8")):
            longest = max(PLACEHOLDER.split(template)[::2], key=len).strip(" -:,;()")
            if len(longest) >= 12 and " " in longest:
                runs.add(longest)
    return tuple(sorted(runs))


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
    lines; an English text of the engine's or of the suites' anywhere (an untranslated line is
    no Persian line, and a code block or an isolated value may hold one); a line of code that
    reads as an English sentence; and hypothesis's own words."""
    said = [f"the word {word!r}" for word in english_words(text)]
    said += [f"the engine's English {head!r}" for head in engine_english() if head in text]
    said += [f"the suites' English {run!r}" for run in suite_english() if run in text]
    said += [f"the English sentence {line!r}" for line in glued_lines(bidi_free(text))]
    said += [f"hypothesis's {found.group(0)!r}" for found in HYPOTHESIS_WORDS.finditer(text)]
    return said
