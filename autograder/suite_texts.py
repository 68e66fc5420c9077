"""The suites' own words in the course's language: each property's description, each locked
case's name and each message a suite's checks fail with (:func:`autograder.suite.say`).

English is the source. A course in another language names, under ``suite_texts``, a YAML file
per language, keyed by exercise module, then ``properties``, ``locked`` and ``messages``, each
text by its English key. Only what is shown changes: a result keeps its English name, so a grade
is the same in every language. A text writes its code in double backticks, which its checks
compare with the English (:func:`code_fragments`); one the file lacks is shown in English, and a
release refuses to ship without it (:func:`kept`). docs/persian.md, "The suites' words"."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Collection, Mapping
from pathlib import Path

import yaml

from . import bidi
from .config import Course
from .errors import GraderError

PROPERTIES, LOCKED, MESSAGES = "properties", "locked", "messages"  # the kinds of text of an exercise
SAY = "say"  # the function a suite words its failures with (autograder.suite.say)
_CODE = re.compile(r"``(.+?)``", flags=re.S)


def description(course: Course, exercise: str, name: str, english: str) -> str:
    """What property ``name`` of ``exercise`` checks, in the course's language (else ``english``)."""
    return _shown(course, texts(course).get(exercise, {}).get(PROPERTIES, {}).get(name), english)


def case_name(course: Course, exercise: str, english: str) -> str:
    """The name of ``exercise``'s locked case ``english`` in the course's language."""
    return _shown(course, texts(course).get(exercise, {}).get(LOCKED, {}).get(english), english)


def messages(course: Course, exercise: str) -> dict[str, str]:
    """The templates ``exercise``'s suite words its failures in, in the course's language, by
    their English (none in English, or without a file)."""
    return dict(texts(course).get(exercise, {}).get(MESSAGES, {}))


def templates(source: str) -> list[str]:
    """The English templates a suite's ``source`` gives :func:`autograder.suite.say`, in order, once each."""
    found = [node.args[0].value for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
             and isinstance(node.args[0].value, str)
             and (getattr(node.func, "id", None) == SAY or getattr(node.func, "attr", None) == SAY)]
    return list(dict.fromkeys(found))


def _shown(course: Course, text: str | None, english: str) -> str:
    """A text on one line, its code isolated left to right in a right-to-left language
    (:func:`autograder.bidi.code`), else ``english``."""
    if not text:
        return english
    return " ".join(_CODE.sub(lambda code: bidi.code(course.language, code.group(1)), text).split())


def code_fragments(text: str) -> list[str]:
    """The code a text quotes, in double backticks, each on one line."""
    return [" ".join(code.split()) for code in _CODE.findall(text)]


def texts(course: Course) -> dict[str, dict[str, dict[str, str]]]:
    """The texts of the course's language by exercise and kind (none in English, or without a file)."""
    relative = course.suite_texts.get(course.language)
    return {} if course.language == "en" or relative is None else _load(course.path(relative))


def kept(course: Course, properties: Mapping[str, Collection[str]],
         cases: Mapping[str, Collection[str]],
         said: Mapping[str, Collection[str]] | None = None) -> dict[str, dict[str, dict[str, str]]]:
    """The texts of only ``properties``, locked ``cases`` and message templates ``said`` (by
    exercise), as a release ships them: never a left-out property's. A :class:`GraderError`
    names each one without a text."""
    found = texts(course)
    chosen = {exercise: {PROPERTIES: {n: found.get(exercise, {}).get(PROPERTIES, {}).get(n, "") for n in names}}
              for exercise, names in properties.items()}
    for kind, wanted in ((LOCKED, cases), (MESSAGES, said or {})):
        for exercise, names in wanted.items():
            if names:
                chosen.setdefault(exercise, {PROPERTIES: {}})[kind] = {
                    n: found.get(exercise, {}).get(kind, {}).get(n, "") for n in names}
    missing = [f"{exercise}.{kind}: {name!r}" for exercise, kinds in chosen.items()
               for kind, named in kinds.items() for name, text in named.items() if not text]
    if missing:
        raise GraderError(f"{course.suite_texts[course.language]}: no {course.language} text for "
                          + "; ".join(missing))
    return chosen


@functools.cache
def _load(path: Path) -> dict[str, dict[str, dict[str, str]]]:
    """A file of texts, checked: exercise -> ``properties``/``locked``/``messages`` -> name -> text."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise GraderError(f"{path}: cannot be read ({' '.join(str(error).split())})") from None
    problems = [] if isinstance(raw, dict) else ["not a mapping of exercise modules"]
    for exercise, kinds in (raw.items() if isinstance(raw, dict) else []):
        if not isinstance(kinds, dict) or not set(kinds) <= {PROPERTIES, LOCKED, MESSAGES}:
            problems.append(f"{exercise}: a mapping of {PROPERTIES}, {LOCKED} and {MESSAGES}")
            continue
        problems += [f"{exercise}.{kind}: a mapping of names to texts" for kind, named in kinds.items()
                     if not isinstance(named, dict)
                     or not all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in named.items())]
    if problems:
        raise GraderError(f"{path}: " + "; ".join(problems))
    return raw
