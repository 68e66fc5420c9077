"""``grade --cluster``: a real Dask scheduler and two workers on 127.0.0.1, speaking mutual TLS
with the certificates of ``cluster-certs``, grade a batch of the toy course; one worker is
killed while it grades, and every grade still comes back, the same as a local ``--jobs 1``
run's. A client without the certificate is refused, and so is plain TCP, loopback included, unless
the instructor insists."""

import importlib.util
import json
import os
import signal
import socket
import sqlite3
import ssl
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.isolation import isolation
from tests.conftest import ROOT, autograder

pytestmark = [pytest.mark.sandbox, pytest.mark.slow,  # found, not imported: collecting needs no Dask
              pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                 reason="the cluster extra (make setup installs it)")]

TOY = ROOT / "tests" / "fixtures" / "toy_course"
DASK = str(Path(sys.executable).with_name("dask"))
ANSWERS = {  # six submissions: full marks, zero, the public half, wrong ones, a slow one and a crash
    "right": (TOY / "answers" / "ex_sum.py").read_text(),
    "stub": (TOY / "toy" / "ex_sum.py").read_text(),
    "half": "def add_all(numbers):\n    return sum(numbers)\n",
    "slow_wrong": "import time\n\ndef add_all(numbers):\n    time.sleep(0.05)\n    return sum(numbers[1:])\n",
    "off_by_one": "def add_all(numbers):\n    if not isinstance(numbers, list):\n        raise TypeError('no')\n"
                  "    return sum(numbers) + (len(numbers) > 3)\n",
    "exits": "import os\n\ndef add_all(numbers):\n    os._exit(0)\n",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> None:
    """Wait until something listens on 127.0.0.1:``port`` (a scheduler just started)."""
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on port {port}"
            time.sleep(0.2)


def start(*args: str, log: Path, **extra_env: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AUTOGRADER_COURSE": str(TOY / "course.yaml"),  # the worker's copy
           **extra_env}
    return subprocess.Popen([DASK, *args], stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)  # its own process group: a kill takes its graders too


def descendants(pid: int) -> list[str]:
    """The command lines of every process below ``pid``."""
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (ValueError, OSError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(commands.get(child, ""))
            todo.append(child)
    return found


def graded_tests(out: Path, name: str) -> str:
    return json.dumps(json.loads((out / name / "results.json").read_text())["tests"], sort_keys=True)


@pytest.fixture
def batch(tmp_path):
    for name, source in ANSWERS.items():
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "ex_sum.py").write_text(source)
    return tmp_path, sorted((tmp_path / "subs").iterdir())


def make_certs(folder: Path) -> list[str]:
    """``cluster-certs --out folder``, and the flags that give its certificates to a scheduler or worker."""
    made = autograder("cluster-certs", "--out", str(folder), course=TOY / "course.yaml")
    assert made.returncode == 0, made.stdout + made.stderr
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "cluster-key.pem").stat().st_mode) == 0o600
    return ["--tls-ca-file", str(folder / "ca.pem"), "--tls-cert", str(folder / "cluster.pem"),
            "--tls-key", str(folder / "cluster-key.pem")]


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two workers speaking TLS: its address, the worker to kill, the certificates' folder.
    Their temporary files go to the test's folder: a killed worker leaves its own behind."""
    certs, temporary = tmp_path / "certs", tmp_path / "temporary"
    temporary.mkdir()
    flags = make_certs(certs)
    address = f"tls://127.0.0.1:{free_port()}"
    processes = [start("scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard",
                       "--protocol", "tls", *flags, log=tmp_path / "scheduler.log", TMPDIR=str(temporary))]
    listening(int(address.rsplit(":", 1)[1]))
    for name in ("a", "b"):  # no nanny: a killed worker stays dead
        processes.append(start("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                               "--name", name, *flags, log=tmp_path / f"worker-{name}.log", TMPDIR=str(temporary)))
    yield address, processes[1], certs
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)


def test_a_killed_worker_loses_no_grade_and_grades_match_a_local_run(batch, cluster):
    tmp_path, subs = batch
    address, victim, certs = cluster
    local = autograder("grade", *map(str, subs), "--out", str(tmp_path / "local"), "--jobs", "1",
                       course=TOY / "course.yaml")
    assert local.returncode == 0, local.stdout + local.stderr
    command = [sys.executable, "-m", "autograder", "--course", str(TOY / "course.yaml"), "grade", *map(str, subs),
               "--out", str(tmp_path / "remote"), "--cluster", address, "--cluster-certs", str(certs)]
    remote = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,  # a client
                              env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200",  # with no sandbox:
                                   "AUTOGRADER_LAYERS": ""})  # it runs no student code
    deadline = time.monotonic() + 300
    while not any("autograder.batch.serve" in c for c in descendants(victim.pid)):  # the victim is grading one now
        assert time.monotonic() < deadline and remote.poll() is None, "worker a never started a grading"
        time.sleep(0.05)
    os.killpg(victim.pid, signal.SIGKILL)
    output, _ = remote.communicate(timeout=600)
    assert remote.returncode == 0, output
    for sub in subs:
        assert graded_tests(tmp_path / "remote", sub.name) == graded_tests(tmp_path / "local", sub.name), sub.name
    scores = {line.split(",")[0]: line.split(",")[1]
              for line in (tmp_path / "remote" / "grades.csv").read_text().splitlines()[1:]}
    assert scores == {"exits": "0", "half": "6", "off_by_one": "0", "right": "10", "slow_wrong": "0", "stub": "0"}
    with sqlite3.connect(tmp_path / "remote" / "gradebook.sqlite") as book:  # where each grading ran: the workers'
        where = {row[0] for row in book.execute("SELECT isolation FROM gradings")}
    assert where == {f"Dask workers at {address}: {isolation().describe()}"}, where  # this machine's, all layers
    assert f"Student code ran in the sandboxes of the Dask workers at {address}" in output


def test_a_worker_with_another_course_is_refused(batch, cluster, tmp_path):
    _tmp, subs = batch
    address, _victim, certs = cluster
    edited = tmp_path / "course"
    subprocess.run(["cp", "-r", str(TOY), str(edited)], check=True)
    yaml = edited / "course.yaml"
    yaml.write_text(yaml.read_text().replace("seed: 12345", "seed: 12346"))  # the client's copy differs
    refused = autograder("grade", str(subs[0]), "--out", str(tmp_path / "out"), "--cluster", address,
                         "--cluster-certs", str(certs), course=yaml)
    assert refused.returncode == 2
    assert "cannot grade this course" in refused.stderr and "digest does not match" in refused.stderr
    assert not (tmp_path / "out" / subs[0].name / "results.json").exists()


def test_a_worker_without_a_sandbox_stops_the_batch_as_a_local_refusal_does(batch, tmp_path):
    """Exit status 3, the worker named with why, and nothing graded."""
    tmp_path, subs = batch
    address = f"tcp://127.0.0.1:{free_port()}"
    processes = [start("scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard",
                       log=tmp_path / "scheduler.log")]
    time.sleep(3)
    processes.append(start("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", "bare",
                           log=tmp_path / "worker.log", AUTOGRADER_LAYERS=""))  # this machine without any layer
    try:
        time.sleep(3)
        refused = autograder("grade", str(subs[0]), "--out", str(tmp_path / "out"), "--cluster", address,
                             "--unsafe-cluster-tcp", course=TOY / "course.yaml")
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "cannot grade this course" in refused.stderr and "no sandbox layer" in refused.stderr.lower()
    assert "Traceback" not in refused.stderr
    assert not (tmp_path / "out" / subs[0].name / "results.json").exists()


def test_a_client_without_the_certificate_is_refused(batch, cluster, tmp_path):
    """Neither TLS without a certificate, nor one from another ``cluster-certs``, nor plain TCP
    gets past the handshake; nothing is graded."""
    _tmp, subs = batch
    address, _victim, certs = cluster
    host, port = address.removeprefix("tls://").rsplit(":", 1)
    anonymous = ssl.create_default_context(cafile=certs / "ca.pem")  # trusts the scheduler, shows nothing
    anonymous.check_hostname = False
    with socket.create_connection((host, int(port)), timeout=30) as raw, \
            pytest.raises(ssl.SSLError, match="CERTIFICATE_REQUIRED"), anonymous.wrap_socket(raw) as tls:
        tls.recv(1)  # the scheduler's alert; a write first could meet the closed socket before it
    again = autograder("cluster-certs", "--out", str(certs), course=TOY / "course.yaml")  # never replaced in place
    assert again.returncode == 2 and "is not a new or empty folder" in again.stderr, again.stderr
    make_certs(tmp_path / "other")
    other = autograder("grade", str(subs[0]), "--out", str(tmp_path / "out"), "--cluster", address,
                       "--cluster-certs", str(tmp_path / "other"), course=TOY / "course.yaml")
    assert other.returncode == 2 and "TLS certificate does not match" in " ".join(other.stderr.split()), other.stderr
    plain = autograder("grade", str(subs[0]), "--out", str(tmp_path / "out"), "--cluster",
                       address.replace("tls://", "tcp://"), "--unsafe-cluster-tcp", course=TOY / "course.yaml")
    said = " ".join(plain.stderr.split())  # why, not only "[Errno 104] Connection reset by peer"
    assert plain.returncode == 2 and f"the scheduler at tcp://{host}:{port} dropped this client: it speaks TLS" in said
    assert f"use tls://{host}:{port} with --cluster-certs DIR" in said, said
    for refused in (other, plain):
        assert "Traceback" not in refused.stderr
    assert not (tmp_path / "out" / subs[0].name / "results.json").exists()


def test_plain_tcp_is_refused_on_loopback_too_unless_the_instructor_insists(tmp_path):
    """Any local user reaches loopback, and a scheduler started without ``--host`` listens on every
    interface: a ``tcp://`` scheduler is refused wherever it is, before anything is sent to it."""
    from autograder.batch.cluster_tls import client_security
    from autograder.errors import GraderError

    with socket.socket() as listener:  # something listens on every interface: refused all the same
        listener.bind(("0.0.0.0", 0))
        listener.listen()
        port = listener.getsockname()[1]
        for address in (f"tcp://127.0.0.1:{port}", "tcp://192.0.2.1:8786"):
            refused = autograder("grade", str(TOY / "answers"), "--out", str(tmp_path / "out"), "--cluster", address,
                                 course=TOY / "course.yaml", timeout=120)  # accepted, it would wait on the listener
            assert refused.returncode == 2 and "refusing plain TCP" in refused.stderr, refused.stderr
            assert "--unsafe-cluster-tcp" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "out" / "answers" / "results.json").exists()
    for address in ("tcp://192.0.2.1:8786", "tcp://127.0.0.1:8786", "tcp://localhost:8786", "tcp://[::1]:8786",
                    "127.0.0.2:8786"):
        with pytest.raises(GraderError, match="refusing plain TCP"):
            client_security(address, None, unsafe_tcp=False)
        assert client_security(address, None, unsafe_tcp=True) is None, address
    with pytest.raises(GraderError, match="needs --cluster-certs"):
        client_security("tls://192.0.2.1:8786", None, unsafe_tcp=False)
    with pytest.raises(GraderError, match="lacks ca.pem, cluster.pem, cluster-key.pem"):
        client_security("tls://192.0.2.1:8786", tmp_path, unsafe_tcp=False)
    with pytest.raises(GraderError, match="not ws://"):
        client_security("ws://127.0.0.1:8786", None, unsafe_tcp=False)


def test_no_scheduler_is_one_clear_line(tmp_path):
    refused = autograder("grade", str(TOY / "answers"), "--out", str(tmp_path / "out"), "--cluster",
                         f"tcp://127.0.0.1:{free_port()}", "--unsafe-cluster-tcp", course=TOY / "course.yaml")
    assert refused.returncode == 2 and "no Dask scheduler answers at tcp://127.0.0.1:" in refused.stderr
    assert "Traceback" not in refused.stderr
    malformed = autograder("grade", str(TOY / "answers"), "--out", str(tmp_path / "out"), "--cluster", "notaurl",
                           "--unsafe-cluster-tcp", course=TOY / "course.yaml")
    assert malformed.returncode == 2 and "'notaurl' is not a scheduler address" in malformed.stderr
    assert "Traceback" not in malformed.stderr


def test_the_cluster_page_s_slurm_snippet_makes_a_job_script(tmp_path, monkeypatch):
    pytest.importorskip("dask_jobqueue", reason="the cluster extra (make setup installs it)")
    make_certs(tmp_path / "certs")
    monkeypatch.chdir(tmp_path)  # where the snippet's relative certs/ is
    page = (ROOT / "docs" / "cluster.md").read_text()
    snippet = page.split("<!-- slurm-start -->")[1].split("<!-- slurm-end -->")[0]
    code = snippet.split("```python")[1].split("```")[0]
    before_scale = code.split("cluster.scale(")[0]  # submitting jobs needs a real SLURM
    namespace: dict = {}
    import dask

    # the snippet as written, its dashboard on a free port: another test's scheduler may hold 8787
    with dask.config.set({"jobqueue.slurm.scheduler-options": {"dashboard_address": ":0"}}):
        exec(before_scale, namespace)
    cluster = namespace["cluster"]
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert script.startswith("#!") and "#SBATCH" in script
    assert "cd /shared/tokenizer-course" in script and "--nthreads 2" in script
    for flag, name in (("--tls-ca-file", "ca.pem"), ("--tls-cert", "cluster.pem"), ("--tls-key", "cluster-key.pem")):
        assert f"{flag} {tmp_path / 'certs' / name}" in script, script
    assert "--protocol tls://" in script, script


def test_a_task_s_key_names_the_course_the_files_and_the_exercises():
    """Two clients on one scheduler share a grading only when everything that decides it is the same."""
    from autograder.batch.cluster import task_key
    from autograder.intake.staging import Staged

    staged = Staged("ada", Path("/nowhere"), "f" * 64, [])
    keys = {task_key(digest, "ada", staged, exercises) for digest in ("a" * 64, "b" * 64)
            for exercises in (None, ["ex1"], ["ex1", "ex2"])}
    assert len(keys) == 6


def test_certificates_are_never_written_where_git_would_commit_them(tmp_path):
    """``cluster-certs --out certs`` in a checkout once wrote a private key that git neither
    ignored nor tracked: a folder in a work tree is refused unless git ignores it."""
    subprocess.run(["git", "init", "-q", str(tmp_path / "checkout")], check=True)
    (tmp_path / "checkout" / ".gitignore").write_text("/ignored/\n")
    for folder, made in (("certs", False), ("ignored", True), ("ignored/deeper", True)):
        run = autograder("cluster-certs", "--out", folder, course=TOY / "course.yaml", cwd=tmp_path / "checkout")
        assert (run.returncode == 0) == made and (tmp_path / "checkout" / folder / "cluster-key.pem").exists() == made
        if not made:
            said = " ".join(run.stderr.split())
            assert "which does not ignore it" in said and "add /certs/ to its .gitignore" in said, said
    ours = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "certs/cluster-key.pem"], check=False)
    assert ours.returncode == 0, "the folder docs/cluster.md names is not ignored by this repository"
    make_certs(tmp_path / "outside")  # no work tree: made as before
