"""``cluster-certs --out CERTS``: the certificates of a grading cluster's mutual TLS, which the
scheduler, the workers and ``grade --cluster`` use (:mod:`autograder.batch.cluster_tls`)."""

from __future__ import annotations

import argparse

from rich.console import Console

from ..batch.cluster_tls import make_certificates
from ..config import Course


def run(course: Course, args: argparse.Namespace, console: Console) -> int:
    make_certificates(args.out)
    flags = f"--tls-ca-file {args.out}/ca.pem --tls-cert {args.out}/cluster.pem --tls-key {args.out}/cluster-key.pem"
    console.print(f"Cluster certificates written to [bold]{args.out}[/]: whoever can read them joins the cluster. "
                  f"Start the scheduler with --protocol tls {flags}, each worker with {flags}, and grade with "
                  f"--cluster tls://HOST:8786 --cluster-certs {args.out}", highlight=False)
    return 0
