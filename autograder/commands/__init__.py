"""The commands, one module each: ``run(course, args, console)`` does what the command line asked.

``autograder.cli`` parses the command line and imports only the chosen command's module, so a
command loads only what it uses. What more than one command needs of the course is here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import Course
from ..errors import GraderError
from ..translation import in_language


def refuse_release(course: Course) -> None:
    """Official grading needs the solutions and the hidden properties, which a student release lacks."""
    if course.is_release:
        raise GraderError("this is a student release: it has no solutions and no hidden properties, so it "
                          "cannot grade; use `check`")


def in_chosen_language(course: Course, args: argparse.Namespace) -> Course:
    """The course in the language ``--lang`` chose, else as its file says."""
    return course.model_copy(update={"language": args.lang}) if args.lang else course


def graded_in_chosen_language(course: Course, args: argparse.Namespace) -> Course:
    """The course as grading shows it to students: in the language ``--lang`` chose (else its
    file's), its titles too."""
    return in_language(course, args.lang)


def file_to_write(out: Path, force: bool = True) -> None:
    """Refuse an ``--out`` that names a folder, or lies in something that is not one, before any work;
    and, without ``force``, one that would replace a file already there."""
    if out.is_dir():
        raise GraderError(f"--out {out}: a folder; name the file to write in it")
    _in_folders(out)
    if out.exists() and not force:
        raise GraderError(f"--out {out}: already there; --force replaces it")


def folder_to_write(out: Path) -> None:
    """Refuse an ``--out`` folder that is a file, or lies in one, before any work."""
    if out.exists() and not out.is_dir():
        raise GraderError(f"--out {out}: a file; name a folder")
    _in_folders(out)


def _in_folders(out: Path) -> None:
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise GraderError(f"--out {out}: {parent} is a file, not a folder")
