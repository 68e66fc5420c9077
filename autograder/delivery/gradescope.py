"""A Gradescope autograder: ``python -m autograder gradescope --out autograder.zip``.

The zip holds the course as the grader needs it (engine, package, solutions, suites, support
modules, data, ``delivery.include``) and Gradescope's two scripts, ``setup.sh`` (once, as root:
the venv, bubblewrap, the solutions root's alone, their examples recorded) and
``run_autograder`` (per submission: ``python -m autograder grade``). ``--exercise`` makes a
bundle for one exercise. :func:`replay` (``gradescope --run SUBMISSION``) lays out
``/autograder`` (``AUTOGRADER_ROOT``) in a folder, runs ``run_autograder`` with this Python
(``AUTOGRADER_PYTHON``) and checks ``results.json`` against ``gradescope_results.schema.json``.
What the bundle does and why: docs/gradescope.md, "What the bundle does on Gradescope".
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..config import Course
from ..errors import GraderError
from ..i18n import N_, _, in_course_language
from ..intake.staging import unpack
from .shipping import grading_copy, lock_files, new_folder, written_in_place

SCHEMA = Path(__file__).with_name("gradescope_results.schema.json")


def build_gradescope(course: Course, out: Path, exercises: list[str] | None = None) -> None:
    """Write the Gradescope autograder zip ``out``, which grades ``exercises`` (default all): a
    course that hands in one notebook a week makes one Gradescope assignment, and one bundle, per
    exercise, whose score is out of that exercise's points."""
    locks = lock_files(course)
    if not locks:
        raise GraderError("delivery.include names no requirements*.lock file for setup.sh to install")
    private = sorted({str(course.solutions), *(str(Path(e.suite).parent) for e in course.exercises)})
    chosen = "".join(f" --exercise {module}" for module in exercises or ())
    with tempfile.TemporaryDirectory(prefix="autograder-gradescope-") as scratch:
        root = Path(scratch)
        grading_copy(course, root, "the Gradescope autograder's copy")
        (root / "setup.sh").write_text(SETUP.format(locks=" ".join(f"-r \"$SOURCE/{p}\"" for p in locks),
                                                    private=_quoted(private)), encoding="utf-8")
        (root / "run_autograder").write_text(RUN.format(private=_quoted(private), solutions=course.solutions,
                                                        exercises=chosen, why=_why(course)), encoding="utf-8")
        with written_in_place(out) as partial, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                _add(archive, path, path.relative_to(root).as_posix())


def replay(course: Course, submission: Path, bundle: Path | None, out: Path | None = None,
           exercises: list[str] | None = None) -> Replay:
    """Grade ``submission`` as Gradescope would with ``bundle`` (default: one built now, of
    ``exercises``) in a stand-in for ``/autograder``: ``out`` (a new or empty folder, kept), or a
    temporary folder. Return the checked ``results.json``, the seconds ``run_autograder`` took and
    where ``results.json`` was kept."""
    import jsonschema

    if not submission.exists():
        raise GraderError(f"{submission}: no such file or folder")
    if out is not None:
        new_folder(out)
    with tempfile.TemporaryDirectory(prefix="autograder-gradescope-run-") as scratch:
        root = (out or Path(scratch)).resolve()
        if bundle is None:
            bundle = Path(scratch) / "autograder.zip"
            build_gradescope(course, bundle, exercises)
        _unpack(bundle, root / "source")
        shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
        uploads = root / "submission"
        if submission.is_dir():
            shutil.copytree(submission, uploads, symlinks=True)
        elif submission.suffix.lower() == ".zip":  # unzipped as grade reads it, by the limited helper
            unpack(submission, uploads)
        else:
            uploads.mkdir()
            shutil.copy(submission, uploads / submission.name)
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
        env.pop("PYTHONPATH", None)
        started = time.monotonic()
        # what it prints names its own scratch folder, gone when it returns: shown only when it fails
        run = subprocess.run(["bash", str(root / "run_autograder")], cwd="/", env=env, check=False,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        seconds = time.monotonic() - started
        results_json = root / "results" / "results.json"
        try:
            results = json.loads(results_json.read_text(encoding="utf-8"))
            jsonschema.validate(results, json.loads(SCHEMA.read_text(encoding="utf-8")))
        except (OSError, ValueError, jsonschema.ValidationError) as error:
            raise GraderError(f"run_autograder wrote no valid results.json: {error}\n"
                              f"run_autograder printed:\n{run.stdout[-4000:]}") from None
    return Replay(results, seconds, results_json if out is not None else None)


@dataclass(frozen=True)
class Replay:
    """What :func:`replay` found: Gradescope's ``results.json`` (checked against its format),
    the seconds ``run_autograder`` took, and where ``results.json`` was kept (None when the
    stand-in ``/autograder`` was temporary)."""

    results: dict
    seconds: float
    kept: Path | None


def _unpack(archive: Path, out: Path) -> None:
    """Unpack the bundle (the instructor's, never a student's)."""
    try:
        with zipfile.ZipFile(archive) as opened:
            opened.extractall(out)  # drops absolute paths and ".." (the instructor's own replay)
    except (OSError, zipfile.BadZipFile) as error:
        raise GraderError(f"{archive}: not a readable zip ({error})") from None


def _add(archive: zipfile.ZipFile, path: Path, name: str) -> None:
    """Store a file with plain permissions (the two scripts executable)."""
    info = zipfile.ZipInfo.from_file(path, name)
    executable = name in ("setup.sh", "run_autograder")
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, path.read_bytes())


@in_course_language
def _why(course: Course) -> str:
    """The shell words of what Gradescope shows when grading itself failed, in the course's
    language, ``$status`` in it: one JSON string's contents, quoted for the shell."""
    before, after = _(GRADING_FAILED).format(status="\0").split("\0")
    return "".join([shlex.quote(json.dumps(before)[1:-1]), '"$status"', shlex.quote(json.dumps(after)[1:-1])])


GRADING_FAILED = N_("The autograder could not grade this submission (exit {status}). This is not your mistake: tell "
                    "your instructor.")


def _quoted(paths: list[str]) -> str:
    """Course paths as quoted shell words under ``$SOURCE``."""
    return " ".join(f"\"$SOURCE/{p}\"" for p in paths)


SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$ROOT/source"

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv bubblewrap util-linux >/dev/null
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else
                "the grader needs Python 3.11+: choose an Ubuntu 24.04 base image")'

python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --quiet --disable-pip-version-check {locks}

# The solutions and the suites (hidden properties) are for root, the grader, alone.
chmod -R go-rwx {private}

# Grade the solutions once, so that every submission's grading replays the examples the
# properties draw rather than generating them again (docs/results.md: a first grading). Where the
# image's builder cannot run the sandbox, this is skipped: grades are the same without it.
bash "$SOURCE/run_autograder" --record \\
  || echo "setup.sh: the examples were not recorded (see above); grading works without them"
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission, as root: it grades $ROOT/submission into
# $ROOT/results/results.json. Student code runs in the engine's sandbox, as an unprivileged user.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$ROOT/source"
PYTHON="${{AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}}"

chmod -R go-rwx {private}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$SOURCE"
if [ "${{1:-}}" = --record ]; then  # setup.sh: record the examples in root's cache (autograder/engine/replay.py)
  "$PYTHON" -m autograder --course "$SOURCE/course.yaml" grade "$SOURCE/{solutions}" --out "$work/graded" \\
    --jobs 1{exercises}
  exit
fi
mkdir -p "$ROOT/results"
status=0
"$PYTHON" -m autograder --course "$SOURCE/course.yaml" grade "$ROOT/submission" --out "$work/graded" \\
  --jobs 1{exercises} || status=$?
if [ -f "$work/graded/submission/results.json" ]; then
  cp "$work/graded/submission/results.json" "$ROOT/results/results.json"
else  # never leave Gradescope without results: say that grading itself failed
  why={why}
  printf '{{"score": 0, "output": "%s"}}\\n' "$why" > "$ROOT/results/results.json"
fi
"""
