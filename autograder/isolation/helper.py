"""The limited helper: where the engine's own code reads untrusted bytes, never in the grader.

:func:`run_helper` runs a task (a function of the engine named ``module:function``) in a process
of its own (:mod:`autograder.isolation.inside.helper`) with limits on its CPU time, memory, file
size and open files, killed past a wall-clock limit, and confined as a worker is where the
machine allows it; its request and answer are plain JSON. It runs as the grader's own user,
outside bubblewrap, cgroup and private uid. Why, and what stands in for those layers:
docs/security.md, "Untrusted input is parsed only in the limited helper".
"""

from __future__ import annotations

import json
import os
import select
import signal
import site
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import GraderError
from .inside import FOLDER as INSIDE
from .inside import landlock
from .readable import helper_reads

PACKAGE = Path(__file__).resolve().parents[1]  # the engine's package, which the helper imports its task from


@dataclass(frozen=True)
class HelperLimits:
    """What one helper may take: CPU seconds (the limit that counts), memory, the size of each
    file it writes, the size of its answer (which the grader parses) and wall-clock seconds (a
    wide net, for a helper that waits rather than computes)."""

    cpu_seconds: int = 30
    memory_mb: int = 1024
    file_mb: int = 32
    answer_mb: int = 16
    wall_seconds: float = 120.0

    def rlimits(self) -> dict[str, int]:
        written = max(self.file_mb, self.answer_mb) + 1  # its answer is a file too: one cut short is no answer
        return {"RLIMIT_CPU": self.cpu_seconds, "RLIMIT_AS": self.memory_mb << 20, "RLIMIT_FSIZE": written << 20,
                "RLIMIT_NOFILE": 64, "RLIMIT_CORE": 0}

    def __str__(self) -> str:
        return f"{self.cpu_seconds} s of CPU, {self.memory_mb} MB of memory, files of {self.file_mb} MB"


class OverLimits(Exception):
    """The task went past the helper's limits or raised: what it was given is to blame."""


def run_helper(task: str, request: Any, read: Sequence[Path] = (), write: Sequence[Path] = (),
               limits: HelperLimits = HelperLimits()) -> Any:
    """The answer of ``task`` (``module:function``) to ``request`` in a limited helper that may
    read ``read`` and write ``write`` besides what every helper reads. Raises :class:`OverLimits`
    when the task went past its limits or raised, and :class:`~autograder.errors.GraderError` when
    the helper could not start or confine itself (the machine's failure, never the input's)."""
    with tempfile.TemporaryDirectory(prefix="autograder-helper-") as folder:
        scratch = Path(folder)
        (scratch / "path").mkdir()
        (scratch / "path" / PACKAGE.name).symlink_to(PACKAGE)  # the package alone, not the folder that holds it
        (scratch / "home").mkdir()
        (scratch / "request.json").write_text(json.dumps(request), encoding="utf-8")
        config = {"limits": limits.rlimits(), "landlock": landlock.abi() > 0, "drop_capabilities": os.geteuid() == 0,
                  "read": [str(p) for p in [*helper_reads(os.geteuid() == 0), PACKAGE, scratch, *read,
                                            Path("/dev/urandom")]],
                  "write": [str(p) for p in [scratch / "home", *write, Path("/dev/null")]],
                  "path": [str(scratch / "path"), *site.getsitepackages()], "task": task}
        _run(config, scratch, limits)
        return _answer(scratch / "answer.json", limits)


def _run(config: dict, scratch: Path, limits: HelperLimits) -> None:
    """Run the helper to its end, or kill it at ``limits.wall_seconds``."""
    start = f"import sys; sys.path.insert(0, {str(INSIDE)!r}); import helper; helper.main()"
    # one hash seed for every helper: what one helper hashes (copydetect's fingerprints) meets what another did
    env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch / "home"), "TMPDIR": str(scratch / "home"), "LANG": "C.UTF-8",
           "PYTHONHASHSEED": "0"}
    with open(scratch / "request.json", "rb") as request, open(scratch / "answer.json", "wb") as answer:
        try:
            # in the caller's folder: a relative path it names reads as the caller reads it; without
            # site's .pth files (an editable install's finder), which the helper does not need
            process = subprocess.Popen([sys.executable, "-S", "-s", "-P", "-B", "-c", start, json.dumps(config)],
                                       stdin=request,
                                       stdout=answer, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        except OSError as error:
            raise GraderError(f"the limited helper did not start ({error})") from None
        if not _ended(process, limits.wall_seconds):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _ended(process: subprocess.Popen, seconds: float) -> bool:
    """Whether ``process`` ends within ``seconds``, known the moment it does (a pidfd): the
    standard library's wait only looks now and then, a good part of a short helper's run."""
    try:
        handle = os.pidfd_open(process.pid)
    except OSError:  # a kernel before Linux 5.3
        try:
            process.wait(seconds)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        waiting = select.poll()  # not select.select, which refuses a descriptor past 1023
        waiting.register(handle, select.POLLIN)
        return bool(waiting.poll(seconds * 1000))
    finally:
        os.close(handle)


def _answer(path: Path, limits: HelperLimits) -> Any:
    """The task's answer, read back from the helper's output file (at most ``answer_mb``)."""
    size = path.stat().st_size
    try:
        answer = json.loads(path.read_bytes()) if 0 < size <= limits.answer_mb << 20 else None
    except (ValueError, RecursionError):
        answer = None  # cut short where its limits stopped it
    if not isinstance(answer, dict) or len(answer) != 1:
        raise OverLimits(f"it went past the limits of the grader's helper ({limits})")
    (kind, value), = answer.items()
    if kind == "broken":
        raise GraderError(str(value))
    if kind != "ok":
        raise OverLimits(str(value))
    return value
