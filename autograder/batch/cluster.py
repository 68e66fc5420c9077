"""Grading a batch on a Dask distributed cluster (``grade --cluster tls://HOST:8786 --cluster-certs DIR``).

Each submission is one task. A worker grades it as ``grade --jobs`` does on one machine: its own
sandbox, its own copy of the course (checked by digest), the same fail-closed rules, in a grader
process per worker thread (a :class:`~autograder.batch.grader.GraderPool` per course digest). The
client stages the submissions, keeps the gradebook and writes every report, and runs no student
code. Why it stays safe and complete: docs/cluster.md.
"""

from __future__ import annotations

import atexit
import os
import socket
import ssl
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..config import Course, load_course
from ..engine.digest import course_digest
from ..errors import GraderError
from ..intake.staging import Staged
from ..isolation import IsolationRefused, isolation, require_isolation
from ..results import Grade
from .canary import run_canary
from .cluster_tls import client_security
from .grader import WHOLE, Graded, GraderPool, Part


@dataclass
class Cluster:
    """A Dask client whose workers have shown they grade the course, and what each task carries."""

    client: Any  # distributed.Client
    digest: str  # the client's course digest, computed once per batch
    unsafe: bool  # --unsafe-no-sandbox, passed on to every worker
    isolation: str  # the workers' sandbox layers ("bwrap + landlock + uid + cgroup"), for the gradebook

    def grade(self, course: Course, name: str, staged: Staged, folder: Path, part: Part = WHOLE) -> Graded:
        """Grade ``staged`` (the exercises of ``part``, which is never split on a cluster) on the
        cluster and write its reports into ``folder``, as :class:`~autograder.batch.grader.GraderPool`
        does locally."""
        packed = {"name": name, "files": pack(staged.root), "notes": staged.notes}
        task = self.client.submit(grade_on_worker, str(course.file), self.digest, self.unsafe, packed, part.exercises,
                                  course.language, pure=False,
                                  key=task_key(self.digest, name, staged, part.exercises, course.language))
        try:
            reports, grade, seconds, problem = task.result()
        except Exception as error:  # the worker refused, or died as often as Dask allows
            return None, 0.0, f"the cluster could not grade it: {type(error).__name__}: {error}"
        folder.mkdir(parents=True, exist_ok=True)
        for file, text in reports.items():
            (folder / Path(file).name).write_text(text, encoding="utf-8")
        return (None, seconds, problem) if grade is None else (Grade.from_plain(grade), seconds, "")

    def close(self) -> None:
        self.client.close()


def connect(address: str, course: Course, unsafe: bool, certificates: Path | None = None,
            unsafe_tcp: bool = False) -> Cluster:
    """The cluster of the scheduler at ``address``, once every worker has shown it grades this
    course; ``certificates`` is the folder of ``cluster-certs`` (see :mod:`autograder.batch.cluster_tls`)."""
    try:
        from distributed import Client
    except ImportError:
        raise GraderError("--cluster needs Dask distributed: pip install the cluster extra "
                          "(make setup installs it)") from None
    try:
        security = client_security(address, certificates, unsafe_tcp)
        _answers(address)
    except OSError as error:
        raise GraderError(f"no Dask scheduler answers at {address}: {error}") from None
    except ValueError as error:  # distributed's word for an address it cannot parse
        raise GraderError(f"--cluster {address!r} is not a scheduler address like tls://HOST:8786: {error}") from None
    try:
        client = Client(address, security=security, timeout="20s")
    except OSError as error:  # something listens there, but would not speak with this client
        said = f" Dask said: {error}" if str(error) else ""
        raise GraderError(f"the scheduler at {address} dropped this client: {_likely_cause(address)}.{said}") from None
    digest = course_digest(course)
    answers = client.run(worker_problem, str(course.file), digest, unsafe)
    problems = {worker: answer for worker, answer in sorted(answers.items()) if answer}
    if not answers or problems:
        client.close()
        why = "; ".join(f"{worker}: {problem}" for worker, (_, problem) in problems.items()) or "it has no workers"
        refusal = IsolationRefused if any(sandbox for sandbox, _ in problems.values()) else GraderError
        raise refusal(f"the cluster at {address} cannot grade this course: {why}")
    layers = sorted(set(client.run(worker_isolation).values()))
    return Cluster(client, digest, unsafe, f"Dask workers at {address}: {' or '.join(layers)}")


def _answers(address: str) -> None:
    """Raise OSError at once if nothing listens at a ``tcp://`` or ``tls://`` ``address``: Dask's
    client would retry a refused connection for its whole timeout (20 s) before saying so.
    Anything that does answer is left to the client."""
    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, where = parse_address(address)
    if scheme in ("tcp", "tls"):
        with socket.create_connection(parse_host_port(where), timeout=20):
            pass


def _likely_cause(address: str) -> str:
    """Why a scheduler that listens at ``address`` would drop this client, as far as one TLS
    handshake tells: the address's scheme is not what the scheduler speaks, or it does not take
    the certificates given."""
    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, where = parse_address(address)
    tls = _speaks_tls(*parse_host_port(where))
    if scheme == "tcp" and tls:
        return (f"it speaks TLS, as a scheduler started with --protocol tls does: use tls://{where} with "
                "--cluster-certs DIR, the folder its certificates came from")
    if scheme == "tcp":
        return "it may be no Dask scheduler, or one of another Dask version than this one"
    if not tls:
        return (f"it does not speak TLS, as a scheduler started without --protocol tls does not: start it with "
                f"--protocol tls and the certificates of `cluster-certs`, or use tcp://{where} on this machine")
    return "it does not take the certificates of --cluster-certs: give the folder its own certificates came from"


def _speaks_tls(host: str, port: int) -> bool:
    """Whether a TLS handshake with ``host:port`` goes through (the certificate unchecked: this
    only asks what the other side speaks)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=10) as raw, context.wrap_socket(raw, server_hostname=host):
            return True
    except ssl.SSLError as error:  # an alert from a server that wants a certificate: TLS all the same
        return "CERTIFICATE_REQUIRED" in str(error) or "HANDSHAKE_FAILURE" in str(error)
    except OSError:
        return False


def worker_isolation() -> str:
    """On a worker: its sandbox's layers."""
    return isolation().describe()


def worker_problem(course_file: str, digest: str, unsafe: bool) -> tuple[bool, str] | None:
    """On a worker: None if it grades ``course_file`` as the client does, otherwise whether its
    sandbox is what refuses (the batch then stops as a local refusal does: exit status 3) and why."""
    try:
        _graders(_worker_course(course_file, digest), digest, unsafe)  # the sandbox's check and its canary
    except IsolationRefused as error:
        return True, str(error)
    except (GraderError, OSError) as error:
        return False, str(error)
    return None


def _worker_course(course_file: str, digest: str) -> Course:
    course = load_course(Path(os.environ.get("AUTOGRADER_COURSE") or course_file))
    if course_digest(course) != digest:
        raise GraderError(f"the course at {course.file} on {socket.gethostname()} differs from the client's "
                          "(another commit, or edited files): its digest does not match")
    return course


def pack(root: Path) -> dict[str, bytes]:
    """The files under a staged submission's ``root``, by relative POSIX path."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def unpack(files: dict[str, bytes], root: Path) -> None:
    """Write :func:`pack`'s ``files`` under ``root``; a path that would leave it is an error."""
    for name, data in files.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts:
            raise GraderError(f"a packed submission names a file outside its folder: {name!r}")
        target = root.joinpath(*relative.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def grade_on_worker(course_file: str, digest: str, unsafe: bool, packed: dict, exercises: list[str] | None,
                    language: str = "en") -> tuple[dict[str, str], dict | None, float, str]:
    """A Dask task: grade one packed submission here (``name``, ``files`` as :func:`pack` made them,
    ``notes``), its feedback in ``language``; return its report files, its grade as plain data
    (None if it failed), seconds and problem."""
    name = packed["name"]
    course = _worker_course(course_file, digest).model_copy(update={"language": language})
    graders = _graders(course, digest, unsafe)
    with tempfile.TemporaryDirectory(prefix="autograder-cluster-") as scratch:
        root, folder = Path(scratch) / "submission", Path(scratch) / "reports"
        unpack(packed["files"], root)
        grade, seconds, problem = graders.grade(course, name, Staged(name, root, "", packed["notes"]), folder,
                                                Part(exercises))
        reports = {path.name: path.read_text(encoding="utf-8", errors="replace")
                   for path in sorted(folder.iterdir()) if path.is_file()}
    return reports, None if grade is None else grade.to_plain(), seconds, problem


def task_key(digest: str, name: str, staged: Staged, exercises: list[str] | None, language: str = "en") -> str:
    """The Dask key of a grading: two clients on one scheduler share a result only if the same
    course grades the same files, for the same exercises, under the same name, in one language."""
    return f"grade-{name}-{digest[:16]}-{staged.digest[:16]}-{'+'.join(exercises or ['all'])}" + \
        ("" if language == "en" else f"-{language}")


def _graders(course: Course, digest: str, unsafe: bool) -> GraderPool:
    """This worker's grader processes for the course with ``digest``: they grade its tasks, a
    process per worker thread, until the worker stops. A course edited between batches gets
    processes of its own; those of the old one wait idle, never closed under a running task.
    Before its first task of a course, the worker checks its sandbox and runs the canary (as
    at the batch's start, for a worker that joined since): a refusal fails the task."""
    holds = require_isolation(unsafe).holds  # checked on every task
    key = (digest, course.language)  # a grader process speaks the language it was started in
    with _POOLS_LOCK:
        if key not in _POOLS:
            if holds and not any(known == digest for known, _ in _POOLS):
                run_canary(course)
            _POOLS[key] = GraderPool()
            atexit.register(_POOLS[key].__exit__)
        return _POOLS[key]


_POOLS: dict[tuple[str, str], GraderPool] = {}
_POOLS_LOCK = threading.Lock()
