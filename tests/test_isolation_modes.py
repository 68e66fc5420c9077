"""Official grading in every isolation mode this machine can make, tried as an attacker would.

Each mode runs ``python -m autograder grade`` on an honest submission and an attacker (exercise
1 only) the way a real machine of that kind would: as root, as root without
``CAP_SYS_ADMIN`` (Docker's default) or without ``CAP_SETUID``/``CAP_SETGID``, as an
unprivileged user, and as an unprivileged user without bubblewrap. In every mode grading
either refuses with status 3, or the honest submission scores full marks and the attacker
reads nothing of the solutions, the suites or the other submission, writes nothing into the
course or the output folder, and reaches no TCP socket. The tests run as root (as CI does):
they make the user and the namespaces they need.
"""

import csv
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

USER = "autograder-tester"
EXERCISE = "ex1_merge_tracing"

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.root, pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("capsh"),
                                 reason="simulating the modes needs root and capsh (libcap2-bin)")]

ATTACK = '''

def get_pair_counts(ids):
    import glob, socket
    loot = []
    # the other student's work first: feedback is cut at limits.feedback_chars, and the loot is long
    patterns = ["/tmp/**/honest_marker.py", {solutions!r} + "/*.py", {suites!r} + "/*.py", {out!r} + "/**/*"]
    for pattern in patterns:
        for path in glob.glob(pattern, recursive=True):
            try:
                loot.append(path + ": " + repr(open(path, "rb").read(20)))
            except OSError:
                pass
    for folder in ({root!r}, {out!r}):
        try:
            open(folder + "/PWNED", "w").write("x")
            loot.append("wrote " + folder)
        except OSError:
            pass
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=1)
        loot.append("network")
    except OSError:
        pass
    if loot:
        raise RuntimeError("LEAKED " + repr(loot))
    return {{}}
'''


def ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
        return pwd.getpwnam(USER)


def as_user(hide_bwrap: bool) -> list[str]:
    """A command prefix: a private mount namespace where the user can reach Python and the course
    (a laptop installs both where its user can read them), then drop to the user."""
    user = ensure_user()
    needed = [Path(sys.base_prefix), Path(sys.prefix), ROOT]
    closed = sorted({next(a for a in reversed(p.parents) if a != Path("/") and not os.stat(a).st_mode & 0o001)
                     for p in needed if any(not os.stat(a).st_mode & 0o001 for a in p.parents if a != Path("/"))})
    lines = ["set -e", "mount --make-rprivate /"]
    for index, folder in enumerate(closed):  # hide a closed folder behind an open one, keep what is needed
        hold = f"/tmp/.autograder-hold-{os.getpid()}-{index}"
        lines += [f"mkdir -p {hold}", f"mount --bind {folder} {hold}", f"mount -t tmpfs -o mode=0755 none {folder}"]
        for path in needed:
            if path.is_relative_to(folder):
                inner = path.relative_to(folder)
                lines += [f"mkdir -p {folder / inner}", f"mount --bind {hold}/{inner} {folder / inner}"]
    if hide_bwrap and shutil.which("bwrap"):
        lines.append(f"mount --bind /dev/null {shutil.which('bwrap')}")
    lines.append(f'exec setpriv --reuid={user.pw_uid} --regid={user.pw_gid} --init-groups -- "$@"')
    return ["unshare", "--mount", "sh", "-c", "\n".join(lines), "sh"]


MODES = {
    "root": lambda: [],
    "root without CAP_SYS_ADMIN": lambda: ["capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$@"', "sh"],
    "root without CAP_SETUID": lambda: ["capsh", "--drop=cap_setuid,cap_setgid", "--", "-c", 'exec "$@"', "sh"],
    "unprivileged user": lambda: as_user(hide_bwrap=False),
    "unprivileged user without bwrap": lambda: as_user(hide_bwrap=True),
}


def grade_attack(work: Path, prefix: list[str], env: dict[str, str], options: list[str]) -> tuple[int, str, Path]:
    """Grade an honest submission and the attacker in ``work``; return the exit status, what was said
    and the output folder."""
    work.chmod(0o755)
    honest, attacker, out = work / "honest" / "exercises", work / "attacker" / "exercises", work / "out"
    for package in (honest, attacker):
        shutil.copytree(ROOT / "solutions", package, ignore=shutil.ignore_patterns("__pycache__"))
    (honest / "honest_marker.py").write_text("SECRET = 'the honest student's work'\n")
    out.mkdir()
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0)
        source = (ROOT / "solutions" / f"{EXERCISE}.py").read_text()
        (attacker / f"{EXERCISE}.py").write_text(source + ATTACK.format(
            solutions=str(ROOT / "solutions"), suites=str(ROOT / "suites"), out=str(out), root=str(ROOT),
            port=server.getsockname()[1]))
        for path in [work, *work.rglob("*")]:
            path.chmod(0o777 if path == out else 0o755 if path.is_dir() else 0o644)
        env = {**os.environ, "COLUMNS": "200", "HYPOTHESIS_STORAGE_DIRECTORY": str(out / ".hypothesis"), **env}
        run = subprocess.run([*prefix, sys.executable, "-m", "autograder", *options, "grade", str(honest.parent),
                              str(attacker.parent), "--out", str(out), "--exercise", EXERCISE, "--jobs", "2"],
                             cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
        try:
            server.accept()[0].close()
            said = "the attacker connected to 127.0.0.1\n"
        except BlockingIOError:
            said = ""
    return run.returncode, said + run.stdout[-3000:] + run.stderr[-3000:], out


@pytest.fixture
def work():
    folder = Path(tempfile.mkdtemp(prefix="autograder-modes-"))
    yield folder
    (ROOT / "PWNED").unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(MODES))
def test_grading_holds_or_refuses(mode, work):
    code, said, out = grade_attack(work, MODES[mode](), {}, [])
    print(f"{mode}: exit {code}\n{said}")
    assert "attacker connected" not in said
    assert not (ROOT / "PWNED").exists() and not (out / "PWNED").exists()
    if code == 3:
        assert "refusing to grade" in said
        return
    assert code == 0, said
    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert float(rows["honest"][EXERCISE]) == 20, said
    feedback = (out / "attacker" / "feedback.md").read_text()
    assert "LEAKED" not in feedback
    assert "Student code ran in a sandbox" in feedback


@pytest.mark.slow
def test_the_attack_is_real_without_a_sandbox(work):
    """The same attacker, graded with every layer off and the override: it reads and writes what the
    grader can, so the test above can fail. (Its sockets stay closed: the worker's seccomp filter
    applies in every mode.)"""
    code, said, out = grade_attack(work, [], {"AUTOGRADER_LAYERS": ""}, ["--unsafe-no-sandbox"])
    assert code == 0, said
    feedback = (out / "attacker" / "feedback.md").read_text()
    assert "LEAKED" in feedback and "honest_marker.py" in feedback and "UNSAFE" in feedback
    assert (out / "PWNED").exists() and "attacker connected" not in said
