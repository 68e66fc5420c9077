"""A Gradescope autograder: ``python -m autograder gradescope --out autograder.zip``.

The zip holds the course as the grader needs it (``course.yaml``, the engine, the package
with its provided files, the solutions, every suite, the support modules, the data files and
read-only paths ``course.yaml`` names, and ``delivery.include``), plus Gradescope's two
scripts:

- ``setup.sh`` (run once, as root, when Gradescope builds the image): installs Python's venv
  support and bubblewrap with apt, makes ``/autograder/venv`` from the course's pinned lock
  files, and makes the solutions and suites readable by root only;
- ``run_autograder`` (run per submission, as root): grades ``/autograder/submission`` with
  ``python -m autograder grade`` into ``/autograder/results/results.json``. The engine runs
  student code in its sandbox as an unprivileged user of its own, which cannot read the
  solutions even where bubblewrap is missing.

``AUTOGRADER_ROOT`` moves ``/autograder`` and ``AUTOGRADER_PYTHON`` picks the Python (both
for trying the bundle outside Gradescope).
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from ..config import Course
from ..errors import GraderError
from .shipping import course_yaml, lock_files, ship, ship_engine


def build_gradescope(course: Course, out: Path) -> None:
    """Write the Gradescope autograder zip ``out``."""
    if course.solutions is None:  # a student release
        raise GraderError("a Gradescope autograder needs the solutions, which a student release lacks")
    locks = lock_files(course)
    if not locks:
        raise GraderError("delivery.include names no requirements*.lock file for setup.sh to install")
    private = sorted({course.solutions, *(str(Path(e.suite).parent) for e in course.exercises)})
    with tempfile.TemporaryDirectory(prefix="autograder-gradescope-") as scratch:
        root = Path(scratch)
        ship(course, _grading_paths(course, course.solutions), root)
        ship_engine(root)
        header = f"{course.title}: the Gradescope autograder's copy, written by `python -m autograder gradescope`."
        (root / "course.yaml").write_text(course_yaml(course, header, ("samples", "delivery")), encoding="utf-8")
        (root / "setup.sh").write_text(SETUP.format(locks=" ".join(f"-r \"$SOURCE/{p}\"" for p in locks),
                                                    private=_quoted(private)), encoding="utf-8")
        (root / "run_autograder").write_text(RUN.format(private=_quoted(private)), encoding="utf-8")
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                _add(archive, path, path.relative_to(root).as_posix())


def _grading_paths(course: Course, solutions: str) -> list[str]:
    """Every course file that official grading reads."""
    readable = [p for p in [*course.data.values(), *course.sandbox.readonly_paths] if course.path(p).exists()]
    return [course.package, *course.provided, solutions, *(e.suite for e in course.exercises),
            *course.sandbox.support_modules, *readable, *course.delivery.include]


def _add(archive: zipfile.ZipFile, path: Path, name: str) -> None:
    """Store a file with plain permissions (the two scripts executable)."""
    info = zipfile.ZipInfo.from_file(path, name)
    executable = name in ("setup.sh", "run_autograder")
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, path.read_bytes())


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
mkdir -p "$ROOT/results"
cd "$SOURCE"
"$PYTHON" -m autograder --course "$SOURCE/course.yaml" grade "$ROOT/submission" --out "$work/graded" --jobs 1
cp "$work/graded/submission/results.json" "$ROOT/results/results.json"
"""
