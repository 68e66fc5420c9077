"""Who may join a grading cluster: mutual TLS, and plain TCP only when the instructor insists.

``grade --cluster`` speaks TLS both ways: the scheduler, every worker and the client present a
certificate that ``python -m autograder cluster-certs --out DIR`` makes, and accept only peers
that command's CA signed (its key is thrown away once it has signed). A ``tcp://`` scheduler is
refused, loopback included, unless ``--unsafe-cluster-tcp``. Why: docs/cluster.md, "How it
stays safe and complete".
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

from ..errors import GraderError

CA, CERTIFICATE, KEY = "ca.pem", "cluster.pem", "cluster-key.pem"
DAYS = 400  # a certificate outlives a course's term


def make_certificates(out: Path, days: int = DAYS) -> None:
    """Write a new CA's certificate and the cluster's certificate and key into ``out``, a new
    or empty folder, made private to its owner."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise GraderError("cluster-certs needs cryptography: pip install the cluster extra "
                          "(make setup installs it)") from None
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise GraderError(f"{out} is not a new or empty folder: the certificates go into one of their own")
    now = datetime.datetime.now(datetime.UTC)

    def named(common_name: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])

    def signed(subject: x509.Name, key: Any, issuer: x509.Name, signer: Any, ca: bool) -> x509.Certificate:
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True))
        if not ca:
            usage = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            builder = builder.add_extension(x509.ExtendedKeyUsage(usage), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = named("autograder cluster CA")
    ca = signed(ca_name, ca_key, ca_name, ca_key, ca=True)
    certificate = signed(named("autograder cluster"), key, ca_name, ca_key, ca=False)
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(out, 0o700)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    for name, data in ((CA, ca.public_bytes(serialization.Encoding.PEM)),
                       (CERTIFICATE, certificate.public_bytes(serialization.Encoding.PEM)), (KEY, private)):
        with open(os.open(out / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
            file.write(data)


def security(folder: Path | str) -> Any:
    """distributed's ``Security`` for the client, the scheduler or a worker: the certificates
    in ``folder`` for every role, and TLS required."""
    from distributed import Security

    folder = Path(folder)
    missing = [name for name in (CA, CERTIFICATE, KEY) if not (folder / name).is_file()]
    if missing:
        raise GraderError(f"{folder} lacks {', '.join(missing)}: make the cluster's certificates with "
                          f"`python -m autograder cluster-certs --out {folder}`")
    ca, certificate, key = (str((folder / name).resolve()) for name in (CA, CERTIFICATE, KEY))
    return Security(require_encryption=True, tls_ca_file=ca,
                    **{f"tls_{role}_{part}": path for role in ("client", "scheduler", "worker")
                       for part, path in (("cert", certificate), ("key", key))})


def client_security(address: str, certificates: Path | None, unsafe_tcp: bool) -> Any:
    """The ``Security`` a client of the scheduler at ``address`` uses (None for plain TCP), or a
    :class:`~autograder.errors.GraderError` saying why that address is refused."""
    from distributed.comm.addressing import parse_address

    scheme, _where = parse_address(address)  # ValueError: not an address
    if scheme == "tls":
        if certificates is None:
            raise GraderError(f"--cluster {address} needs --cluster-certs DIR (made by `python -m autograder "
                              "cluster-certs --out DIR`, the folder the scheduler and workers use)")
        return security(certificates)
    if scheme != "tcp":
        raise GraderError(f"--cluster {address}: grading speaks tls:// (or tcp:// with --unsafe-cluster-tcp), "
                          f"not {scheme}://")
    if certificates is not None:
        raise GraderError(f"--cluster {address}: --cluster-certs needs a tls:// address")
    if not unsafe_tcp:
        raise GraderError(f"--cluster {address}: refusing plain TCP: a tcp:// scheduler asks for no credentials, so "
                          "anyone who reaches it (on loopback, any user of this machine) could run code in the "
                          "graders. Use tls:// with --cluster-certs (see `python -m autograder cluster-certs`), "
                          "or pass --unsafe-cluster-tcp")
    return None

