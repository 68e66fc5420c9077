"""The sandbox: one worker process for student code, walled off from the grader.

With bubblewrap (``bwrap``) the worker gets new network, pid, ipc and uts namespaces, a
root made of read-only system folders plus the submission, the engine's two worker files
and the course's support modules; the solutions, the suites, the grader's output and every
other submission are simply not there. When the grader runs as root, the worker also drops
to an unprivileged user of its own (so the process limit counts only its processes).

Without bwrap it falls back to ``unshare`` (as root) or to a plain child process: the same
resource limits and time limits, but student code could read files the grader can read.
:func:`isolation` says which mode is in force, and reports repeat it.
"""

from __future__ import annotations

import functools
import json
import os
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .errors import SandboxFailure

ENGINE_DIR = Path(__file__).resolve().parent
WORKER_FILES = ("worker.py", "codec.py")
HEADER = struct.Struct(">I")
INSIDE = Path("/sandbox")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one worker (its whole life) and the wall-clock limit of one call."""

    call_seconds: float = 5.0
    cpu_seconds: int = 60
    memory_mb: int = 1024
    processes: int = 32
    file_mb: int = 16
    open_files: int = 64
    message_mb: int = 16
    disk_mb: int = 64

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_AS": self.memory_mb << 20,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_FSIZE": self.file_mb << 20,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CORE": 0,
        }


@dataclass(frozen=True)
class Layout:
    """What the worker sees: the submission root, support modules, extra read-only paths, env."""

    submission: Path
    support_modules: tuple[Path, ...] = ()
    readonly_paths: tuple[Path, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@functools.cache
def isolation() -> str:
    """``bwrap``, ``unshare`` or ``process``: the strongest isolation this machine allows."""
    if os.environ.get("AUTOGRADER_ISOLATION"):
        return os.environ["AUTOGRADER_ISOLATION"]
    probes = {
        "bwrap": ["bwrap", "--unshare-net", "--unshare-pid", "--die-with-parent",
                  *(arg for d in SYSTEM_DIRS if os.path.isdir(d) for arg in ("--ro-bind", d, d)),
                  *([] if os.geteuid() == 0 else ["--unshare-user"]), "true"],
        "unshare": ["unshare", "--net", "--pid", "--mount", "--fork", "--kill-child", "--mount-proc", "true"],
    }
    for mode, probe in probes.items():
        if shutil.which(probe[0]) and (mode == "bwrap" or os.geteuid() == 0):
            try:
                if subprocess.run(probe, capture_output=True, timeout=10).returncode == 0:
                    return mode
            except (OSError, subprocess.TimeoutExpired):
                pass
    return "process"


def isolation_note() -> str:
    """One sentence for reports about the isolation in force."""
    mode = isolation()
    if mode == "bwrap":
        return "Student code ran in a bubblewrap sandbox (no network, solutions not visible)."
    return (f"WEAKER ISOLATION: bubblewrap is not available, student code ran with `{mode}` "
            "isolation and resource limits only; it could read files the grader can read.")


class Worker:
    """One sandboxed worker process and its request/response pipe."""

    def __init__(self, layout: Layout, limits: Limits):
        self.limits = limits
        self.home = Path(tempfile.mkdtemp(prefix="autograder-worker-"))
        self.uid = _sandbox_uid()
        command, inner_home = self._command(layout)
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self.home, env=_environment(layout, inner_home), start_new_session=True,
        )
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def request(self, payload: bytes, timeout: float) -> bytes:
        """Send one frame and wait at most ``timeout`` seconds for the answer frame."""
        try:
            self.process.stdin.write(HEADER.pack(len(payload)) + payload)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._death() from None
        deadline = time.monotonic() + timeout
        try:
            (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
            if size > self.limits.message_mb << 20:
                self.close()
                raise SandboxFailure("protocol", f"the answer was larger than {self.limits.message_mb} MB")
            return self._read(size, deadline)
        except TimeoutError:
            self.close()
            why = "the time limit" if timeout >= self.limits.call_seconds else "what was left of the time budget"
            raise SandboxFailure("timeout", f"took longer than {timeout:.3g} s ({why})") from None

    def close(self) -> None:
        """Kill the worker and everything it started, and remove its folder."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        if self.uid is not None:
            _kill_user(self.uid)
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.selector.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def _read(self, size: int, deadline: float) -> bytes:
        chunks, remaining = [], size
        stream = self.process.stdout
        while remaining:
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise TimeoutError
            chunk = os.read(stream.fileno(), min(remaining, 1 << 20))
            if not chunk:
                raise self._death()
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _death(self) -> SandboxFailure:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self.close()
        if code is None or code == 0:
            how = "the worker process stopped answering (os._exit or a closed pipe?)"
        elif code < 0 or code > 128:
            number = -code if code < 0 else code - 128
            name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
            hint = {"SIGKILL": " (memory or CPU limit?)", "SIGXCPU": " (CPU time limit)",
                    "SIGSEGV": " (crash)"}.get(name, "")
            how = f"the worker process was killed by {name}{hint}"
        else:
            how = f"the worker process exited with status {code} (sys.exit or os._exit?)"
        return SandboxFailure("crash", how)

    def _command(self, layout: Layout) -> tuple[list[str], Path]:
        """The worker's command line, and its home folder as the worker sees it.

        On the host, ``self.home`` holds ``grader/`` (the worker's two files), ``support/``
        (the course's support modules) and, without bwrap, ``work/`` and a copy of the
        submission (so the worker's user can read it wherever it was).
        """
        grader, support = self.home / "grader", self.home / "support"
        grader.mkdir()
        support.mkdir()
        for name in WORKER_FILES:
            shutil.copy2(ENGINE_DIR / name, grader / name)
        for module in layout.support_modules:
            shutil.copy2(module, support / module.name)
        mode = isolation()
        if mode == "bwrap":
            grader, support, submission, work = (INSIDE / n for n in ("grader", "support", "submission", "home"))
        else:
            submission, work = self.home / "submission", self.home / "work"
            shutil.copytree(layout.submission, submission)
            work.mkdir()
        config = {
            "output": str(work / "output.txt"),
            "path": [str(submission), str(support)],
            "limits": self.limits.rlimits(),
        }
        python = [sys.executable, "-s", "-P", "-B", str(grader / "worker.py"), json.dumps(config)]
        if self.uid is not None:
            for folder in (self.home, self.home / "work"):
                if folder.exists():
                    os.chown(folder, self.uid, self.uid)
            python = ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                      "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", *python]
        if mode == "bwrap":
            return _bwrap(layout, self.home, self.limits, self.uid is None) + python, work
        if mode == "unshare":
            return ["unshare", "--net", "--pid", "--mount", "--fork", "--kill-child", "--mount-proc", *python], work
        return python, work


def _bwrap(layout: Layout, host_home: Path, limits: Limits, user_namespace: bool) -> list[str]:
    """bubblewrap's arguments: read-only system and submission, size-capped tmpfs to write in."""
    disk = str(limits.disk_mb << 20)
    command = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
               "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev"]
    if user_namespace:
        command.append("--unshare-user")
    readonly = [Path(d) for d in SYSTEM_DIRS if os.path.isdir(d)]
    readonly += [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent]
    readonly += list(layout.readonly_paths)
    readonly = _outermost(readonly)
    for folder in ("/tmp", str(INSIDE / "home")):  # writable, only disk_mb each, in memory; first, so
        command += ["--perms", "1777", "--size", disk, "--tmpfs", folder]  # binds below /tmp stay seen
    for folder in sorted({a for p in [*readonly, INSIDE / "home"] for a in p.parents if a != Path("/")}):
        command += ["--perms", "0755", "--dir", str(folder)]  # bwrap would make them 0700
    for path in readonly:
        command += ["--ro-bind", str(path), str(path)]
    command += ["--ro-bind", str(host_home / "grader"), str(INSIDE / "grader"),
                "--ro-bind", str(host_home / "support"), str(INSIDE / "support"),
                "--ro-bind", str(layout.submission), str(INSIDE / "submission"),
                "--chdir", str(INSIDE / "home"), "--"]
    return command


def _outermost(paths: list[Path]) -> list[Path]:
    """Existing paths with those inside another one dropped (a bind covers its subfolders)."""
    kept: list[Path] = []
    for path in sorted({p.absolute() for p in paths if p.exists()}, key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(outer) for outer in kept):
            kept.append(path)
    return kept


def _environment(layout: Layout, home: Path) -> dict[str, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}
    env.update(layout.env)
    return env


def _kill_user(uid: int, patience: float = 5.0) -> None:
    """Kill every process of the sandbox user, and wait until they are gone."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        alive = [pid for pid in _pids() if _owner(pid) == uid]
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _owner(pid: int) -> int | None:
    """The uid of a living process (None for a zombie: it is dead, only not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
        return None if state == b"Z" else os.stat(f"/proc/{pid}").st_uid
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def _sandbox_uid() -> int | None:
    """As root, an unprivileged uid for this grader process's workers; otherwise none."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    return 200_000 + os.getpid() % 100_000

