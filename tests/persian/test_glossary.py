"""One term per idea: every Persian text a student reads writes the glossary's term, never one of
its rejected variants (``translations/fa/glossary``; docs/persian.md, "The lesson's terms")."""

import re
from pathlib import Path

import pytest
import yaml
from babel.messages.pofile import read_po

from autograder.i18n import LOCALE_DIR
from tests.conftest import ROOT

GLOSSARY = ROOT / "translations" / "fa" / "glossary"
TEMPLATES = ROOT / "autograder" / "delivery" / "templates" / "fa"
LETTER = "\u0600-\u06FF\u200C"  # a Persian letter, or the non-joiner inside a word


def glossary() -> list[tuple[str, str, list[str]]]:
    """The glossary's entries: ``(term, English, rejected variants)``."""
    entries = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            term, english, rejected = line.split("\t")
            entries.append((term, english, [variant.strip() for variant in rejected.split(" | ")]))
    return entries


def variant_pattern(variant: str) -> re.Pattern:
    """A rejected variant as a pattern: a phrase not inside a longer word, ``…`` any words of one
    sentence, a variant in double quotes the whole text."""
    if variant.startswith('"') and variant.endswith('"'):
        return re.compile(rf"\A\s*{re.escape(variant[1:-1])}\s*\Z")
    body = r"[^.؛!?؟\n]*?".join(re.escape(part.strip()) for part in variant.split("…"))
    return re.compile(rf"(?<![{LETTER}]){body}(?![{LETTER}])")


def persian_texts() -> list[tuple[str, str]]:
    """Every Persian text a student may read, by where it is: the engine's catalog and the data
    fetcher's, the course's texts in ``translations/fa/`` and the delivery channels' Persian templates."""
    found = []
    for po in (LOCALE_DIR / "fa" / "LC_MESSAGES" / "autograder.po",
               ROOT / "tokcourse" / "locale" / "fa" / "LC_MESSAGES" / "tokcourse.po"):
        with po.open("rb") as file:
            found += [(f"{po.name} {message.id!r}", text) for message in read_po(file) if message.id
                      for text in (message.string if isinstance(message.string, tuple) else [message.string])]
    for path in sorted((ROOT / "translations" / "fa").rglob("*.yaml")):
        texts = yaml.safe_load(path.read_text(encoding="utf-8"))
        found += [(f"{path.name} {key}", text) for key, text in leaves(texts)]
    found += [(f"templates/fa/{path.name}", path.read_text(encoding="utf-8")) for path in sorted(TEMPLATES.iterdir())]
    return found


def leaves(value, key: str = "") -> list[tuple[str, str]]:
    """The texts under a mapping of a translation file, each by its dotted key."""
    if isinstance(value, dict):
        return [found for name, item in value.items() for found in leaves(item, f"{key}.{name}".lstrip("."))]
    return [(key, value)] if isinstance(value, str) else []


def rejected_in(text: str) -> list[str]:
    """The glossary's rejected variants ``text`` writes, each with the term to write instead."""
    joined = " ".join(text.split())  # a sentence wraps over lines
    return [f"{variant!r} (write {term!r}: {english})" for term, english, variants in glossary()
            for variant in variants if variant_pattern(variant).search(joined)]


def test_the_glossary_is_well_formed():
    entries = glossary()
    assert len(entries) >= 20
    terms = [term for term, _, _ in entries]
    assert len(set(terms)) == len(terms), "a term twice"
    assert all(english and variants and all(variants) for _, english, variants in entries)


TEXTS = persian_texts()


@pytest.mark.parametrize("where, text", TEXTS, ids=[where[:50] for where, _ in TEXTS])
def test_every_persian_text_writes_the_glossary_s_terms(where, text):
    assert not rejected_in(text), f"{where}: " + "; ".join(rejected_in(text))


@pytest.mark.parametrize("text, found", [
    ("پیام هر دو نام آرگومان را در خود دارد؛ EM قطعه را گرسنه بگذارد.", True),
    ("تساوی به قطعه‌ی آخر بلندتر، یعنی ab، می‌رسد.", True),
    ("این‌ها ثابت‌هایی هستند که کد شما نگه می‌دارد.", True),
    ("هیچ", True),
    ("هیچ جفتی نمانده است.", False),  # a bare «هیچ» is rejected as a cell, not inside a sentence
    ("فراخوانی‌های ثابتی که پاسخشان قفل شده است.", False),  # «ثابت» is fixed, not invariants
    ("در تساوی، نخستین رخداد برنده است.", False),
])
def test_a_rejected_variant_is_found_and_only_there(text, found):
    assert bool(rejected_in(text)) is found, rejected_in(text)


def test_each_term_is_written_somewhere():
    """A term no text writes is a glossary entry for nothing (or a text that lost it)."""
    joined = " ".join(" ".join(text.split()) for _, text in persian_texts())
    unused = [term for term, _, _ in glossary()
              if not re.search(r"[^.؛!?؟]*?".join(re.escape(part.strip()) for part in term.split("…")), joined)]
    assert not unused, unused


def test_the_glossary_is_data_not_a_module_s_texts():
    """The translation files are ``<module>.yaml``; the glossary is not one of them."""
    assert GLOSSARY.suffix == "" and Path(GLOSSARY).is_file()
