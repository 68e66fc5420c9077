"""The engine's words in the course's language: the standard library's gettext over the
catalogs in ``autograder/locale/``.

English is the source: every text a student reads is marked (``_()``, ``ngettext()``, ``N_()``)
with named ``{fields}`` filled after translation. Babel manages the catalogs (``make messages``);
the ``.mo`` files are committed, since the release and the Gradescope image ship no Babel. A
function that writes for students with a course in hand is decorated with
:func:`in_course_language`. Test names, property names and scores are never translated.
docs/persian.md, "The engine's messages", says how a catalog is kept."""

from __future__ import annotations

import contextlib
import functools
import gettext
import inspect
import re
from collections.abc import Callable, Generator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

DOMAIN = "autograder"
LOCALE_DIR = Path(__file__).with_name("locale")
ENGLISH = gettext.NullTranslations()

_speaking: ContextVar[gettext.NullTranslations] = ContextVar("language", default=ENGLISH)
F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def catalog(language: str) -> gettext.NullTranslations:
    """The compiled catalog of ``language`` (English: the source, no catalog). Every language a
    course may name has one (``tests/persian/test_message_catalogs.py``); a missing one is a broken install, and
    gettext's FileNotFoundError says which domain."""
    if language == "en":
        return ENGLISH
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[language])


def _(message: str) -> str:
    """``message`` in the language spoken now."""
    return _speaking.get().gettext(message)


def ngettext(one: str, many: str, count: int) -> str:
    """The form of ``one``/``many`` that ``count`` takes in the language spoken now."""
    return _speaking.get().ngettext(one, many, count)


def N_(message: str) -> str:  # noqa: N802 (gettext's own name for it, which extraction knows)
    """``message`` marked for the catalog, translated later (with :func:`_`) where it is shown."""
    return message


@functools.cache
def every_language(message: str) -> tuple[str, ...]:
    """``message`` in English and in every language with a catalog, once each: for reading back
    a text written at grading time, whatever the course's language was then. Kept, since a
    report reads back every line of every submission's feedback."""
    languages = sorted(path.name for path in LOCALE_DIR.iterdir() if path.is_dir())
    return tuple(dict.fromkeys([message, *(catalog(language).gettext(message) for language in languages)]))


def read_back(message: str, text: str, **fields: str) -> re.Match | None:
    """The match of ``text`` if it is ``message`` as any language wrote it (each placeholder a
    group matching its regular expression in ``fields``), else None: one reader for a text
    written at grading time, in the course's language then."""
    for said in every_language(message):
        parts = PLACEHOLDER.split(said)  # text, name, text, name, ..., text
        pattern = "".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>{fields[part]})"
                          for index, part in enumerate(parts))
        if found := re.fullmatch(pattern, text):
            return found
    return None


PLACEHOLDER = re.compile(r"\{(\w+)(?:![rsa])?(?::[^{}]*)?\}")  # a str.format field: its name


@contextlib.contextmanager
def speaking(language: str) -> Generator[None, None, None]:
    """Speak ``language`` inside the ``with`` block."""
    token = _speaking.set(catalog(language))
    try:
        yield
    finally:
        _speaking.reset(token)


def in_course_language(function: F) -> F:
    """Make ``function``, which takes a ``course`` argument, speak that course's language."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def speaking_course(*args: Any, **kwargs: Any) -> Any:
        course = signature.bind_partial(*args, **kwargs).arguments["course"]
        with speaking(course.language):
            return function(*args, **kwargs)

    return speaking_course  # type: ignore[return-value]
