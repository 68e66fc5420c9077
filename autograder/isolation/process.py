"""A worker started afresh: its own process, confined by every layer in force, and its command line.

The command line nests one layer in another, outermost first: the join of the worker's cgroup
(before anything of the worker's runs), bubblewrap (new namespaces, a root of read-only binds and
two size-capped tmpfs folders), setpriv (a private uid of its own, no capabilities), then Python
with only the worker's files on its path (:mod:`autograder.isolation.inside`), which lowers its
limits and confines itself further (Landlock, seccomp) before it says hello. Its folder holds
``grader/`` (the worker's files), ``support/`` (the course's support modules), ``submission/``
(its own copy, so no other process needs to read the staged one) and ``work/``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import SandboxFailure
from . import cgroup as cgroups
from . import inside
from .channel import Channel
from .layers import Isolation
from .layout import Layout
from .limits import WorkerLimits
from .readable import SYSTEM_DIRS, outermost, runtime, worker_reads
from .reaping import FOLDER_PREFIX, Strays, kill_user, once_per_grader, reap, tree

INSIDE = Path("/sandbox")  # where bubblewrap shows the worker its folder
SANDBOX_UIDS = range(200_000, 200_000 + (1 << 23) + 2)  # pid_max is at most 2**22


class Worker:
    """One sandboxed worker process and the channel to it (:meth:`request`).

    ``control`` (a socket's descriptor, passed on to the worker) makes it a zygote
    (:class:`~autograder.isolation.zygote.Zygote`); ``uid_slot`` picks which of this grader's two
    private uids it runs under (:func:`sandbox_uid`)."""

    def __init__(self, layout: Layout, limits: WorkerLimits, found: Isolation, uid_slot: int = 0,
                 control: int | None = None):
        self.limits = limits
        self.isolation = found
        self.killed: set[int] = set()
        self.closed = False
        once_per_grader()
        self.home = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
        self.uid_slot = uid_slot
        self.uid = sandbox_uid(uid_slot) if "uid" in found.layers else None
        self.cgroup: cgroups.Cgroup | None = None
        try:
            if "cgroup" in found.layers:
                self.cgroup = cgroups.Cgroup.take(limits.memory_mb, None if self.uid is not None else limits.processes,
                                                  counted=control is not None)  # a zygote's: looked at after every call
            command, inner_home = self._command(layout, control)
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                cwd=self.home, env=environment(layout, inner_home), start_new_session=True,
                pass_fds=() if control is None else (control,),
            )
        except OSError as error:  # the grader's machine, never the student: a grader failure (engine/plugin.py)
            self._remove_folders()
            raise SandboxFailure("sandbox", f"the worker did not start ({error})") from None
        except BaseException:
            self._remove_folders()
            raise
        assert self.process.stdin is not None and self.process.stdout is not None  # both are PIPE above
        self.strays = Strays(self.cgroup)
        self.channel = Channel(self.process.stdin, self.process.stdout, limits, self.strays, self)

    def request(self, payload: bytes, timeout: float) -> bytes:
        """The worker's answer to ``payload`` (:meth:`Channel.request`)."""
        return self.request_many([payload], [timeout])[0]

    def request_many(self, payloads: list[bytes], timeouts: list[float], within: float | None = None) -> list[bytes]:
        """The worker's answers to a batch (:meth:`Channel.request_many`)."""
        return self.channel.request_many(payloads, timeouts, within)

    def wait_ready(self, timeout: float) -> None:
        self.channel.wait_ready(timeout)

    def greeted(self) -> None:
        # bubblewrap's own child (the pid namespace's first process): should the worker end by
        # itself, it outlives bubblewrap, comes to this grader (a subreaper) and is reaped at close;
        # the last is the worker itself (bubblewrap's child's child), which has started nothing yet
        started = tree(self.process.pid)
        self.killed |= set(started) - {self.process.pid}
        self.channel.watch(started[-1])

    def close(self) -> None:
        """Kill the worker and everything it started, and remove its folder and cgroup."""
        if self.closed:
            return
        self.closed = True
        self.killed |= set(tree(self.process.pid)) - {self.process.pid}  # to reap once orphaned
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.cgroup is not None:
            self.killed |= self.cgroup.kill()
        self.process.wait()
        if self.uid is not None:
            self.killed |= kill_user(self.uid)
        self.channel.close()
        self._remove_folders()

    def exit_code(self) -> int | None:
        """How the worker process ended (a negative signal number, or its exit status), closing it."""
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self.close()
        return code

    def _remove_folders(self) -> None:
        if self.cgroup is not None:
            self.cgroup.give_back(lambda: reap(self.killed))
            self.cgroup = None
        reap(self.killed)
        shutil.rmtree(self.home, ignore_errors=True)

    def _command(self, layout: Layout, control: int | None = None) -> tuple[list[str], Path]:
        """The worker's command line, and its scratch folder as the worker sees it."""
        for name in ("grader", "support", "work"):
            (self.home / name).mkdir()
        inside.write_files(self.home / "grader")
        for module in layout.support_modules:
            shutil.copy2(module, self.home / "support" / module.name)
        shutil.copytree(layout.submission, self.home / "submission", symlinks=True)
        strong = "bwrap" in self.isolation.layers
        seen = INSIDE if strong else self.home
        work = INSIDE / "home" if strong else self.home / "work"
        config = self._config(layout, seen, work, control)
        entry = "worker" if control is None else "zygote_loop"
        start = f"import sys; sys.path.insert(0, {str(seen / 'grader')!r}); import {entry}; {entry}.main()"
        command = [sys.executable, "-S", "-s", "-P", "-B", "-c", start, json.dumps(config)]
        if self.uid is not None:
            chown_tree(self.home, self.uid)
            command = ["setpriv", *setpriv_args(self.uid), *command]
        if strong:
            command = bwrap_args(layout, self.home, self.limits) + command
        if self.cgroup is not None:  # join the cgroup before anything of the worker's starts
            join = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
            command = ["/bin/sh", "-c", join, "sh", *self.cgroup.procs_files, "--", *command]
        return command, work

    def _config(self, layout: Layout, seen: Path, work: Path, control: int | None) -> dict:
        """What the worker is told on its command line (:func:`inside.worker.start` reads it);
        ``seen`` is its folder as it sees it."""
        strong = "bwrap" in self.isolation.layers
        grader, support, submission = (seen / n for n in ("grader", "support", "submission"))
        as_root = self.uid is None and os.geteuid() == 0  # owns root's files, though without capabilities
        landlock = "landlock" in self.isolation.layers  # the only layer that reads "read"
        readable = [*worker_reads(as_root), *layout.readonly_paths, grader, support, submission] if landlock else []
        return {
            "path": [str(submission), str(support)],
            "work": str(work),
            "site": site.getsitepackages(),  # Python starts with -S: see inside/worker.py's start
            "limits": self.limits.rlimits(),
            "landlock": landlock,
            "read": [str(p) for p in [*readable, Path("/dev/urandom"), Path("/dev/zero")]],
            "write": [str(work), "/dev/null", *(["/tmp"] if strong else [])],
            "drop_capabilities": as_root,
            # where nothing counts its processes (no cgroup, no private uid, and as root, for whom
            # RLIMIT_NPROC does not count) or kills them all when it ends (nor bubblewrap's pid
            # namespace), a worker starts none
            "no_processes": self.cgroup is None and self.uid is None and (os.geteuid() == 0 or not strong),
            "pid_namespace": strong,  # bubblewrap's: no process outside the sandbox has a pid there
            **({} if control is None else {"control": control}),  # a zygote's (isolation/zygote.py)
        }


def bwrap_args(layout: Layout, host_home: Path, limits: WorkerLimits) -> list[str]:
    """bubblewrap's arguments: read-only system and worker files, size-capped tmpfs to write in."""
    disk = str(limits.disk_mb << 20)
    command = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
               "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev"]
    if os.geteuid() != 0:  # as root the private uid does the job, and setpriv needs the host's uids
        command += ["--unshare-user", "--disable-userns"]
    readonly = outermost([*(Path(d) for d in SYSTEM_DIRS), *runtime(), *layout.readonly_paths])
    for folder in ("/tmp", str(INSIDE / "home")):  # writable, only disk_mb each, in memory; first, so
        command += ["--perms", "1777", "--size", disk, "--tmpfs", folder]  # binds below /tmp stay seen
    for parent in sorted({a for p in [*readonly, INSIDE / "home"] for a in p.parents if a != Path("/")}):
        command += ["--perms", "0755", "--dir", str(parent)]  # bwrap would make them 0700
    for path in readonly:
        command += ["--ro-bind", str(path), str(path)]
    for name in ("grader", "support", "submission"):
        command += ["--ro-bind", str(host_home / name), str(INSIDE / name)]
    return command + ["--chdir", str(INSIDE / "home"), "--"]


def environment(layout: Layout, work: Path) -> dict[str, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work), "LANG": "C.UTF-8",
           "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}
    env.update(layout.env)
    return env


def setpriv_args(uid: int) -> list[str]:
    return [f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
            "--no-new-privs", "--"]


def chown_tree(root: Path, uid: int) -> None:
    for current, folders, files in os.walk(root):
        for name in [".", *folders, *files]:
            os.lchown(os.path.join(current, name), uid, uid)


def sandbox_uid(slot: int = 0) -> int:
    """One of the two private uids of this grader process's workers (``slot`` 0 or 1: the worker
    serving and the one a :class:`~autograder.isolation.standby.Standby` boots), unique while the
    grader lives."""
    return SANDBOX_UIDS.start + 2 * os.getpid() + slot
