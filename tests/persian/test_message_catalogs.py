"""The message catalogs, the engine's (autograder/i18n.py) and the course's (tokcourse/assets.py, the
data fetcher's words): extraction is up to date, every language translates every text with the
same placeholders, and the committed .mo files say what the .po do."""

from __future__ import annotations

import gettext
import re
import string
from collections import Counter
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir, extract_from_file
from babel.messages.pofile import read_po

from autograder import i18n
from autograder.i18n import LOCALE_DIR

POT = LOCALE_DIR / "autograder.pot"
LANGUAGES = sorted(path.name for path in LOCALE_DIR.iterdir() if path.is_dir())
ROOT = LOCALE_DIR.parents[1]
# each catalog: its domain, its folder and what its texts are extracted from
DOMAINS = [("autograder", LOCALE_DIR, LOCALE_DIR.parent), ("tokcourse", ROOT / "tokcourse" / "locale",
                                                             ROOT / "tokcourse" / "assets.py")]
EACH = [pytest.param(domain, folder, language, id=f"{domain}-{language}")
        for domain, folder, _ in DOMAINS for language in LANGUAGES]


def po_of(domain: str, folder: Path, language: str) -> Path:
    return folder / language / "LC_MESSAGES" / f"{domain}.po"


def _catalog(path: Path):
    with path.open("rb") as file:
        return read_po(file)


def _ids(catalog) -> set:
    return {message.id for message in catalog if message.id}


def placeholders(text: str) -> Counter:
    """The ``{field:spec}`` fields of a ``str.format`` text, counted."""
    return Counter(f"{name}:{spec}" for _, name, spec, _ in string.Formatter().parse(text) if name is not None)


def placeholder_drift(message) -> list[str]:
    """How each translation of ``message`` differs from its English in placeholders."""
    ids = message.id if isinstance(message.id, tuple) else (message.id,)
    strings = message.string if isinstance(message.string, tuple) else (message.string,)
    expected = placeholders(ids[0])
    problems = []
    for index, text in enumerate(strings):
        try:
            found = placeholders(text)
        except ValueError as error:  # an unmatched brace
            problems.append(f"form {index}: {error}")
            continue
        if found != expected and text:
            problems.append(f"form {index}: {sorted(found.elements())} for {sorted(expected.elements())}")
    return problems


@pytest.mark.parametrize("domain, folder, sources", DOMAINS, ids=[domain for domain, _, _ in DOMAINS])
def test_the_template_holds_every_marked_text(domain, folder, sources):
    found = extract_from_dir(str(sources)) if sources.is_dir() else extract_from_file("python", str(sources))
    extracted = {message[2] if sources.is_dir() else message[1] for message in found}
    assert _ids(_catalog(folder / f"{domain}.pot")) == extracted, f"{domain}.pot is out of date: run make messages"


@pytest.mark.parametrize("domain, folder, language", EACH)
def test_each_language_has_the_template_s_texts(domain, folder, language):
    po = po_of(domain, folder, language)
    assert _ids(_catalog(po)) == _ids(_catalog(folder / f"{domain}.pot")), \
        f"{po.name} of {language} is out of date: run make messages"


@pytest.mark.parametrize("domain, folder, language", EACH)
def test_every_text_is_translated(domain, folder, language):
    catalog = _catalog(po_of(domain, folder, language))
    missing = [message.id for message in catalog if message.id
               and (message.fuzzy or not all(message.string if isinstance(message.string, tuple)
                                             else [message.string]))]
    assert not missing, f"no {language} translation of {missing}"


@pytest.mark.parametrize("domain, folder, language", EACH)
def test_translations_keep_the_placeholders(domain, folder, language):
    catalog = _catalog(po_of(domain, folder, language))
    drift = {message.id: problems for message in catalog if message.id and (problems := placeholder_drift(message))}
    assert not drift


def test_a_dropped_or_renamed_placeholder_is_found():
    catalog = _catalog(LOCALE_DIR / "fa" / "LC_MESSAGES" / "autograder.po")
    message = catalog["{what}: expected {expected}, got {got}"]
    message.string = message.string.replace("{got}", "{result}")
    assert placeholder_drift(message)
    message.string = message.string.replace("{result}", "")
    assert placeholder_drift(message)
    message = catalog["took longer than {seconds:.3g} s ({why})"]
    message.string = message.string.replace("{seconds:.3g}", "{seconds}")  # the format spec is part of it
    assert placeholder_drift(message)


@pytest.mark.parametrize("domain, folder, language", EACH)
def test_the_committed_mo_says_what_the_po_says(domain, folder, language):
    po = po_of(domain, folder, language)
    with po.with_suffix(".mo").open("rb") as file:
        compiled = gettext.GNUTranslations(file)
    catalog = _catalog(po)
    for message in catalog:
        if not message.id:
            continue
        if isinstance(message.id, tuple):
            for count, form in ((1, 0), (2, 1)):
                said = compiled.ngettext(*message.id, count)
                assert said == message.string[form], f"{language}: run make messages-compile"
        else:
            assert compiled.gettext(message.id) == message.string, f"{language}: run make messages-compile"


ISOLATED = re.compile(r"[\u2066\u2068]`?\{\w+(?:![rsa])?(?::[^{}]*)?\}`?\u2069"  # LRI or FSI, a placeholder, PDI
                      r"|\u2066[A-Za-z_]\w*\u2069")  # or LRI, a name of Python (``tuple``), not backticks


@pytest.mark.parametrize("domain, folder", [(domain, folder) for domain, folder, _ in DOMAINS])
def test_persian_writes_latin_digits_persian_letters_and_isolates_each_placeholder(domain, folder):
    """Each value a Persian text names is isolated (docs/persian.md, "Right to left"), and no other
    bidirectional control is written."""
    catalog = _catalog(po_of(domain, folder, "fa"))
    for message in catalog:
        for text in message.string if isinstance(message.string, tuple) else [message.string]:
            rest = ISOLATED.sub("", text)
            assert not re.search(r"[۰-۹٠-٩يك\u200E\u200F\u202A-\u202E\u2066-\u2069]", rest), text
            assert not placeholders(rest), f"{text!r}: isolate each placeholder (U+2066 or U+2068 ... U+2069)"


def test_the_engine_speaks_the_language_it_is_asked_to():
    with i18n.speaking("fa"):
        assert i18n._("not implemented yet") == "هنوز نوشته نشده است"
        with i18n.speaking("en"):
            assert i18n._("not implemented yet") == "not implemented yet"
    assert i18n._("not implemented yet") == "not implemented yet"
