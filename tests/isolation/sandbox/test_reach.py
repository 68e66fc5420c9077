"""What a worker can reach and use: no network, nothing of the grader's files, limits on the
worker as a whole, nothing left when its grader dies, and a grader process's CPU cgroup."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.engine.session import Session
from autograder.errors import SandboxFailure, StudentError
from autograder.isolation import Layout, reaping
from autograder.isolation import WorkerLimits as Limits
from autograder.isolation.inside import codec
from tests.conftest import ROOT, UNUSED_SITE_PACKAGES
from tests.isolation.sandbox.conftest import FOUND, MODES, SETUPS, close_session, open_session, setup_session

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


class TestIsolation:
    """What only bubblewrap gives: no network, nothing of the grader's files, a read-only view."""

    def test_no_network(self, strong_session):
        import socket
        with socket.create_server(("127.0.0.1", 0)) as server:  # the grader's side listens
            with pytest.raises(StudentError, match="PermissionError|OSError|unreachable|refused"):
                strong_session.module("exercises.toy").connect(server.getsockname()[1])

    def test_solutions_and_repository_are_invisible(self, strong_session):
        toy = strong_session.module("exercises.toy")
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError"):
            toy.read(str(ROOT / "solutions" / "ex1_merge_tracing.py"))
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError"):
            toy.listing(str(ROOT / "suites"))
        with pytest.raises(SandboxFailure, match="No module named .solutions."):
            strong_session.module("solutions.ex1_merge_tracing")

    def test_cannot_write_outside_its_folder(self, strong_session, tmp_path):
        target = tmp_path / "results.json"
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError|Read-only"):
            strong_session.module("exercises.toy").write(str(target), '{"score": 100}')
        assert not target.exists()
        with pytest.raises(StudentError, match="PermissionError|Read-only"):
            strong_session.module("exercises.toy").write(str(ROOT / "course.yaml"), "")

    @pytest.mark.parametrize("where", ["hypothesis", "records"])
    def test_cannot_plant_files_for_the_graders_hypothesis(self, strong_session, tmp_path, monkeypatch, where):
        """Grader processes share hypothesis's files (:func:`autograder.isolation.hypothesis_storage`)
        and the examples of passing properties (:func:`autograder.engine.replay.cache_folder`), which
        decide what later gradings are shown."""
        from autograder.engine.replay import cache_folder
        from autograder.isolation import hypothesis_storage

        folder = Path(hypothesis_storage(str(tmp_path)))
        monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(folder))
        monkeypatch.delenv("AUTOGRADER_RECORDS", raising=False)
        planted = (folder if where == "hypothesis" else cache_folder()) / "planted.json"  # the folder exists
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError|Read-only"):
            strong_session.module("exercises.toy").write(str(planted), "[]")
        assert not planted.exists()

    def test_read_only_paths_under_tmp_stay_visible(self, submission, tmp_path):
        """A course's read-only data (or the venv of a clone) may live below /tmp, where the worker
        also gets a scratch tmpfs: the data must not be hidden by it."""
        data = tmp_path / "data"
        data.mkdir()
        (data / "table.txt").write_text("kept")
        session = Session(Layout(submission, readonly_paths=(data,)), Limits(call_seconds=3), budget_seconds=30)
        try:
            assert session.module("exercises.toy").read(str(data / "table.txt")) == b"kept"
        finally:
            session.close()

    @pytest.mark.parametrize("folder", [".", "/tmp"])
    def test_disk_is_capped(self, strong_session, folder):
        """Many files each under the file-size limit still cannot fill the grader's disk."""
        if "bwrap" not in MODES[strong_session.mode]:
            pytest.skip("a total cap on writes needs bubblewrap's tmpfs; elsewhere writes are capped per file")
        with pytest.raises(StudentError, match="No space left on device"):
            strong_session.module("exercises.toy").fill_disk(folder)

    def test_runs_without_privileges(self, strong_session):
        if os.geteuid() != 0:
            pytest.skip("the uid drop applies when the grader runs as root")
        uid, capabilities, bounding = strong_session.module("exercises.toy").identity()
        assert capabilities in (0, None) and bounding == 0  # None: the filter refuses capget
        assert (uid != 0) == ("uid" in MODES[strong_session.mode])

    def test_cannot_read_another_submission(self, strong_session, tmp_path):
        other = tmp_path / "other-student.py"
        other.write_text("secret = 1\n")
        other.chmod(0o644)
        with pytest.raises(StudentError, match="PermissionError|FileNotFoundError"):
            strong_session.module("exercises.toy").read(str(other))

    def test_cannot_signal_the_grader(self, strong_session):
        with pytest.raises(StudentError, match="PermissionError|ProcessLookupError"):
            strong_session.module("exercises.toy").signal(os.getpid())


class TestWholeWorkerLimits:
    """Attacks on the machine's resources: each is bounded for the worker as a whole."""

    @pytest.fixture(params=["fresh", "forked"])
    def full(self, submission, request):
        if not {"cgroup", "landlock"} <= FOUND.layers:
            pytest.skip("needs a cgroup and Landlock")
        session = open_session(submission, forked=request.param == "forked")
        yield session
        close_session(session)

    def test_no_nested_tmpfs(self, full):
        """A nested user namespace with a tmpfs of its own would hold memory past every cap."""
        assert full.module("exercises.toy").nested_tmpfs() != 0

    def test_memory_counts_all_children(self, full):
        held = full.module("exercises.toy").children_hold_memory(4, 200)
        assert held < 512, f"children held {held} MB against a 512 MB worker"

    def test_nothing_runs_between_calls(self, full):
        toy = full.module("exercises.toy")
        during = toy.start_burners(4, 0.5)  # background processes run while their call runs...
        before = toy.burned()
        between = toy.burned(0.5) - before  # ...and are gone once it returns: their count stands still
        assert during > 0 and between == 0, (during, between)

    def test_colliding_hashes_are_charged_to_the_call(self, full):
        began = time.monotonic()
        with pytest.raises(SandboxFailure, match="did not return within the time limit of 3 s"):
            full.module("exercises.toy").colliding_set(40_000)
        assert time.monotonic() - began < 8

    def test_many_named_tuple_shapes_are_not_kept(self, full):
        toy = full.module("exercises.toy")
        for first in range(0, 3000, 100):
            assert len(toy.shapes(first, 100)) == 100
        assert codec.named_classes().cache_info().currsize <= 256

    def test_a_worker_that_stops_reading_cannot_block_the_grader(self, full):
        toy = full.module("exercises.toy")
        toy.stop_reading()
        began = time.monotonic()
        with pytest.raises(SandboxFailure, match="did not return within the time limit"):
            toy.add("x" * (4 << 20), "")
        assert time.monotonic() - began < 8


GRADER = '''
import json, sys, time
from pathlib import Path
from autograder import isolation as sandbox
from autograder.isolation import detect, inside, reaping
from autograder.engine.session import Session
from autograder.isolation import Child, Layout, Standby
from autograder.isolation import WorkerLimits as Limits
from autograder.isolation.zygote import forks, preloads
detect.isolation = lambda: sandbox.Isolation(frozenset(json.loads(sys.argv[2])))
session = Session(Layout(Path(sys.argv[1])), Limits(call_seconds=5), budget_seconds=60)
session.module("exercises.toy").add(1, 2)
print(json.dumps([session.worker.home.as_posix(), reaping.tree(session.worker.process.pid)]), flush=True)
time.sleep(60)
'''


# what a Python runtime reads besides its own files: a worker's needs none of them
NOT_NEEDED = ["/etc/passwd", "/etc/hostname", "/etc/os-release", "/usr/bin/env", sys.executable]


@pytest.mark.parametrize("setup", [s for s in SETUPS if "landlock" in MODES[s.split(",")[0]]])
def test_a_worker_reads_what_its_python_needs_and_nothing_else(submission, monkeypatch, setup):
    """Where Landlock confines a worker, it reads exactly its Python's files and the libraries
    they load: it imports what is installed and loads a library on demand, but reads no other
    system file and lists no system folder, nor a base interpreter's site-packages it does not use."""
    session = setup_session(monkeypatch, submission, setup)
    try:
        toy = session.module("exercises.toy")
        assert toy.installed()[0] == "yaml"
        assert toy.load_libraries() is True
        for path in [*NOT_NEEDED, "/usr/bin", "/etc", *UNUSED_SITE_PACKAGES]:
            with pytest.raises(StudentError, match="PermissionError"):
                (toy.listdir if Path(path).is_dir() else toy.read)(path)
    finally:
        close_session(session)


def test_the_read_set_is_worked_out_once_per_machine(tmp_path, monkeypatch):
    """A worker's read set names its Python's folders and the libraries they load, never a whole
    system folder; it is worked out once and kept, and without ``ldd`` to work it out the grader
    stops rather than guess."""
    import shutil

    from autograder.errors import GraderError
    from autograder.isolation import readable
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    readable.shared_libraries.cache_clear()
    try:
        reads = readable.worker_reads(as_root=False)
        assert not {Path(folder) for folder in readable.SYSTEM_DIRS} & set(reads)
        assert any(path.name.startswith("libc.so") for path in reads) and readable.LOADER_CACHE in reads
        [kept] = (tmp_path / "autograder" / "libraries").glob("*.json")
        monkeypatch.setattr(shutil, "which", lambda name: None)
        readable.shared_libraries.cache_clear()
        assert readable.worker_reads(as_root=False) == reads, "read back, not worked out again"
        kept.unlink()
        readable.shared_libraries.cache_clear()
        with pytest.raises(GraderError, match="ldd"):
            readable.worker_reads(as_root=False)
    finally:
        readable.shared_libraries.cache_clear()


def test_a_grader_process_finds_the_read_set_another_one_kept(tmp_path):
    """The record is named by what it was worked out from, in one order: a second grader process,
    whatever its hash seed, reads the first one's record rather than running ``ldd`` again."""
    work_out = "from autograder.isolation import readable; readable.worker_reads(as_root=False)"
    for seed in ("1", "2"):
        subprocess.run([sys.executable, "-c", work_out], cwd=ROOT, check=True,
                       env={**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONHASHSEED": seed})
    assert len(list((tmp_path / "autograder" / "libraries").glob("*.json"))) == 1


@pytest.mark.parametrize("mode", list(MODES))
def test_workers_die_with_their_grader(submission, mode):
    """A grader killed outright (SIGKILL, no clean-up) takes its worker with it, in every mode."""
    import json
    import signal
    grader = subprocess.Popen([sys.executable, "-c", GRADER, str(submission), json.dumps(sorted(MODES[mode]))],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    home, pids = json.loads(grader.stdout.readline())
    os.kill(grader.pid, signal.SIGKILL)
    grader.wait()
    deadline = time.monotonic() + 5
    while (alive := [pid for pid in pids[1:] if reaping.owner(pid) is not None]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive == [], f"processes of the worker outlived its grader: {alive}"
    reaping.sweep_folders()  # what the next grader does first
    assert not Path(home).exists()


PROBING = '''
import sys
from autograder.isolation import Isolation, detect

def stopped(*args, **kwargs):  # the probe's worker starting: say where, and stay
    print(args[0].submission, flush=True)
    sys.stdin.read()

detect.Worker = stopped
detect.known_good_problem(Isolation(frozenset()))
'''


def test_a_grader_killed_while_it_probes_leaves_its_folder_to_the_next_grader():
    """The folder of the known-good probe (``detect.known_good_problem``) is named for its grader,
    as a worker's is: killed outright mid-probe, it leaves the folder, which the next grader's
    sweep removes."""
    import signal
    grader = subprocess.Popen([sys.executable, "-c", PROBING], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    folder = Path(grader.stdout.readline().strip())
    os.kill(grader.pid, signal.SIGKILL)
    grader.wait()
    assert (folder / "known_good.py").exists()
    reaping.sweep_folders()  # what the next grader does first
    assert not folder.exists()


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists(),
                    reason="needs root and a cgroup v1 cpu hierarchy")
def test_a_grader_process_and_its_workers_share_one_core_s_cpu_cgroup(tmp_path):
    """A grader process (a lane of a batch) moves into a CPU cgroup of its own, capped at one core,
    before it starts any worker: what it starts inherits it, however many processes a submission
    starts beside it."""
    from autograder.batch.grader import GraderProcess
    from autograder.config import load_course

    course = load_course(ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml")
    with GraderProcess(course, core=0) as grader:
        process = grader._start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lanes = [line.split(":", 2)[2] for line in Path(f"/proc/{process.pid}/cgroup").read_text().splitlines()
                     if "cpu" in line.split(":", 2)[1].split(",")]
            if lanes and lanes[0].endswith("-lane"):
                break
            time.sleep(0.05)
        lane = Path("/sys/fs/cgroup/cpu") / lanes[0].lstrip("/")
        assert lane.name == f"autograder-{process.pid}-lane", lane
        period, quota = (int((lane / name).read_text()) for name in ("cpu.cfs_period_us", "cpu.cfs_quota_us"))
        assert quota == period and (lane / "cpu.shares").read_text().strip() == "1024"
        assert str(process.pid) in (lane / "cgroup.procs").read_text().split()
