"""Taking a submission in: the work on its untrusted bytes, done in the limited helper only.

:func:`read_submission` is a task of :mod:`autograder.isolation.helper`, run for
:mod:`autograder.intake.staging`: it reads a folder, a zip, a loose ``.py`` or ``.ipynb``, finds
the package, converts notebooks (:mod:`autograder.intake.notebook`), writes the files under the
staging folder and reads the sure stubs (:mod:`autograder.engine.stubs`), and answers plain
data (notes, line maps, signatures) or why the submission was refused.
:func:`unpack_submission` writes a submission's files as they are, for Gradescope's stand-in.
It imports only the standard library and the engine's light modules (a helper's start pays for
them). What is read and refused: docs/instructors.md, "What a submission may hold".
"""

from __future__ import annotations

import errno
import itertools
import lzma
import os
import stat
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from ..engine.cells import CellMap
from ..engine.stubs import stubs_to_json, sure_stubs
from ..errors import SubmissionError
from ..i18n import _, speaking
from .notebook import NotebookError, NotebookModule, OverBudget, converted

MAX_FILES = 500
MAX_BYTES = 20 << 20
MAX_ENTRIES = 4 * MAX_FILES  # entries of any kind (folders, links) read, outside the skipped folders
MAX_DIRECTORY = 8 << 20      # bytes of a zip's table of contents (skipped folders too), checked before parsing
NOTEBOOK_CHARS = 1 << 21     # characters IPython may read converting a submission's notebooks (a deterministic stop)
STUB_BYTES = 256 << 10       # a module (with its package's __init__.py) read for sure stubs; a larger one gets a worker
SKIPPED_PARTS = {"__pycache__", "__MACOSX", ".git", ".hg", ".svn", ".ipynb_checkpoints", ".venv", "venv",
                 "site-packages", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
                 ".tox", ".idea", ".vscode"}
ENCRYPTED = 0x1              # the zip flag bit of an encrypted member
LOOSE = {".py", ".ipynb"}  # a single file that is a submission by itself

Files = dict[PurePosixPath, bytes]


def read_submission(request: dict) -> dict:
    """The task: stage the submission at ``request["path"]`` into ``request["root"]`` as
    ``<package>/...`` (``package``, the exercises' ``modules``, notes in ``language``). Answers
    ``{"notes", "notebooks", "stubs"}``, or ``{"refused": why}``."""
    path, root, package = Path(request["path"]), Path(request["root"]), request["package"]
    with speaking(request["language"]):
        try:
            files, notes = read(path)
            try:
                chosen = choose_package(package, request["modules"], files, path)
            except SubmissionError as error:
                raise SubmissionError("; ".join([str(error), *notes])) from None
            chosen = _utf8_paths(chosen, notes)
            chosen, notebooks = _from_notebooks(request["modules"], chosen, notes)
            for relative, content in chosen.items():
                write(path, root, PurePosixPath(package) / relative, content)
        except SubmissionError as error:
            return {"refused": str(error)}
    stubs = {module: stubs_to_json(_stubs(chosen, module)) for module in request["modules"]}
    return {"notes": notes, "notebooks": notebooks, "stubs": stubs}


def unpack_submission(request: dict) -> dict:
    """The task: write the files of the submission at ``request["path"]`` under ``request["out"]``
    as they are (a zip unpacked), read as :func:`read_submission` reads them. Answers
    ``{"notes"}``, or ``{"refused": why}``."""
    path = Path(request["path"])
    try:
        files, notes = read(path)
        for relative, content in files.items():
            write(path, Path(request["out"]), relative, content)
    except SubmissionError as error:
        return {"refused": str(error)}
    return {"notes": notes}


def _stubs(files: Files, module: str) -> dict:
    """The sure stubs of ``module``, unless it and its package's ``__init__.py`` are larger than
    :data:`STUB_BYTES`: they only spare workers, so a module without any grades the same."""
    source, init = (files.get(PurePosixPath(name), b"") for name in (f"{module}.py", "__init__.py"))
    if len(source) + len(init) > STUB_BYTES:
        return {}
    return sure_stubs(*(text.decode("utf-8", errors="replace") for text in (source, init)))


def read(path: Path) -> tuple[Files, list[str]]:
    """The submission's files by relative path, and notes on what was skipped."""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise SubmissionError(f"{path}: no such folder, .zip, .py or .ipynb file") from None
    except OSError as error:
        raise SubmissionError(f"{path}: cannot read ({error.strerror})") from None
    if stat.S_ISDIR(status.st_mode):
        files, notes = _read_folder(path)
    elif stat.S_ISREG(status.st_mode) and path.suffix.lower() == ".zip":
        files, notes = _read_zip(path)
    elif stat.S_ISREG(status.st_mode) and path.suffix.lower() in LOOSE:
        _check_caps(path, 1, status.st_size)
        return {PurePosixPath(path.name): path.read_bytes()}, []
    else:
        raise SubmissionError(f"{path}: not a folder, a .zip, a .py or an .ipynb file")
    _check_tree(path, files)
    return files, notes


def _from_notebooks(modules: list[str], files: Files, notes: list[str]) -> tuple[Files, dict[str, dict]]:
    """``files`` with each exercise notebook ``<module>.ipynb`` made into ``<module>.py``, and
    the line maps by module. A ``.py`` beside its notebook wins; an unreadable notebook is noted.
    IPython may read :data:`NOTEBOOK_CHARS` characters for all of them together."""
    out = dict(files)
    maps: dict[str, dict] = {}
    budget = NOTEBOOK_CHARS
    for exercise in modules:
        notebook, module = PurePosixPath(f"{exercise}.ipynb"), PurePosixPath(f"{exercise}.py")
        if notebook not in files:
            continue
        del out[notebook]
        if module in files:
            notes.append(_("{module} and {notebook} were both submitted: {module} was graded").format(
                module=module, notebook=notebook))
            continue
        try:
            made = converted(files[notebook], budget)
        except (NotebookError, OverBudget) as error:
            why = str(error) if isinstance(error, NotebookError) else (
                f"converting its notebooks to Python would read over {NOTEBOOK_CHARS:,} characters")
            notes.append(_("{notebook} could not be read, so {module} was not graded: {error}").format(
                notebook=notebook, module=exercise, error=why))
            continue
        budget -= made.read
        out[module] = made.source.encode("utf-8")
        maps[exercise] = CellMap(made.spans).to_json()
        notes.extend(_copied(str(notebook), made))
    return out, maps


def _copied(notebook: str, made: NotebookModule) -> list[str]:
    """One line per copied answer cell of the notebook, for the student's feedback."""
    return [_("{notebook}: cells {cells} are all the answer cell {grade_id} (one was copied); all were graded, "
              "in order, so the last one's definitions count").format(
                  notebook=notebook, cells=", ".join(map(str, cells)), grade_id=repr(grade_id))
            for grade_id, cells in made.duplicates]


def _read_folder(path: Path) -> tuple[Files, list[str]]:
    """The folder's regular files; links and special files are skipped with a note."""
    files: Files = {}
    notes: list[str] = []
    total = 0
    for relative, status in _walk(path):
        if not _utf8(relative.name):
            notes.append(_not_utf8(relative))
            continue
        member = _safe_member(path, str(relative))
        if member is None or relative.name.endswith(".pyc"):
            continue
        if not stat.S_ISREG(status.st_mode):
            notes.append(_("skipped {file}: links and special files are not graded").format(file=quote(member)))
            continue
        total += status.st_size
        _check_caps(path, len(files) + 1, total)
        try:
            files[member] = (path / relative).read_bytes()
        except OSError as error:
            raise SubmissionError(f"{path.name}: cannot read {quote(relative)} ({error.strerror})") from None
    return files, notes


def _walk(path: Path) -> Iterator[tuple[PurePosixPath, os.stat_result]]:
    """Everything below ``path`` but folders, in name order, without entering links or skipped
    folders; stops listing as soon as more than MAX_ENTRIES entries of any kind are seen."""
    count = 0
    pending = [PurePosixPath()]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(path / folder) as listing:
                entries = sorted(itertools.islice(listing, MAX_ENTRIES + 1 - count), key=lambda e: e.name)
            count += len(entries)
            _check_entries(path, count)
            for entry in entries:
                relative = folder / entry.name
                status = entry.stat(follow_symlinks=False)
                if not stat.S_ISDIR(status.st_mode):
                    yield relative, status
                elif entry.name not in SKIPPED_PARTS:
                    pending.append(relative)
        except OSError as error:
            raise SubmissionError(f"{path.name}: cannot read {quote(folder)} ({error.strerror})") from None


def _utf8(name: str) -> bool:
    """Whether a name read from a folder is valid UTF-8 (Python gives undecodable bytes as surrogates)."""
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


def _not_utf8(relative: PurePosixPath) -> str:
    return _("skipped {file}: its name is not valid UTF-8, so no code can import or open it").format(
        file=quote(relative))


def _utf8_paths(files: Files, notes: list[str]) -> Files:
    """``files`` without those under a folder whose name is not valid UTF-8, each noted. Such a
    folder outside the package (the one a zip was unpacked into, say) costs nothing."""
    kept = {relative: content for relative, content in files.items() if _utf8(str(relative))}
    notes.extend(_not_utf8(relative) for relative in files if relative not in kept)
    return kept


def _read_zip(path: Path) -> tuple[Files, list[str]]:
    """The zip's files, read member by member; links are skipped with a note."""
    files: Files = {}
    notes: list[str] = []
    total = 0
    with _open_zip(path) as archive:
        _check_entries(path, sum(not _skipped(info.filename) for info in archive.infolist()))
        for info in archive.infolist():
            relative = _safe_member(path, info.filename)
            if info.is_dir() or relative is None or info.filename.endswith(".pyc"):
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                notes.append(_("skipped {file}: links are not graded").format(file=quote(relative)))
                continue
            total += info.file_size
            _check_caps(path, len(files) + 1, total)
            files[relative] = _read_member(path, archive, info, relative)
    return files, notes


def _open_zip(path: Path) -> zipfile.ZipFile:
    """The open zip; one whose table of contents is too large is refused before it is parsed."""
    try:
        with path.open("rb") as file:
            size = _directory_size(file)
        if size is not None and size > MAX_DIRECTORY:
            raise SubmissionError(f"{path.name}: the zip's table of contents is over {MAX_DIRECTORY >> 20} MB "
                                  f"(at most {MAX_ENTRIES} entries are read)")
        archive = zipfile.ZipFile(path)
    except OSError as error:
        raise SubmissionError(f"{path.name}: cannot read ({error.strerror})") from None
    except (zipfile.BadZipFile, ValueError, NotImplementedError) as error:
        raise SubmissionError(f"{path.name}: not a readable zip file ({error})") from None
    return archive


def _directory_size(file: BinaryIO) -> int | None:
    """:func:`~autograder.isolation.inside.cpython.zip_directory_size`, as the helper has it: its
    own module, first on the helper's path, without the isolation package, whose import (the
    course's configuration with it) would cost every helper's start more than its work."""
    import cpython  # type: ignore[import-not-found]  # isolation/inside/, first on the helper's sys.path

    return cpython.zip_directory_size(file)


def _read_member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, relative: PurePosixPath) -> bytes:
    """The member's content, at most MAX_BYTES and one; an unreadable member is refused."""
    member = f"{path.name}: member {quote(relative)}"
    if info.flag_bits & ENCRYPTED:
        raise SubmissionError(f"{member} is encrypted")
    try:
        with archive.open(info) as opened:
            content = opened.read(MAX_BYTES + 1)
    except NotImplementedError as error:
        raise SubmissionError(f"{member} uses a compression method this grader cannot read ({error})") from None
    except EOFError:
        raise SubmissionError(f"{member} is cut short") from None
    except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, OSError, UnicodeDecodeError) as error:
        raise SubmissionError(f"{member} is corrupt ({error})") from None
    if len(content) > info.file_size:
        raise SubmissionError(f"{member} is larger than its zip entry says")
    return content


def _safe_member(where: Path, name: str) -> PurePosixPath | None:
    """A file's path in the submission, split at ``/`` and ``\\`` alike (a zip member's name, or
    a path in a folder); an absolute or escaping path is an error; skipped parts and the top
    folder itself give None."""
    member = PurePosixPath(name.replace("\\", "/"))
    if member.is_absolute() or ".." in member.parts or (member.parts and ":" in member.parts[0]):
        raise SubmissionError(f"{where.name}: refuses member {quote(name)}, which points outside the submission")
    if not member.parts or any(part in SKIPPED_PARTS for part in member.parts):
        return None
    return member


def _skipped(name: str) -> bool:
    return any(part in SKIPPED_PARTS for part in PurePosixPath(name.replace("\\", "/")).parts)


def _check_tree(where: Path, files: Files) -> None:
    """Refuse a path that is a file and also holds files (a zip, or names with backslashes)."""
    ordered = sorted(files, key=lambda p: p.parts)  # a folder's files follow it directly
    for path, following in itertools.pairwise(ordered):
        if following.parts[:len(path.parts)] == path.parts:
            raise SubmissionError(f"{where.name}: a file and a folder share the path {quote(path)}")


def _check_entries(where: Path, count: int) -> None:
    if count > MAX_ENTRIES:
        raise SubmissionError(f"{where.name}: more than {MAX_ENTRIES} entries (files, folders and skipped ones)")


def _check_caps(where: Path, count: int, total: int) -> None:
    if count > MAX_FILES:
        raise SubmissionError(f"{where.name}: more than {MAX_FILES} files")
    if total > MAX_BYTES:
        raise SubmissionError(f"{where.name}: more than {MAX_BYTES >> 20} MB of files")


def choose_package(package: str, modules: list[str], files: Files, where: Path) -> Files:
    """The files of the package, relative to the package folder, whichever layout was used."""
    names = {f"{module}{suffix}" for module in modules for suffix in LOOSE}
    while True:
        if PurePosixPath(package) in files:
            raise SubmissionError(f"{where.name}: {package!r} is a file, not a folder")
        inside = {p.relative_to(package): c for p, c in files.items() if p.parts[:1] == (package,)}
        if inside:
            return inside
        if names & {str(p) for p in files}:
            return files
        tops = {p.parts[0] for p in files if len(p.parts) > 1}
        if len(tops) != 1 or any(len(p.parts) == 1 for p in files):
            raise SubmissionError(
                f"{where.name}: found no {package}/ folder and none of "
                f"{', '.join(sorted(f'{module}.py' for module in modules))} (or their .ipynb notebooks) "
                "at the top of the submission")
        top = tops.pop()
        files = {p.relative_to(top): c for p, c in files.items()}


def write(where: Path, root: Path, relative: PurePosixPath, content: bytes) -> None:
    """Write ``root / relative`` readable by its owner only, naming what the file system refused."""
    try:
        for folder in reversed(relative.parents[:-1]):
            (root / folder).mkdir(mode=0o700, exist_ok=True)
        with open(os.open(root / relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
            file.write(content)
    except OSError as error:
        reason = "file name too long" if error.errno == errno.ENAMETOOLONG else error.strerror
        raise SubmissionError(f"{where.name}: cannot stage {quote(relative)}: {reason}") from None


def quote(path: PurePosixPath | str) -> str:
    """A path for a one-line message: quoted, escaped, and shortened if long; a name that is
    not valid UTF-8 is shown as its bytes (``b'caf\\xe9.txt'``)."""
    text = str(path)
    text = text if len(text) <= 80 else text[:77] + "..."
    try:
        text.encode()
    except UnicodeEncodeError:
        return repr(os.fsencode(text))
    return repr(text)
