"""``cluster-certs --out CERTS``: the certificates of a grading cluster's mutual TLS, which the
scheduler, the workers and ``grade --cluster`` use (:mod:`autograder.batch.cluster_tls`).

Whoever reads the private key joins the cluster, so it is never written where git would pick
it up: a folder inside a git work tree is refused unless git ignores it (this repository's
``.gitignore`` ignores ``certs/``, the folder the documentation names)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from rich.console import Console

from ..batch.cluster_tls import KEY, make_certificates
from ..config import Course
from ..errors import GraderError


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    refuse_untracked_secrets(args.out / KEY)
    make_certificates(args.out)
    flags = f"--tls-ca-file {args.out}/ca.pem --tls-cert {args.out}/cluster.pem --tls-key {args.out}/cluster-key.pem"
    console.print(f"Cluster certificates written to [bold]{args.out}[/]: whoever can read them joins the cluster. "
                  f"Start the scheduler with --protocol tls {flags}, each worker with {flags}, and grade with "
                  f"--cluster tls://HOST:8786 --cluster-certs {args.out}", highlight=False)
    return 0


def refuse_untracked_secrets(secret: Path) -> None:
    """Refuse to write ``secret`` inside a git work tree that does not ignore it: a ``git add .``
    would commit it. Where there is no git, or no work tree, nothing could."""
    secret = secret.resolve()
    where = next(folder for folder in secret.parents if folder.is_dir())

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=60)

    try:
        top = git("rev-parse", "--show-toplevel")
        if top.returncode != 0:
            return
        ignored = git("check-ignore", "-q", str(secret))
    except (OSError, subprocess.TimeoutExpired):
        return
    if ignored.returncode != 0:
        folder = secret.parent.relative_to(Path(top.stdout.strip()).resolve()).as_posix()
        raise GraderError(f"{secret.parent} is inside the git work tree {top.stdout.strip()}, which does not ignore "
                          f"it: its private key {secret.name} could be committed. Choose a folder outside the work "
                          f"tree, or add /{folder}/ to its .gitignore first")
