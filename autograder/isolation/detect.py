"""Which layers this machine allows, found by trying them, and the refusal to grade where none holds.

:func:`isolation` probes each layer (a private uid, Landlock, a cgroup, bubblewrap), then starts a
known-good worker with all it found, giving up the private uid if that worker cannot start; the
answer is kept for the process. ``AUTOGRADER_LAYERS`` (a comma-separated subset of
:data:`~autograder.isolation.layers.LAYERS`) turns layers off, to try a weaker machine's mode
(:func:`with_layers`). :func:`require_isolation` refuses official grading when no layer keeps the
grader's files from student code, unless told to grade anyway (every report then says so).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import GraderError, SandboxFailure
from ..i18n import _
from . import cgroup as cgroups
from .inside import codec, landlock
from .layers import LAYERS, UNSAFE_ENV, Isolation, IsolationRefused
from .layout import Layout
from .limits import WorkerLimits
from .process import Worker, bwrap_args, sandbox_uid, setpriv_args
from .reaping import FOLDER_PREFIX


@functools.cache
def isolation() -> Isolation:
    """The strongest isolation this machine allows, checked by starting a known-good worker.
    Raises :class:`GraderError` when no worker can start at all."""
    wanted = os.environ.get("AUTOGRADER_LAYERS")
    allowed = set(LAYERS) if wanted is None else {w.strip() for w in wanted.split(",") if w.strip()}
    if allowed - set(LAYERS):
        raise GraderError(f"AUTOGRADER_LAYERS: unknown layer {', '.join(sorted(allowed - set(LAYERS)))} "
                          f"(known: {', '.join(LAYERS)})")
    missing = {layer: "turned off by AUTOGRADER_LAYERS" for layer in LAYERS if layer not in allowed}
    for layer, probe in (("uid", _uid_problem), ("landlock", _landlock_problem), ("cgroup", cgroups.available),
                         ("bwrap", _bwrap_problem)):
        if layer in allowed and (why := probe()):
            missing[layer] = why
    while True:
        found = Isolation(frozenset(set(LAYERS) - set(missing)),
                          tuple((layer, missing[layer]) for layer in LAYERS if layer in missing))
        failure = known_good_problem(found)
        if failure is None:
            return found
        if "uid" not in found.layers:
            raise GraderError(f"the sandbox cannot start a worker with {found.describe()}: {failure}")
        missing["uid"] = f"a worker under a private uid could not start ({failure})"


@contextlib.contextmanager
def with_layers(layers: str) -> Iterator[Isolation]:
    """For a while, only ``layers`` (comma-separated) may be used: a weaker machine's mode, to compare."""
    before = os.environ.get("AUTOGRADER_LAYERS")
    os.environ["AUTOGRADER_LAYERS"] = layers
    isolation.cache_clear()
    try:
        yield isolation()
    finally:
        if before is None:
            del os.environ["AUTOGRADER_LAYERS"]
        else:
            os.environ["AUTOGRADER_LAYERS"] = before
        isolation.cache_clear()


def isolation_note() -> str:
    """One sentence for reports about the isolation in force."""
    found = isolation()
    if os.environ.get(UNSAFE_ENV) == "1" and not found.holds:
        return _("UNSAFE: grading ran without a sandbox ({layers}); student code could read and write what the "
                 "grader can ({missing}).").format(layers=found.describe(), missing=found.why_missing())
    note = _("Student code ran in a sandbox: {layers}.").format(layers=found.describe())
    if not found.missing:
        return note
    return note + " " + _("Not available here: {missing}.").format(missing=found.why_missing())


def require_isolation(unsafe: bool = False) -> Isolation:
    """The isolation in force, or :class:`IsolationRefused` when it does not hold.

    ``unsafe`` (``--unsafe-no-sandbox``, or ``AUTOGRADER_UNSAFE_NO_SANDBOX=1``) grades anyway;
    every report then says so.
    """
    found = isolation()
    if found.holds:
        return found
    if unsafe or os.environ.get(UNSAFE_ENV) == "1":
        os.environ[UNSAFE_ENV] = "1"  # for the grader processes and their reports
        return found
    raise IsolationRefused(
        "refusing to grade: no sandbox layer here keeps student code from the solutions, the suites and the "
        f"reports. Tried: {found.why_missing()}. Install bubblewrap, or grade on Linux 5.13+ with Landlock; "
        "--unsafe-no-sandbox (or AUTOGRADER_UNSAFE_NO_SANDBOX=1) grades anyway and says so in every report.")


def known_good_problem(found: Isolation) -> str | None:
    """None if a worker with these layers starts and answers a call, otherwise what went wrong."""
    with _probe_folder() as folder:
        (Path(folder) / "known_good.py").write_text("def echo(value):\n    return value\n")
        worker = None
        try:
            worker = Worker(Layout(Path(folder)), WorkerLimits(call_seconds=10), found)
            answer = codec.loads(worker.request(codec.dumps({"op": "import", "module": "known_good"}), 10),
                                 handle=lambda body: body)
            return None if "ok" in answer else str(answer["error"])[:500]
        except (SandboxFailure, OSError, codec.CodecError) as error:
            return str(error)
        finally:
            if worker is not None:
                worker.close()


def _probe_folder() -> tempfile.TemporaryDirectory[str]:
    """A probe's folder, named for this process as a worker's is: a grader killed while it probes
    leaves it to the next grader's sweep."""
    return tempfile.TemporaryDirectory(prefix=FOLDER_PREFIX + f"{os.getpid()}-probe-")


def _uid_problem() -> str | None:
    if os.geteuid() != 0:
        return "the grader is not root, so workers run as the grader's own user"
    if not shutil.which("setpriv"):
        return "setpriv (util-linux) is not installed"
    return _run_problem(["setpriv", *setpriv_args(sandbox_uid()), "true"], "setpriv cannot switch to a private uid")


def _landlock_problem() -> str | None:
    return None if landlock.abi() > 0 else "the kernel has no Landlock (needs Linux 5.13+ with landlock enabled)"


def _bwrap_problem() -> str | None:
    if not shutil.which("bwrap"):
        return "bubblewrap is not installed (no bwrap on PATH)"
    with _probe_folder() as home:
        for name in ("grader", "support", "submission"):
            os.mkdir(os.path.join(home, name))
        return _run_problem(bwrap_args(Layout(Path(home)), Path(home), WorkerLimits()) + ["true"],
                            "bubblewrap is installed but cannot create its sandbox")


def _run_problem(command: list[str], what: str) -> str | None:
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{what}: {error}"
    if run.returncode == 0:
        return None
    said = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
    return f"{what}: {said}"
