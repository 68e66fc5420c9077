"""What the delivery channels share: copying course files and the engine into what they build,
the course file rewritten for a channel, and the course text they write from templates.

A course text is a file with ``${name}`` placeholders (:class:`string.Template`): the one
``course.yaml`` names under ``delivery.templates`` (``delivery.templates.fa`` for a course in
Persian), else the engine's default in ``templates/`` beside this module (``templates/fa/``
in Persian). :mod:`autograder.config` checks a course's own templates when it loads the
course. What a channel ships is in the course's ``language`` (:mod:`.translation`), which the
course file it writes records.
"""

from __future__ import annotations

import re
import secrets
import shutil
import stat
import string
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from ..config import Course
from ..errors import GraderError
from ..translation import localize, titled

ENGINE_DIR = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_TEMPLATES = {"release_readme": "release_readme.md", "nbgrader_howto": "nbgrader_howto.md",
                     "nbgrader_grade_cell": "nbgrader_grade_cell.txt"}
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")


def ship(course: Course, relative_paths: list[str], out: Path) -> None:
    """Copy course files and folders (paths relative to the course) to the same places in ``out``."""
    for relative in dict.fromkeys(relative_paths):
        source = course.path(relative)
        target = out / relative
        if source.is_dir():
            shutil.copytree(source, target, ignore=SKIPPED, dirs_exist_ok=True)
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        else:
            raise GraderError(f"course.yaml names {relative!r}, which does not exist")


def ship_engine(out: Path) -> None:
    """Copy the engine, the ``autograder`` package with this subpackage, to ``out/autograder``."""
    shutil.copytree(ENGINE_DIR, out / ENGINE_DIR.name, ignore=SKIPPED)


def grading_copy(course: Course, out: Path, purpose: str) -> None:
    """Write into ``out`` all that official grading reads: the course file (without samples and
    delivery), the engine, the package with its provided files, the solutions, every suite and
    its texts in other languages, the support modules, the data and read-only paths and ``delivery.include``."""
    if course.solutions is None:  # a student release
        raise GraderError("grading needs the solutions, which a student release lacks")
    readable = [p for p in [*course.data.values(), *course.sandbox.readonly_paths] if course.path(p).exists()]
    ship(course, [course.package, *([course.stubs] if course.stubs else []), *course.provided, course.solutions,
                  *(e.suite for e in course.exercises),
                  *course.suite_texts.values(), *course.sandbox.support_modules, *readable,
                  *course.delivery.include], out)
    ship_engine(out)
    localize(course, out)
    header = f"{course.title}: {purpose}, written by `python -m autograder`."
    (out / "course.yaml").write_text(course_yaml(course, header, ("samples", "delivery")), encoding="utf-8")


def lock_files(course: Course) -> list[str]:
    """The shipped files that pin the Python dependencies (``requirements*.lock`` or ``.txt``)."""
    return [p for p in course.delivery.include if re.fullmatch(r"requirements.*\.(lock|txt)", Path(p).name)]


def course_yaml(course: Course, header: str, drop: tuple[str, ...], **extra) -> str:
    """The course file with the keys ``drop`` left out and ``extra`` added, under a comment; its
    ``language`` is the course's, and so are the titles."""
    raw = yaml.safe_load(course.file.read_text(encoding="utf-8"))
    for key in drop:
        raw.pop(key, None)
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comment + yaml.safe_dump(titled(course, raw) | {"language": course.language} | extra, sort_keys=False,
                                    allow_unicode=True)


def course_text(course: Course, key: str, **fields: object) -> str:
    """The course text ``key`` of ``delivery.templates`` in the course's language (or the engine's
    default) filled in with ``fields``."""
    chosen = getattr(course.delivery.templates.of(course.language), key)
    return fill(course.path(chosen) if chosen else template(course, DEFAULT_TEMPLATES[key]), **fields)


def template(course: Course, name: str) -> Path:
    """The engine's template ``name`` in the course's language."""
    return TEMPLATES / name if course.language == "en" else TEMPLATES / course.language / name


def fill(path: Path, **fields: object) -> str:
    """The template file ``path`` filled in with ``fields``."""
    return string.Template(path.read_text(encoding="utf-8")).substitute(fields)


def new_folder(out: Path) -> None:
    """Create ``out``, or accept it empty; anything else is a :class:`GraderError`."""
    _free(out)
    out.mkdir(parents=True, exist_ok=True)


def _free(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise GraderError(f"{out} exists and is not an empty folder; choose a new one")


@contextmanager
def built_in_place(out: Path) -> Iterator[Path]:
    """A new folder beside ``out`` (new, or empty) to build in, which becomes ``out`` once the build
    is done: a build that fails leaves ``out`` as it was, so it never blocks the next one. An empty
    ``out`` made beforehand keeps its permissions (one made private stays private)."""
    _free(out)
    with _beside(out) as partial:
        partial.mkdir()
        yield partial
        if out.exists():
            partial.chmod(stat.S_IMODE(out.stat().st_mode))
            out.rmdir()
        partial.rename(out)


@contextmanager
def written_in_place(out: Path) -> Iterator[Path]:
    """A path beside the file ``out`` to write to, which replaces ``out`` once the writing is done."""
    with _beside(out) as partial:
        yield partial
        partial.replace(out)


@contextmanager
def _beside(out: Path) -> Iterator[Path]:
    """A new name in ``out``'s folder (made if need be), whatever is there at the end removed: the
    same file system, so the build is moved into place, never copied."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.parent / f".{out.name}.partial-{secrets.token_hex(4)}"
    try:
        yield partial
    finally:
        if partial.is_dir():
            shutil.rmtree(partial, ignore_errors=True)
        else:
            partial.unlink(missing_ok=True)
