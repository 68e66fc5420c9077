"""Workers forked from a zygote: one sandboxed worker per exercise that forks a child per property.

Where the sandbox sees every process a worker starts and Landlock can confine a child further
(:func:`forks`), a :class:`Zygote` imports the standard-library modules the submission imports
and forks a :class:`Child` per property (its loop is :mod:`autograder.isolation.inside.zygote_loop`).
Student code never runs in the zygote: each child imports the submission itself. Why:
docs/architecture.md, "A property's worker: forked from a zygote, or booted ahead"; what keeps
the children apart: docs/security.md, "A zygote's children".
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from pathlib import Path
from typing import BinaryIO

from ..errors import SandboxFailure
from . import cgroup as cgroups
from .channel import Channel
from .inside import codec
from .layers import Isolation
from .layout import Layout
from .limits import WorkerLimits
from .process import Worker
from .reaping import DYING, Strays, owner, pids


def forks(found: Isolation) -> bool:
    """Whether workers can be forked from a zygote under these layers: Landlock confines each
    child to its own folder; the cgroup or the private uid lists every process it started; and
    bubblewrap's read-only binds keep the files children share from being changed (without it,
    they are the worker's uid's own, whose mode bits and extended attributes Landlock leaves
    free to change, and which all of a zygote's children would see)."""
    return {"landlock", "bwrap"} <= found.layers and bool({"cgroup", "uid"} & found.layers)


IMPORTS = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([^#;\n]+))", re.MULTILINE)


def preloads(submission: Path, module: str) -> list[str] | None:
    """The standard-library modules that the files of ``module``'s package import (a zygote
    imports them, once for all its children); None if the submission has a file or folder named
    like a standard-library module, which would stand in for it in a fresh worker. Read from the
    lines that start with ``import`` or ``from``, docstrings' too: a module named in excess is
    only imported for nothing, cheaper than an ``ast`` walk of every file."""
    if any(entry.stem in sys.stdlib_module_names for entry in submission.iterdir()):
        return None
    found: set[str] = set()
    for path in package_files(submission, module):
        try:
            source = path.read_bytes()
        except OSError:
            continue
        for match in IMPORTS.finditer(source):
            names = [match[1]] if match[1] else [name.split()[0] for name in match[2].split(b",") if name.split()]
            found.update(name.decode() for name in names
                         if name.split(b".")[0].decode(errors="replace") in sys.stdlib_module_names)
    return sorted(found)


def package_files(submission: Path, module: str) -> list[Path]:
    """The Python files of ``module``'s package in the submission."""
    return sorted((submission / module.rpartition(".")[0].replace(".", "/")).glob("*.py"))


COMPILED_BYTES = 1 << 20  # a package larger than this (its sources) is compiled by each child instead


def sources(submission: Path, module: str) -> list[str]:
    """The files of ``module``'s package that a zygote compiles for its children (relative to
    the submission), none if they are larger than ``COMPILED_BYTES`` in all or Python keeps
    no compiled code."""
    files = package_files(submission, module)
    if sys.implementation.cache_tag is None or sum(f.stat().st_size for f in files) > COMPILED_BYTES:
        return []
    return [str(f.relative_to(submission)) for f in files]


class Zygote:
    """A sandboxed worker that imported ``modules`` (trusted: the standard library's) and forks
    a child per property on request. It also compiles the submission's ``files`` (relative
    paths), and the grader writes the code it answers beside them, in the zygote's own copy of
    the submission, which its children see read-only: each child's imports then read the code
    (Python checks it against the source's hash) instead of compiling it again in every child.
    Raises :class:`~autograder.errors.SandboxFailure` if it cannot start."""

    def __init__(self, layout: Layout, limits: WorkerLimits, found: Isolation, modules: list[str],
                 files: list[str]):
        self.control, theirs = socket.socketpair()
        try:
            self.worker = Worker(layout, limits, found, control=theirs.fileno())
        except BaseException:
            self.control.close()
            raise
        finally:
            theirs.close()
        try:
            self.worker.wait_ready(limits.call_seconds)
            self.spare = self._processes()  # the zygote's own: every other process is a child's
            self._write_compiled(self._ask({"op": "zygote", "modules": modules, "compile": files},
                                           limits.call_seconds), files)
            self.worker.strays.active = False  # its children are not strays: end() kills what each one started
            self._kill_strays()  # any process an import started (antigravity's browser, say)
        except BaseException:
            self.close()
            raise

    def fork(self) -> Child:
        """A new child, with two pipes of its own: a round trip over a pair of pipes costs less
        CPU than over a socket pair (a socket's reader wakes its writer's waiters too)."""
        (inbox, to_child), (from_child, outbox) = os.pipe(), os.pipe()
        ours = [open(to_child, "wb", buffering=0), open(from_child, "rb", buffering=0)]
        try:
            socket.send_fds(self.control, [b"f"], [inbox, outbox])
            self._ask({"op": "fork"}, self.worker.limits.call_seconds)
        except BaseException:
            for end in ours:
                end.close()
            raise
        finally:
            os.close(inbox)
            os.close(outbox)
        child = Child(self, *ours)
        born = [pid for pid in self._processes() if pid not in self.spare]
        if len(born) == 1:  # the child, which answers its requests (what else there was, end() killed)
            child.channel.watch(born[0])
        return child

    def end_later(self) -> None:
        """Kill the child, and everything else but the zygote; the zygote collects it and
        removes what it left at its next request (a fork ends the child before it), so that
        ending a child costs no round trip of its own. Everything is killed before the zygote
        looks at what the child left, so that nothing it started can leave a file after that look."""
        self._kill_strays()

    def end(self) -> int | None:
        """End the child now (:meth:`end_later`, then the zygote's ``end``): its exit code (as
        :meth:`Worker.exit_code`), or None if the zygote could not say."""
        self.end_later()
        try:
            status = self._ask({"op": "end"}, self.worker.limits.call_seconds)
        except SandboxFailure:
            status = None
        return os.waitstatus_to_exitcode(status) if type(status) is int else None

    def _write_compiled(self, wire: object, files: list[str]) -> None:
        """Write the code the zygote answered, for the files asked, where Python looks for it.
        What a compromised compiler could have made of the student's files reaches only this
        submission's children, whose imports run them anyway."""
        code = codec.decode(wire, deadline=time.monotonic() + self.worker.limits.call_seconds) if wire else {}
        if type(code) is not dict:
            raise SandboxFailure("sandbox", "the zygote answered no code")
        for name, data in code.items():
            if name not in files or type(data) is not bytes:
                raise SandboxFailure("sandbox", f"the zygote answered code for {str(name)[:200]!r}")
            source = self.worker.home / "submission" / name
            folder = source.parent / "__pycache__"
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                continue  # the submission has a file of that name: its children compile for themselves
            folder.mkdir(mode=0o755, exist_ok=True)
            target = folder / f"{source.stem}.{sys.implementation.cache_tag}.pyc"
            handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            with open(handle, "wb") as out:
                out.write(data)

    @property
    def alive(self) -> bool:
        return not self.worker.closed

    def close(self) -> None:
        self.worker.close()
        self.control.close()

    def _ask(self, request: dict, timeout: float) -> object:
        """The zygote's ``ok`` answer to ``request``; anything else closes it and raises SandboxFailure."""
        if self.worker.closed:
            raise SandboxFailure("sandbox", "the zygote has stopped")
        try:
            answer = json.loads(self.worker.request(codec.dumps(request), timeout))
        except ValueError:
            answer = None
        if type(answer) is not dict or "ok" not in answer:
            self.close()
            raise SandboxFailure("sandbox", f"the zygote did not {request['op']}: {str(answer)[:2000]}")
        return answer["ok"]

    def _kill_strays(self) -> None:
        """Kill every process of the sandbox but the zygote's own, until they are gone; if some
        outlast the patience, the zygote goes too, and with it everything in its sandbox."""
        if self.worker.closed:
            return
        strays = lambda: [p for p in self._processes() if p not in self.spare]  # noqa: E731
        DYING.update(cgroups.kill_until_gone(strays))
        if strays():
            self.close()

    def _processes(self) -> list[int]:
        """Every process of the zygote's sandbox: its cgroup's, or its private uid's."""
        worker = self.worker
        if worker.cgroup is not None:
            return worker.cgroup.pids()
        return [pid for pid in pids() if owner(pid, worker.uid) == worker.uid]


class Child:
    """One property's worker, forked from a :class:`Zygote`: a worker to its session, as a fresh
    :class:`~autograder.isolation.process.Worker` is, talked to over pipes of its own (a
    :class:`~autograder.isolation.channel.Channel`), so nothing a child left unread reaches the
    next one. Closing it kills it (:meth:`Zygote.end_later`); asking how it ended ends it at once."""

    def __init__(self, zygote: Zygote, to_child: BinaryIO, from_child: BinaryIO):
        self.zygote = zygote
        self.limits, self.uid = zygote.worker.limits, zygote.worker.uid
        self.killed: set[int] = set()
        self.closed = False
        self.code: int | None = None
        self.channel = Channel(to_child, from_child, self.limits, Strays(zygote.worker.cgroup), self)

    def request(self, payload: bytes, timeout: float) -> bytes:
        """The child's answer to ``payload`` (:meth:`Channel.request`)."""
        return self.request_many([payload], [timeout])[0]

    def request_many(self, payloads: list[bytes], timeouts: list[float], within: float | None = None) -> list[bytes]:
        """The child's answers to a batch (:meth:`Channel.request_many`)."""
        return self.channel.request_many(payloads, timeouts, within)

    def greeted(self) -> None:
        pass  # its processes are the zygote's to collect

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.zygote.end_later()
        self.channel.close()
        DYING.update(self.killed)  # collected by a later close

    def exit_code(self) -> int | None:
        if not self.closed:
            self.code = self.zygote.end()
            self.close()
        return self.code
