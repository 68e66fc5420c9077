"""A new exercise's files, as ``autograder new-exercise NAME`` writes them: the course author's first step.

It writes the stub, the reference and the suite for the exercise module ``NAME`` (a placeholder
function, ``solve``, the sum of a list, with a public and a hidden property), adds it to the
course file (``exercises:``, ``total_points``; comments and layout kept), and placeholders for
its texts in each of the course's other languages. Nothing is overwritten: a module the course
has, or a file in the way, stops it before anything is written. What each file holds and what
to do next: docs/authors.md, "Adding an exercise".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..config import IDENTIFIER, LANGUAGES, Course, load_course
from ..errors import GraderError
from ..translation import docstrings

TO_TRANSLATE = "# to translate: the English text until then"  # above every placeholder of another language


@dataclass(frozen=True)
class NewExercise:
    """What the author asked for: the module, its title, its points and whether it is a bonus."""

    module: str
    title: str
    points: int
    bonus: bool = False

    @property
    def split(self) -> tuple[int, int]:
        """The points of the public property and of the hidden one (none below two points)."""
        return self.points - self.points // 2, self.points // 2


def scaffold(course: Course, new: NewExercise) -> list[Path]:
    """Write ``new``'s files into ``course`` and add it to the course file; return what was
    written or changed. A :class:`GraderError` says what stands in the way, before anything is
    written."""
    if course.is_release:
        raise GraderError("this course is a student release: new exercises are added to the course it came from")
    if not re.fullmatch(IDENTIFIER, new.module):
        raise GraderError(f"{new.module!r} is not a module name (letters, digits and _, not first a digit)")
    if any(e.module == new.module for e in course.exercises):
        raise GraderError(f"{course.file.name} has an exercise {new.module} already")
    if new.points < 1:
        raise GraderError(f"--points {new.points}: an exercise is worth at least 1 point")
    files = _files(course, new)
    texts = _texts(course, new)
    in_the_way = [path for path in files if path.exists()]
    if in_the_way:
        raise GraderError(f"{in_the_way[0]} exists: choose another module name, or move it away first")
    course_text = _with_exercise(course, new)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    course.file.write_text(course_text, encoding="utf-8")
    load_course(course.file)
    return [*files, *texts, course.file]


def _files(course: Course, new: NewExercise) -> dict[Path, str]:
    """The new files: stub, reference, suite and, per language with texts, its docstrings."""
    suites = Path(course.exercises[0].suite).parent.as_posix()
    found = {course.path(f"{course.package}/{new.module}.py"): STUB.format(title=new.title),
             course.path(f"{course.solutions}/{new.module}.py"): REFERENCE.format(module=new.module),
             course.path(f"{suites}/{new.module}.py"): _suite(new)}
    for language in _languages(course):
        folder = course.path(course.delivery.translations or "") / language
        found[folder / f"{new.module}.yaml"] = _docstring_texts(course, new)
    return found


def _languages(course: Course) -> list[str]:
    """The languages the course has docstrings and titles in (a folder of ``delivery.translations``)."""
    if course.delivery.translations is None:
        return []
    return [language for language in LANGUAGES
            if language != "en" and (course.path(course.delivery.translations) / language).is_dir()]


def _suite(new: NewExercise) -> str:
    public, hidden = new.split
    return (SUITE.format(module=new.module, public=public, rule=PUBLIC_RULE.replace("``", ""),
                         imports="expect_equal, expect_error" if hidden else "expect_equal")
            + (HIDDEN.format(hidden=hidden, rule=HIDDEN_RULE.replace("``", "")) if hidden else ""))


def _docstring_texts(course: Course, new: NewExercise) -> str:
    """A language's file of the stub's docstrings, each the English one under a comment."""
    english = docstrings(STUB.format(title=new.title))
    header = (f"# The docstrings of {course.package}/{new.module}.py in this language, written by "
              "`autograder new-exercise`\n# (autograder/translation.py says how this file is read).\n")
    return header + "".join(f"{TO_TRANSLATE}\n{_block({key: text})}" for key, text in english.items())


def _texts(course: Course, new: NewExercise) -> dict[Path, str]:
    """The files of texts that grow: each language's titles and the suites' descriptions."""
    grown = {}
    for language in _languages(course):
        path = course.path(course.delivery.translations or "") / language / "titles.yaml"
        if path.is_file():
            entry = f"  {TO_TRANSLATE}\n  {new.module}: {json.dumps(new.title, ensure_ascii=False)}\n"
            grown[path] = _appended(path.read_text(encoding="utf-8"), "exercises", entry, path)
    public, hidden = new.split
    descriptions = {f"test_solve_{what}": text for what, text, points in
                    (("adds_every_number", PUBLIC_RULE, public), ("matches_reference", HIDDEN_RULE, hidden)) if points}
    for relative in course.suite_texts.values():
        path = course.path(relative)
        text = path.read_text(encoding="utf-8")
        grown[path] = text.rstrip("\n") + f"\n{TO_TRANSLATE}\n" + _block({new.module: {"properties": descriptions}})
    return grown


def _with_exercise(course: Course, new: NewExercise) -> str:
    """The course file's text with ``new`` at the end of ``exercises:`` and, unless it is a
    bonus, ``total_points`` raised by its points; checked to read as intended."""
    text = course.file.read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    indent = re.search(r"^exercises:\s*(?:#.*)?\n(?:\s*(?:#.*)?\n)*(\s*)- ", text, re.M)
    item = indent.group(1) if indent else "  "
    suite = f"{Path(course.exercises[0].suite).parent.as_posix()}/{new.module}.py"
    entry = {"module": new.module, "title": new.title, "points": new.points, "suite": suite,
             **({"bonus": True} if new.bonus else {})}
    lines = [f"module: {new.module}", f"title: {json.dumps(new.title, ensure_ascii=False)}",
             f"points: {new.points}", f"suite: {suite}", *(["bonus: true"] if new.bonus else [])]
    block = f"{item}- {lines[0]}\n" + "".join(f"{item}  {line}\n" for line in lines[1:])
    grown = _appended(text, "exercises", block, course.file)
    if "total_points" in raw and not new.bonus:
        grown = re.sub(r"^(total_points:\s*)\d+", lambda m: f"{m.group(1)}{raw['total_points'] + new.points}",
                       grown, count=1, flags=re.M)
        raw["total_points"] += new.points
    raw["exercises"].append(entry)
    if yaml.safe_load(grown) != raw:
        raise GraderError(f"{course.file.name}: its layout is not one this command can add to; add the exercise "
                          f"by hand:\n{block}")
    return grown


def _appended(text: str, key: str, lines: str, path: Path) -> str:
    """``text`` (YAML) with ``lines`` after the last line of the top-level ``key``'s block (its
    entries, not the comments or blank lines before the next key)."""
    rows = text.splitlines(keepends=True)
    start = next((index for index, row in enumerate(rows) if re.match(rf"{key}:", row)), None)
    if start is None:
        raise GraderError(f"{path}: no top-level {key}: to add the new exercise to")
    end = start + 1
    for index in range(start + 1, len(rows)):
        row = rows[index]
        if not row.strip() or row.startswith("#"):
            continue
        if row[0] not in " \t-":
            break  # the next top-level key
        end = index + 1
    rows[end - 1] = rows[end - 1] if rows[end - 1].endswith("\n") else rows[end - 1] + "\n"
    return "".join(rows[:end]) + lines + "".join(rows[end:])


def _block(mapping: dict) -> str:
    """YAML of ``mapping`` with its texts of several lines as literal blocks, as the course's files write them."""

    class Literal(yaml.SafeDumper):
        pass

    Literal.add_representer(str, lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))
    return yaml.dump(mapping, Dumper=Literal, sort_keys=False, allow_unicode=True, width=100)


STUB = '''"""{title}.

Task
----
Write ``solve(numbers)``: the sum of the list's numbers. (A placeholder: state here what the
exercise asks, its exact rules, a worked example and a hint. The feedback and the student
release point students to these docstrings, which must be all they need for full marks.)

Rules
-----
- ``numbers`` must be a ``list``; anything else is a ``TypeError``.
- An empty list sums to 0.

Example::

    >>> solve([1, 2, 3])
    6
"""


def solve(numbers: list[int]) -> int:
    """The sum of ``numbers``; a ``TypeError`` unless ``numbers`` is a list."""
    raise NotImplementedError("solve is not implemented yet")
'''

REFERENCE = '''"""The reference solution of ``{module}``: hidden from students, graded against by the suite."""


def solve(numbers: list[int]) -> int:
    """The sum of ``numbers``; a ``TypeError`` unless ``numbers`` is a list."""
    if not isinstance(numbers, list):
        raise TypeError(f"numbers must be a list, got {{type(numbers).__name__}}")
    return sum(numbers)
'''

PUBLIC_RULE = "``solve`` returns the sum of the list, 0 for an empty one."
HIDDEN_RULE = "``solve`` agrees with the reference, and raises ``TypeError`` for anything but a list."

SUITE = '''"""The properties of ``{module}``: each test's name and docstring state the rule it checks.

The fixtures: ``student`` (the submission's module, in the sandbox), ``reference`` (the
solution module; a property that takes it is left out of the student release), ``sandbox``
and ``course``. Every property carries ``@points(n)`` (they add up to the exercise's points in
the course file) and, for feedback that shows only its name and a one-line reason, ``@hidden``.
"""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.suite import {imports}

points = pytest.mark.points
hidden = pytest.mark.hidden

numbers = st.lists(st.integers(-1000, 1000), max_size=20)


@points({public})
@given(values=numbers)
@example(values=[])
def test_solve_adds_every_number(student, values):
    """{rule}"""
    expect_equal(student.solve(values), sum(values), f"solve({{values!r}})")
'''

HIDDEN = '''

@hidden
@points({hidden})
@given(values=numbers, other=st.one_of(st.none(), st.text(max_size=5), st.tuples(st.integers())))
def test_solve_matches_reference(student, reference, values, other):
    """{rule}"""
    expect_equal(student.solve(values), reference.solve(values), f"solve({{values!r}})")
    expect_error(lambda: student.solve(other), ("TypeError",), f"solve({{other!r}})")
'''
