"""The sandbox: one worker process for student code, walled off from the grader by layers.

Each layer is used wherever this machine allows it, and all of them together when it can:

- ``landlock``: before it imports student code, the worker confines itself (Linux 5.13+, no
  privileges needed, works in containers): it may read only the Python runtime, its copy of
  the submission and the course's support files, and write only its scratch folder; TCP,
  signals to other processes and abstract sockets are denied. A seccomp filter makes
  ``socket()`` fail, so no network of any kind, and the kernel keyring calls, so no worker
  leaves data in a keyring for a later one.
- ``bwrap``: bubblewrap gives new network, pid, ipc and uts namespaces and a root made of
  read-only system folders, the worker's files and two size-capped tmpfs folders.
- ``uid``: as root (or with ``CAP_SETUID``), the worker runs as an unprivileged uid of its
  own, without capabilities; otherwise a root worker drops its capabilities itself.
- ``cgroup``: memory (and processes, where no private uid counts them) are counted for the
  worker and all its children together (:mod:`autograder.cgroup`), and a process that a
  call started is killed when the call returns, so nothing of the student's runs between
  calls but the worker's own threads, which its CPU-time limit bounds.

Resource limits, a time limit per call and a size limit per answer apply in every mode.
:func:`isolation` finds the layers in force and why the others are missing;
:func:`require_isolation` refuses official grading when no layer keeps the grader's files
from student code. Workers die with their grader: bubblewrap's ``--die-with-parent``, the
worker's parent-death signal, its cgroup, and a sweep of the folders of dead graders.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import py_compile
import select
import shutil
import signal
import site
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import cgroup as cgroups
from . import codec, landlock
from .errors import GraderError, SandboxFailure
from .i18n import _

if TYPE_CHECKING:
    from _typeshed import HasFileno

ENGINE_DIR = Path(__file__).resolve().parent
WORKER_FILES = ("worker.py", "codec.py", "landlock.py")
HEADER = struct.Struct(">I")
INSIDE = Path("/sandbox")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")
LAYERS = ("bwrap", "landlock", "uid", "cgroup")
FOLDER_PREFIX = "autograder-worker-"
UNSAFE_ENV = "AUTOGRADER_UNSAFE_NO_SANDBOX"


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


@dataclass(frozen=True)
class Isolation:
    """The layers in force, and for each missing layer why it is missing."""

    layers: frozenset[str]
    missing: tuple[tuple[str, str], ...] = ()

    @property
    def holds(self) -> bool:
        """Whether student code is kept from the grader's files and the network."""
        return bool(self.layers & {"bwrap", "landlock"})

    def describe(self) -> str:
        return " + ".join(layer for layer in LAYERS if layer in self.layers) or "resource limits only"

    def why_missing(self) -> str:
        return "; ".join(f"{layer}: {why}" for layer, why in self.missing)


@functools.cache
def isolation() -> Isolation:
    """The strongest isolation this machine allows, checked by starting a known-good worker.

    ``AUTOGRADER_LAYERS`` (a comma-separated subset of :data:`LAYERS`) turns layers off, to
    try a weaker machine's mode. Raises :class:`GraderError` when no worker can start at all.
    """
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


class IsolationRefused(GraderError):
    """Official grading was refused: no layer keeps the grader's files from student code."""


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
    with tempfile.TemporaryDirectory(prefix="autograder-probe-") as folder:
        (Path(folder) / "known_good.py").write_text("def echo(value):\n    return value\n")
        worker = None
        try:
            worker = Worker(Layout(Path(folder)), Limits(call_seconds=10), found)
            answer = codec.loads(worker.request(codec.dumps({"op": "import", "module": "known_good"}), 10),
                                 handle=lambda body: body)
            return None if "ok" in answer else str(answer["error"])[:500]
        except (SandboxFailure, OSError, codec.CodecError) as error:
            return str(error)
        finally:
            if worker is not None:
                worker.close()


class Worker:
    """One sandboxed worker process and its request/response pipes."""

    def __init__(self, layout: Layout, limits: Limits, found: Isolation | None = None, uid_slot: int = 0,
                 control: int | None = None):
        self.limits = limits
        self.isolation = found or isolation()
        self.killed: set[int] = set()
        self.closed = False
        _first_worker()
        self.home = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
        self.uid_slot = uid_slot
        self.uid = _sandbox_uid(uid_slot) if "uid" in self.isolation.layers else None
        self.cgroup = None
        self.ready = False
        self.strays = True  # kill the processes that a call started when it returns
        try:
            if "cgroup" in self.isolation.layers:
                self.cgroup = cgroups.Cgroup.take(limits.memory_mb, None if self.uid is not None else limits.processes,
                                                  counted=control is not None)  # a zygote's: looked at after every call
            command, inner_home = self._command(layout, control)
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                cwd=self.home, env=_environment(layout, inner_home), start_new_session=True,
                pass_fds=() if control is None else (control,),
            )
        except OSError as error:  # the grader's machine, never the student: a grader failure (autograder.plugin)
            self._remove_folders()
            raise SandboxFailure("sandbox", f"the worker did not start ({error})") from None
        except BaseException:
            self._remove_folders()
            raise
        assert self.process.stdin is not None and self.process.stdout is not None  # both are PIPE above
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        os.set_blocking(self.stdin.fileno(), False)
        self.reading, self.writing = _polls(self.stdout, self.stdin)
        self.unread = bytearray()  # read from the worker, not asked for yet (mostly: an answer behind its header)

    def request(self, payload: bytes, timeout: float) -> bytes:
        """Send one frame and wait at most ``timeout`` seconds, writing included, for the answer frame."""
        deadline = time.monotonic() + timeout
        try:
            if not self.ready:
                self._hello(deadline)
            self._write(HEADER.pack(len(payload)) + payload, deadline)
            (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
            if size > self.limits.message_mb << 20:
                self.close()
                raise SandboxFailure("protocol",
                                     _("the answer was larger than {size} MB").format(size=self.limits.message_mb))
            answer = self._read(size, deadline)
            self._kill_strays()
            return answer
        except TimeoutError:
            raise self._timed_out(timeout) from None

    def wait_ready(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the worker's hello (:meth:`_hello`)."""
        try:
            if not self.ready:
                self._hello(time.monotonic() + timeout)
        except TimeoutError:
            raise self._timed_out(timeout) from None

    def _timed_out(self, timeout: float) -> SandboxFailure:
        self.close()
        why = _("the time limit") if timeout >= self.limits.call_seconds else _("what was left of the time budget")
        return SandboxFailure("timeout", _("took longer than {seconds:.3g} s ({why})").format(seconds=timeout, why=why))

    def close(self) -> None:
        """Kill the worker and everything it started, and remove its folder and cgroup."""
        if self.closed:
            return
        self.closed = True
        self.killed |= set(_tree(self.process.pid)) - {self.process.pid}  # to reap once orphaned
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.cgroup is not None:
            self.killed |= self.cgroup.kill()
        self.process.wait()
        if self.uid is not None:
            self.killed |= _kill_user(self.uid)
        for stream in (self.stdin, self.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._remove_folders()

    def _kill_strays(self) -> None:
        """Nothing a call started runs on after it: kill the processes that were not there before
        it, until none is left (one may fork while it dies). Where the cgroup counts its tasks and
        had no thread at the worker's hello, the same count says at once that there is none: a
        task counts from its fork until it is reaped, and none of the hello's leaves uncounted while
        others stay (a dead worker counts until its close reaps it; bubblewrap's namespace dies
        with its first process)."""
        cgroup = self.cgroup
        if cgroup is None or not self.strays or (self.quiet is not None and cgroup.tasks() == self.quiet):
            return
        self.killed |= cgroups.kill_until_gone(lambda: [p for p in cgroup.pids() if p not in self.baseline])

    def _reap(self, patience: float = 0.2) -> None:
        """Collect the worker's dead processes that were handed to this grader (a subreaper).
        One still dying after ``patience`` is collected by a later worker's close, so that a
        long-lived grader (a batch's, a Dask worker's) gathers no zombies in a slow moment."""
        _collect(_DYING)
        deadline, pause = time.monotonic() + patience, cgroups.pauses()
        while self.killed and time.monotonic() < deadline:
            _collect(self.killed)
            if self.killed:
                time.sleep(next(pause))
        _DYING.update(self.killed)
        self.killed.clear()

    def _remove_folders(self) -> None:
        if self.cgroup is not None:
            self.cgroup.give_back(self._reap)
            self.cgroup = None
        self._reap()
        shutil.rmtree(self.home, ignore_errors=True)

    def _hello(self, deadline: float) -> None:
        """The worker's first frame says whether it could confine itself."""
        (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
        hello = json.loads(self._read(min(size, 4096), deadline))
        if not isinstance(hello, dict) or "ready" not in hello:
            self.close()
            raise SandboxFailure("sandbox", f"the worker could not confine itself: {str(hello.get('broken'))[:500]}")
        self.ready = True
        self.baseline = set(self.cgroup.pids()) if self.cgroup is not None else set()
        tasks = self.cgroup.tasks() if self.cgroup is not None else None
        self.quiet = tasks if tasks == len(self.baseline) else None  # one task a process: none has a thread
        self._booted()

    def _booted(self) -> None:
        # bubblewrap's own child (the pid namespace's first process): should the worker end by
        # itself, it outlives bubblewrap, comes to this grader (a subreaper) and is reaped at close
        self.killed |= set(_tree(self.process.pid)) - {self.process.pid}

    def _write(self, data: bytes, deadline: float) -> None:
        """Write ``data`` to the worker's pipe by ``deadline``, waiting only when the pipe is full."""
        view = memoryview(data)
        while view:
            if deadline <= time.monotonic():
                raise TimeoutError
            try:
                view = view[os.write(self.stdin.fileno(), view):]
            except BlockingIOError:
                _wait(self.writing, deadline)
            except OSError:
                raise self._death() from None

    def _read(self, size: int, deadline: float) -> bytes:
        """The worker's next ``size`` bytes, by ``deadline``. A read takes what the pipe holds, up to
        1 MB, so one read mostly brings a frame's header and its body together."""
        while len(self.unread) < size:
            _wait(self.reading, deadline)
            chunk = os.read(self.stdout.fileno(), min(max(size - len(self.unread), 1 << 16), 1 << 20))
            if not chunk:
                raise self._death()
            self.unread += chunk
        data = bytes(self.unread[:size])
        del self.unread[:size]
        return data

    def _death(self) -> SandboxFailure:
        code = self._exit_code()
        if code is None or code == 0:
            how = _("the worker process stopped answering (os._exit or a closed pipe?)")
        elif code < 0 or code > 128:
            number = -code if code < 0 else code - 128
            name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
            hint = {"SIGKILL": _(" (memory or CPU limit?)"), "SIGXCPU": _(" (CPU time limit)"),
                    "SIGSEGV": _(" (crash)")}.get(name, "")
            how = _("the worker process was killed by {signal}").format(signal=name) + hint
        else:
            how = _("the worker process exited with status {code} (sys.exit or os._exit?)").format(code=code)
        if not self.ready:
            return SandboxFailure("sandbox", f"the worker did not start ({how})")
        return SandboxFailure("crash", how)

    def _exit_code(self) -> int | None:
        """How the worker process ended (a negative signal number, or its exit status), closing it."""
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self.close()
        return code

    def _command(self, layout: Layout, control: int | None = None) -> tuple[list[str], Path]:
        """The worker's command line, and its scratch folder as the worker sees it.

        ``self.home`` (private to the grader, or to the worker's uid) holds ``grader/`` (the
        worker's files), ``support/`` (the course's support modules), ``submission/`` (this
        worker's own copy, so no other process needs to read the staged one) and ``work/``.
        """
        for name in ("grader", "support", "work"):
            (self.home / name).mkdir()
        _write_worker_code(self.home / "grader")
        for module in layout.support_modules:
            shutil.copy2(module, self.home / "support" / module.name)
        shutil.copytree(layout.submission, self.home / "submission", symlinks=True)
        strong = "bwrap" in self.isolation.layers
        inside = INSIDE if strong else self.home
        grader, support, submission = (inside / n for n in ("grader", "support", "submission"))
        work = INSIDE / "home" if strong else self.home / "work"
        readable = [*(Path(d) for d in SYSTEM_DIRS), *_runtime(), *layout.readonly_paths, grader, support, submission]
        config = {
            "path": [str(submission), str(support)],
            "work": str(work),
            "site": site.getsitepackages(),  # Python starts with -S: see worker.main
            "limits": self.limits.rlimits(),
            "landlock": "landlock" in self.isolation.layers,
            "read": [str(p) for p in [*readable, Path("/dev/urandom"), Path("/dev/zero")]],
            "write": [str(work), "/dev/null", *(["/tmp"] if strong else [])],
            "drop_capabilities": self.uid is None and os.geteuid() == 0,
            # where nothing counts its processes (no cgroup, no private uid, and as root, for whom
            # RLIMIT_NPROC does not count) or kills them all when it ends (nor bubblewrap's pid
            # namespace), a worker starts none
            "no_processes": self.cgroup is None and self.uid is None and (os.geteuid() == 0 or not strong),
            **({} if control is None else {"control": control}),  # may become a zygote (autograder.standby)
        }
        start = f"import sys; sys.path.insert(0, {str(grader)!r}); import worker; worker.main()"
        command = [sys.executable, "-S", "-s", "-P", "-B", "-c", start, json.dumps(config)]
        if self.uid is not None:
            _chown_tree(self.home, self.uid)
            command = ["setpriv", *_setpriv_args(self.uid), *command]
        if strong:
            command = _bwrap(layout, self.home, self.limits) + command
        if self.cgroup is not None:  # join the cgroup before anything of the worker's starts
            join = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
            command = ["/bin/sh", "-c", join, "sh", *self.cgroup.procs_files, "--", *command]
        return command, work


def _polls(reading: HasFileno, writing: HasFileno) -> tuple[select.poll, select.poll]:
    """One poll object for each pipe: the one a worker is read from, and the one it is written to."""
    polls = select.poll(), select.poll()
    polls[0].register(reading, select.POLLIN)
    polls[1].register(writing, select.POLLOUT)
    return polls


def _wait(pipe: select.poll, deadline: float) -> None:
    """Wait until ``pipe`` (one registered end) is ready, or raise TimeoutError at ``deadline``."""
    left = deadline - time.monotonic()
    if left <= 0 or not pipe.poll(left * 1000):
        raise TimeoutError


_DYING: set[int] = set()  # killed processes of closed workers, not yet collected


def _collect(pids: set[int]) -> None:
    """Collect those of ``pids`` that are dead, without waiting, and forget them and any not ours."""
    for pid in list(pids):
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                pids.discard(pid)
        except ChildProcessError:  # not ours: its own parent reaps it
            pids.discard(pid)


@functools.cache
def _worker_code() -> dict[str, bytes]:
    """The worker's files, each with its compiled code (a ``__pycache__`` file checked against
    the source's hash), by path: made once per grader process and written into every worker's
    folder, since compiling them took about 5 ms of every worker's start. The worker imports
    ``worker`` rather than running it as a script, whose code Python would compile anew."""
    files = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in WORKER_FILES:
            source, stem = ENGINE_DIR / name, Path(name).stem
            files[name] = source.read_bytes()
            if sys.implementation.cache_tag is None:  # a Python that keeps no compiled code
                continue
            # named here, not by importlib (PYTHONPYCACHEPREFIX would move it); dfile: no grader path inside
            compiled = f"__pycache__/{stem}.{sys.implementation.cache_tag}.pyc"
            py_compile.compile(str(source), os.path.join(folder, compiled), dfile=name, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            files[compiled] = Path(folder, compiled).read_bytes()
    return files


def _write_worker_code(folder: Path) -> None:
    """The worker's files and their compiled code, in ``folder`` (made here)."""
    for name, data in _worker_code().items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def _bwrap(layout: Layout, host_home: Path, limits: Limits) -> list[str]:
    """bubblewrap's arguments: read-only system and worker files, size-capped tmpfs to write in."""
    disk = str(limits.disk_mb << 20)
    command = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
               "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev"]
    if os.geteuid() != 0:  # as root the private uid does the job, and setpriv needs the host's uids
        command += ["--unshare-user", "--disable-userns"]
    readonly = _outermost([*(Path(d) for d in SYSTEM_DIRS), *_runtime(), *layout.readonly_paths])
    for folder in ("/tmp", str(INSIDE / "home")):  # writable, only disk_mb each, in memory; first, so
        command += ["--perms", "1777", "--size", disk, "--tmpfs", folder]  # binds below /tmp stay seen
    for parent in sorted({a for p in [*readonly, INSIDE / "home"] for a in p.parents if a != Path("/")}):
        command += ["--perms", "0755", "--dir", str(parent)]  # bwrap would make them 0700
    for path in readonly:
        command += ["--ro-bind", str(path), str(path)]
    for name in ("grader", "support", "submission"):
        command += ["--ro-bind", str(host_home / name), str(INSIDE / name)]
    return command + ["--chdir", str(INSIDE / "home"), "--"]


def _runtime() -> list[Path]:
    """The Python installation the worker runs (a venv and the Python it was made from)."""
    return [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent]


def _outermost(paths: list[Path]) -> list[Path]:
    """Existing paths with those inside another one dropped (a bind covers its subfolders)."""
    kept: list[Path] = []
    for path in sorted({p.absolute() for p in paths if p.exists()}, key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(outer) for outer in kept):
            kept.append(path)
    return kept


def _environment(layout: Layout, work: Path) -> dict[str, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work), "LANG": "C.UTF-8",
           "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}
    env.update(layout.env)
    return env


def _setpriv_args(uid: int) -> list[str]:
    return [f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
            "--no-new-privs", "--"]


def _chown_tree(root: Path, uid: int) -> None:
    for current, folders, files in os.walk(root):
        for name in [".", *folders, *files]:
            os.lchown(os.path.join(current, name), uid, uid)


def _kill_user(uid: int, patience: float = 5.0) -> set[int]:
    """Kill every process of the sandbox user, wait until they are gone, return their pids."""
    return cgroups.kill_until_gone(lambda: [pid for pid in _pids() if _owner(pid, uid) == uid], patience)


def _tree(pid: int) -> list[int]:
    """A process and all its descendants."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            with open(f"/proc/{current}/task/{current}/children") as children:
                todo += [int(child) for child in children.read().split()]
        except OSError:
            pass
    return found


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _owner(pid: int, only: int | None = None) -> int | None:
    """The uid of a living process (None for a zombie: it is dead, only not yet reaped). With
    ``only``, a process of another uid is not looked at further: one stat, no read (this scan of
    every process runs after each property)."""
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
        if only is not None and uid != only:
            return uid
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
        return None if state == b"Z" else uid
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def _sandbox_uid(slot: int = 0) -> int:
    """One of the two private uids of this grader process's workers (``slot`` 0 or 1: the worker
    serving and the one a :class:`~autograder.standby.Standby` boots), unique while the grader lives."""
    return SANDBOX_UIDS.start + 2 * os.getpid() + slot


SANDBOX_UIDS = range(200_000, 200_000 + (1 << 23) + 2)  # pid_max is at most 2**22


@functools.cache
def _first_worker() -> None:
    """Once per grader process: become the reaper of its workers' orphans (PR_SET_CHILD_SUBREAPER),
    so that the dead are collected here at once instead of counting against a reused cgroup, and
    remove what graders that died left behind."""
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    _sweep_folders()


def _sweep_folders() -> None:
    """Remove the workers' folders of graders that are no longer running."""
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*"):
        owner = folder.name[len(FOLDER_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(folder, ignore_errors=True)


# --- the probes behind isolation() -------------------------------------------------------

def _uid_problem() -> str | None:
    if os.geteuid() != 0:
        return "the grader is not root, so workers run as the grader's own user"
    if not shutil.which("setpriv"):
        return "setpriv (util-linux) is not installed"
    return _run_problem(["setpriv", *_setpriv_args(_sandbox_uid()), "true"], "setpriv cannot switch to a private uid")


def _landlock_problem() -> str | None:
    return None if landlock.abi() > 0 else "the kernel has no Landlock (needs Linux 5.13+ with landlock enabled)"


def _bwrap_problem() -> str | None:
    if not shutil.which("bwrap"):
        return "bubblewrap is not installed (no bwrap on PATH)"
    with tempfile.TemporaryDirectory(prefix=FOLDER_PREFIX + f"{os.getpid()}-probe-") as home:
        for name in ("grader", "support", "submission"):
            os.mkdir(os.path.join(home, name))
        return _run_problem(_bwrap(Layout(Path(home)), Path(home), Limits()) + ["true"],
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
