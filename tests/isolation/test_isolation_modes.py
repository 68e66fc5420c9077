"""Official grading in every isolation mode this machine can make, tried as an attacker would.

Each mode runs ``python -m autograder grade`` on two attackers and an honest submission
(exercise 1 only) the way a real machine of that kind would: as root, as root with Landlock
alone, as root without ``CAP_SYS_ADMIN`` (Docker's default) or without
``CAP_SETUID``/``CAP_SETGID``, as an unprivileged user, and as an unprivileged user without
bubblewrap. In every mode grading either refuses with status 3, or the honest submission scores
full marks and the attackers, graded side by side:

- read nothing of the solutions, the suites or the other submission, write nothing into the
  course or the output folder, and reach no TCP socket;
- change neither the mode, owner nor extended attributes of a file of the grader's user that
  they can name, nor the host's ``/dev/null``;
- read the limits, priority and affinity of no other process, their parent's included (item 4);
- leave no process running once the grading ends (item 5);
- cannot signal each other through a lock on a runtime file both can open (item 6), nor watch
  files with inotify (item 10).

A second test grades a submission that tries to carry a hidden property's inputs into public
feedback (``tests/isolation/carriers.py``) twice, with two different hidden inputs, in each mode: the public
feedback is the same byte for byte (item 1). A third grades a sender and a receiver of a
channel through the page cache (``tests/isolation/page_cache.py``), at once and one after
the other, with two secrets: the receiver finds nothing either time. The tests run as root (as CI
does): they make the user and the namespaces they need.
"""

import csv
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.isolation import page_cache
from tests.isolation.carriers import attacker, toy_course

USER = "autograder-tester"
EXERCISE = "ex1_merge_tracing"

# xdist_group: `make test` runs the module's tests on one process, one after another (they add a user)
pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.root, pytest.mark.slow,
              pytest.mark.xdist_group(__name__),
              pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("capsh"),
                                 reason="simulating the modes needs root and capsh (libcap2-bin)")]

ATTACK = '''

HELD = []  # this worker's lock on a runtime file every worker can open, once it has it
DONE = []
FOUND = []  # what the worker could name of the other student's work and the hidden files


def attack_once():
    """Once a worker: reach another process, change a file's metadata, watch, start a daemon."""
    import ctypes, os, resource
    loot = []
    for pid in (os.getppid(), 1):
        for name, action in (("prlimit", lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE)),
                             ("getpriority", lambda: os.getpriority(os.PRIO_PROCESS, pid)),
                             ("sched_getaffinity", lambda: os.sched_getaffinity(pid))):
            try:
                action()
                loot.append(f"{{name}} of pid {{pid}}")
            except OSError:
                pass
    for path in ({victim!r}, "/dev/null"):  # judged by the test, from the host
        for action in (lambda: os.chmod(path, 0o667 if path == "/dev/null" else 0o777),
                       lambda: os.setxattr(path, "user.pwned", b"1"),
                       lambda: os.chown(path, os.getuid(), os.getgid())):
            try:
                action()
            except OSError:
                pass
    if ctypes.CDLL(None).inotify_init1(0) >= 0:
        loot.append("inotify")
    try:  # a daemon, out of the worker's session and process tree
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/usr/bin/sleep", ["sleep", {mark!r}])
            os._exit(0)
    except OSError:
        pass
    return loot


def signal_through_a_lock():
    """Hold a lock on a runtime file, or find the other attacker's worker holding it."""
    import fcntl, os
    if not HELD:
        HELD.append(open(os.__file__, "rb"))
    try:
        fcntl.flock(HELD[0], fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return ["flock: another worker holds " + os.__file__]
    except OSError:
        pass
    return []


def get_pair_counts(ids):
    import glob, socket
    loot = signal_through_a_lock()
    if not DONE:
        DONE.append(True)
        loot += attack_once()
        # the other student's work first: feedback is cut at limits.feedback_chars, and the loot is
        # long. These were all there before the batch, and unconfined /tmp is the whole suite's
        # temporary files: searched once a worker
        for pattern in ("/tmp/**/honest_marker.py", {solutions!r} + "/*.py", {suites!r} + "/*.py"):
            FOUND.extend(glob.glob(pattern, recursive=True))
    for path in FOUND + glob.glob({out!r} + "/**/*", recursive=True):  # the batch's output, as it grows
        try:
            loot.append(path + ": " + repr(open(path, "rb").read(20)))
        except OSError:
            pass
    for folder in ({root!r}, {out!r}):  # judged from the host by the test: inside bubblewrap a path
        try:                                # under /tmp may be the worker's private tmpfs
            open(folder + "/PWNED", "w").write("x")
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
    """The unprivileged user, added if it is missing (by this call or one at the same time)."""
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER])
        return pwd.getpwnam(USER)  # a KeyError here: useradd failed, and said why


HOLDS = f"/tmp/.autograder-hold-{os.getpid()}"  # where as_user binds a closed folder, in its namespace
HOME = Path(f"/tmp/.autograder-tester-home-{os.getpid()}")  # the user's home while the module's tests run


@pytest.fixture(autouse=True, scope="module")
def holds():
    """The empty folders as_user's namespaces leave on the host, and the user's home, removed once
    the module's tests end."""
    yield
    for folder in Path(HOLDS).parent.glob(f"{Path(HOLDS).name}-*"):
        folder.rmdir()
    shutil.rmtree(HOME, ignore_errors=True)


def as_user(hide_bwrap: bool) -> list[str]:
    """A command prefix: a private mount namespace where the user can reach Python and the course
    (a laptop installs both where its user can read them), then drop to the user."""
    user = ensure_user()
    needed = [Path(sys.base_prefix), Path(sys.prefix), ROOT]
    closed = sorted({next(a for a in reversed(p.parents) if a != Path("/") and not os.stat(a).st_mode & 0o001)
                     for p in needed if any(not os.stat(a).st_mode & 0o001 for a in p.parents if a != Path("/"))})
    lines = ["set -e", "mount --make-rprivate /"]
    for index, folder in enumerate(closed):  # hide a closed folder behind an open one, keep what is needed
        hold = f"{HOLDS}-{index}"
        lines += [f"mkdir -p {hold}", f"mount --bind {folder} {hold}", f"mount -t tmpfs -o mode=0755 none {folder}"]
        for path in needed:
            if path.is_relative_to(folder):
                inner = path.relative_to(folder)
                lines += [f"mkdir -p {folder / inner}", f"mount --bind {hold}/{inner} {folder / inner}"]
    if hide_bwrap and shutil.which("bwrap"):
        lines.append(f"mount --bind /dev/null {shutil.which('bwrap')}")
    # a home of its own, as a laptop's user has, where its grader keeps its caches (the records
    # of examples among them) from one grading to the next; root's HOME would leave it none
    HOME.mkdir(mode=0o700, exist_ok=True)
    os.chown(HOME, user.pw_uid, user.pw_gid)
    lines.append(f"export HOME={HOME}")
    lines.append(f'exec setpriv --reuid={user.pw_uid} --regid={user.pw_gid} --init-groups -- "$@"')
    return ["unshare", "--mount", "sh", "-c", "\n".join(lines), "sh"]


# each mode: the command prefix that makes it, and the layers it allows (None: all this machine has)
MODES = {
    "root": (lambda: [], None),
    "root, Landlock only": (lambda: [], "landlock"),
    "root without CAP_SYS_ADMIN": (lambda: ["capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$@"', "sh"], None),
    "root without CAP_SETUID": (lambda: ["capsh", "--drop=cap_setuid,cap_setgid", "--", "-c", 'exec "$@"', "sh"],
                                None),
    "unprivileged user": (lambda: as_user(hide_bwrap=False), None),
    "unprivileged user without bwrap": (lambda: as_user(hide_bwrap=True), None),
}
ATTACKERS = ("attacker", "attacker2")  # graded side by side, first: each holds the lock the other looks for


def in_mode(mode: str, command: list[str], out: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m autograder COMMAND`` in ``mode``, with hypothesis's files in ``out``."""
    prefix, layers = MODES[mode]
    env = {**os.environ, "COLUMNS": "200", "HYPOTHESIS_STORAGE_DIRECTORY": str(out / ".hypothesis"),
           **({} if layers is None else {"AUTOGRADER_LAYERS": layers}), **(env or {})}
    return subprocess.run([*prefix(), sys.executable, "-m", "autograder", *command], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)


def grading_user(mode: str) -> int:
    """The uid the grader runs as in ``mode``."""
    return ensure_user().pw_uid if mode.startswith("unprivileged") else os.getuid()


def metadata(path: Path) -> tuple:
    info = os.stat(path)
    return info.st_mode, info.st_uid, info.st_gid, os.listxattr(path)


def survivors(mark: str) -> list[int]:
    """The processes running ``sleep MARK``: the attackers' daemons."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == f"sleep\0{mark}\0".encode():
                found.append(int(pid))
        except OSError:
            pass
    return found


def grade_attack(work: Path, mode: str, options: list[str] = (), env: dict[str, str] | None = None,
                 ) -> tuple[int, str, Path]:
    """Grade the attackers and an honest submission in ``work``; return the exit status, what was
    said (and what the test saw from the host) and the output folder."""
    work.chmod(0o755)
    honest, out, victim = work / "honest" / "exercises", work / "out", work / "victim.txt"
    for name in ("honest", *ATTACKERS):
        shutil.copytree(ROOT / "solutions", work / name / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    (honest / "honest_marker.py").write_text("SECRET = 'the honest student's work'\n")
    out.mkdir()
    victim.write_text("a file of the grader's user that a worker can name\n")
    mark = f"271828.{os.getpid()}"
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0)
        source = (ROOT / "solutions" / f"{EXERCISE}.py").read_text()
        for name in ATTACKERS:
            (work / name / "exercises" / f"{EXERCISE}.py").write_text(source + ATTACK.format(
                solutions=str(ROOT / "solutions"), suites=str(ROOT / "suites"), out=str(out), root=str(ROOT),
                port=server.getsockname()[1], victim=str(victim), mark=mark))
        for path in [work, *work.rglob("*")]:
            path.chmod(0o777 if path == out else 0o755 if path.is_dir() else 0o644)
        os.chown(victim, grading_user(mode), -1)
        before = metadata(victim), os.stat("/dev/null").st_mode
        try:
            run = in_mode(mode, [*options, "grade", *(str(work / name) for name in ATTACKERS), str(honest.parent),
                                 "--out", str(out), "--exercise", EXERCISE, "--jobs", "2"], out, env)
        finally:
            left, null = survivors(mark), os.stat("/dev/null").st_mode
            for pid in left:
                os.kill(pid, 9)
            os.chmod("/dev/null", before[1] & 0o7777)
        try:
            server.accept()[0].close()
            said = "the attacker connected to 127.0.0.1\n"
        except BlockingIOError:
            said = ""
    if metadata(victim) != before[0]:
        said += f"the attackers changed {victim}: {before[0]} became {metadata(victim)}\n"
    if null != before[1]:
        said += f"the attackers changed /dev/null's mode from {oct(before[1])} to {oct(null)}\n"
    if left:
        said += f"{len(left)} processes the attackers started outlived the grading\n"
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
    code, said, out = grade_attack(work, mode)
    print(f"{mode}: exit {code}\n{said}")
    assert "the attacker" not in said, said
    assert not (ROOT / "PWNED").exists() and not (out / "PWNED").exists()
    if code == 3:
        assert "refusing to grade" in said
        return
    assert code == 0, said
    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert float(rows["honest"][EXERCISE]) == 20, said
    for name in ATTACKERS:
        feedback = (out / name / "feedback.md").read_text()
        assert "LEAKED" not in feedback, feedback[:3000]
        assert "Student code ran in a sandbox" in feedback


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(MODES))
def test_hidden_inputs_never_reach_public_feedback(mode, work):
    """The public feedback of a submission that tries every carrier (``tests/isolation/carriers.py``) is the
    same whatever its hidden property's input is."""
    work.chmod(0o755)
    public = []
    for secret in (10 ** 6 + 3, 10 ** 6 + 5):  # carried as two different values: 3 % 7 + 1 and 5 % 7 + 1
        folder = work / str(secret)
        course, submission, out = toy_course(folder / "course", secret), attacker(folder / "student"), folder / "out"
        out.mkdir()
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o777 if path == out else 0o755 if path.is_dir() else 0o644)
        # each grading starts with no recorded examples (and the attacker passes nothing, so it
        # keeps none): a record another grading of this course left in the user's cache would
        # replay, and a replay forks its workers differently, which the pids it reports show
        records = folder / "records"
        records.mkdir(mode=0o700)
        os.chown(records, grading_user(mode), -1)
        run = in_mode(mode, ["--course", str(course), "grade", str(submission), "--out", str(out), "--jobs", "1"],
                      out, {"AUTOGRADER_RECORDS": str(records / "examples")})
        if run.returncode == 3:
            assert "refusing to grade" in run.stderr
            return
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        tests = json.loads((out / "student" / "results.json").read_text())["tests"]
        public.append([test for test in tests if test["visibility"] == "visible"])
        assert len(public[-1]) == 2 and all("decoded" in test["output"] for test in public[-1]), public[-1]
    assert public[0] == public[1]


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["2", "1"], ids=["at once", "one after the other"])
@pytest.mark.parametrize("mode", list(MODES))
def test_the_page_cache_carries_nothing_between_students(mode, jobs, work):
    """A sender graded beside a receiver (``--jobs 2``), or before it in the same batch (``--jobs 1``:
    the cache outlives a grading), cannot tell it its secret through which pages of a file both may
    read are cached: the receiver's public feedback says it found nothing, whatever the secret.
    The two secrets are graded at the same time, each in a course with a channel file of its own
    (the senders and receivers mostly wait)."""
    work.chmod(0o755)
    folders = {secret: work / str(secret) for secret in (0x5A3C, 0x0F71)}
    window = 1 if jobs == "2" else 0  # seconds of sending and looking (page_cache.py)
    for secret, folder in folders.items():
        channel = page_cache.course(folder / "course")[1]
        page_cache.submission(folder / "a_sender", page_cache.SENDER.format(
            channel=str(channel), pages=page_cache.PAGES, secret=secret, window=window))
        page_cache.submission(folder / "b_receiver", page_cache.RECEIVER.format(
            channel=str(channel), pages=page_cache.PAGES, window=window))
        (folder / "out").mkdir()
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o777 if path == folder / "out" else 0o755 if path.is_dir() else 0o644)

    def grade(folder: Path) -> subprocess.CompletedProcess:
        return in_mode(mode, ["--course", str(folder / "course" / "course.yaml"), "grade", str(folder / "a_sender"),
                              str(folder / "b_receiver"), "--out", str(folder / "out"), "--jobs", jobs], folder / "out")

    with ThreadPoolExecutor(len(folders)) as pool:
        runs = {folder: pool.submit(grade, folder) for folder in folders.values()}
    said = []
    for folder, future in runs.items():
        run = future.result()
        if run.returncode == 3:
            assert "refusing to grade" in run.stderr
            continue
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        tests = json.loads((folder / "out" / "b_receiver" / "results.json").read_text())["tests"]
        said.append([test["output"] for test in tests if test["visibility"] == "visible"])
        nothing = "observed by_cachestat=nothing by_faults=nothing by_mincore=nothing by_nowait=nothing"
        assert said[-1] and all(nothing in output for output in said[-1]), said[-1]
    assert len(said) in (0, 2) and (not said or said[0] == said[1])


ROOT_ONLY_PROBE = '''"""Tries every file and folder of the machine that only root may read."""

PATHS = {paths!r}
READ = []


def probe():
    import os
    read = []
    for path in PATHS:
        try:
            if os.path.isdir(path):
                os.listdir(path)
            else:
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
            read.append(path)
        except OSError:
            pass
    return read


def add_all(numbers):
    if not READ:
        READ.append(probe())
    if READ[0]:
        raise RuntimeError(f"LEAKED {{len(READ[0])}} root-only paths: {{READ[0][:20]!r}}")
    raise ValueError(f"probed {{len(PATHS)}} root-only paths, read none")
'''


@pytest.fixture(scope="module")
def root_only_paths() -> list[str]:
    """Every regular file and folder on this machine that only root may read: owned by root,
    and the mode bits give others no read (no listing, for a folder); /proc and /sys left out."""
    found: list[str] = []

    def walk(folder: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.path in ("/proc", "/sys") or not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                continue
            if info.st_uid == 0 and not info.st_mode & stat.S_IROTH:
                found.append(entry.path)
            if stat.S_ISDIR(info.st_mode):
                walk(entry.path)

    walk("/")
    assert any(path.startswith("/etc/") for path in found), "a machine with no root-only file in /etc proves nothing"
    return found


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(MODES))
def test_no_file_only_root_may_read_is_readable(mode, work, root_only_paths):
    """A worker tries every file and folder only root may read on this machine: it reads and
    lists none of them, in every mode, the modes where it runs as uid 0 without capabilities
    included."""
    work.chmod(0o755)
    course, submission, out = toy_course(work / "course", 3), work / "student", work / "out"
    (submission / "toy").mkdir(parents=True)
    (submission / "toy" / "__init__.py").write_text("")
    (submission / "toy" / "ex_sum.py").write_text(ROOT_ONLY_PROBE.format(paths=root_only_paths))
    out.mkdir()
    for path in [work, *work.rglob("*")]:
        path.chmod(0o777 if path == out else 0o755 if path.is_dir() else 0o644)
    run = in_mode(mode, ["--course", str(course), "grade", str(submission), "--out", str(out)], out)
    if run.returncode == 3:
        assert "refusing to grade" in run.stderr
        return
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    outputs = [test["output"] for test in json.loads((out / "student" / "results.json").read_text())["tests"]
               if test["visibility"] == "visible"]
    assert outputs and not any("LEAKED" in output for output in outputs), outputs
    assert all(f"probed {len(root_only_paths)} root-only paths, read none" in output for output in outputs), outputs


SPY = '''"""Looks at what it can name of a classmate's reports, the batch's and the course's files."""

import errno, os

TARGETS = {targets!r}  # what it is called: the path, and whether its times count


def seen():
    found = {{}}
    for label, (path, timed) in sorted(TARGETS.items()):
        try:
            info = os.stat(path)
        except OSError as error:
            found[label] = errno.errorcode.get(error.errno, str(error.errno))
            continue
        found[label] = [oct(info.st_mode), info.st_nlink, info.st_size, info.st_uid, info.st_gid]
        if timed:
            found[label] += [info.st_mtime_ns, info.st_ctime_ns, info.st_atime_ns]
    return found


def add_all(numbers):
    raise ValueError(f"seen {{seen()!r}}")
'''
NO_BWRAP = [mode for mode in MODES if mode in ("root, Landlock only", "root without CAP_SYS_ADMIN",
                                                "unprivileged user without bwrap")]


def spy_on(work: Path, out: Path, course: Path, cache: Path) -> Path:
    """A submission, ``spy``, whose calls say what ``stat`` shows of the classmate's reports in
    ``out``, the gradebook, ``grades.csv``, the output folder, the course's files and folders
    and the grader's cache (their times too, but for the output folder's, which each batch moves)."""
    timed = {"classmate's folder": out / "classmate", "classmate's results.json": out / "classmate" / "results.json",
             "classmate's feedback.md": out / "classmate" / "feedback.md",
             "classmate's grader.log": out / "classmate" / "grader.log", "gradebook": out / "gradebook.sqlite",
             "grades.csv": out / "grades.csv", "course": course.parent, "course file": course,
             "solutions": course.parent / "answers", "solution": course.parent / "answers" / "ex_sum.py",
             "suites": course.parent / "suites", "suite": course.parent / "suites" / "ex_sum_hidden_first.py",
             "grader's cache": cache / "autograder", "hypothesis's files": cache / "autograder" / "hypothesis",
             "records as they were named": cache / "autograder" / "hypothesis" / "autograder-examples"}
    targets = {label: (str(path), True) for label, path in timed.items()} | {"output folder": (str(out), False)}
    folder = work / "spies" / out.name / "spy"
    (folder / "toy").mkdir(parents=True)
    (folder / "toy" / "__init__.py").write_text("")
    (folder / "toy" / "ex_sum.py").write_text(SPY.format(targets=targets))
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("mode", NO_BWRAP)
def test_a_worker_learns_nothing_of_its_classmates_results(mode, work):
    """A worker that stats what it can name where nothing hides the machine's
    paths from it sees the same whether its classmate was graded or not, failed or passed, in
    the same batch or an earlier one into the same output: the reports, the gradebook and
    ``grades.csv`` are not where it can name them while a batch runs, and the course's files and
    the grader's cache do not change with what was graded."""
    work.chmod(0o755)
    course, cache = toy_course(work / "course", 3), work / "cache"
    cache.mkdir()
    os.chown(cache, grading_user(mode), -1)
    classmates = {"failing": work / "failing" / "classmate", "passing": work / "passing" / "classmate"}
    shutil.copytree(course.parent / "toy", classmates["failing"] / "toy")
    shutil.copytree(course.parent / "answers", classmates["passing"] / "toy")
    for path in work.rglob("*"):
        if path != cache and not path.is_relative_to(cache):
            path.chmod(0o755 if path.is_dir() else 0o644)
    # a machine that keeps compiled code, as most do (this one's environment may not)
    env = {"XDG_CACHE_HOME": str(cache), "PYTHONDONTWRITEBYTECODE": ""}

    def grade(out: Path, *submissions: Path) -> None:
        out.mkdir(mode=0o777, exist_ok=True)
        out.chmod(0o777)
        run = in_mode(mode, ["--course", str(course), "grade", *map(str, submissions), "--out", str(out),
                             "--jobs", "1"], out, env)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    def seen(out: Path, classmate: Path | None = None, together: bool = False) -> str:
        """What the spy saw, graded into ``out`` after ``classmate``: in the same batch, or in
        one before it into the same output."""
        spy = spy_on(work, out, course, cache)
        if classmate is not None and not together:
            grade(out, classmate)
        grade(out, *([classmate] if together else []), spy)  # --jobs 1: in the order given
        tests = json.loads((out / "spy" / "results.json").read_text())["tests"]
        said = [test["output"].split("seen ", 1)[1].split("\n")[0] for test in tests if test["visibility"] == "visible"]
        assert len(said) == 2 and said[0] == said[1], said
        return said[0]

    alone = seen(work / "alone")
    print(f"{mode}: {alone}")
    for kind, classmate in classmates.items():
        for together in (True, False):
            assert seen(work / f"{kind}-{together}", classmate, together) == alone, \
                f"a {kind} classmate graded {'in the same batch' if together else 'in a batch before'}"


@pytest.mark.slow
def test_the_attack_is_real_without_a_sandbox(work):
    """The same attacker, graded with every layer off and the override: it reads and writes what the
    grader can, so the test above can fail. (Its sockets stay closed: the worker's seccomp filter
    applies in every mode.)"""
    code, said, out = grade_attack(work, "root", ["--unsafe-no-sandbox"], {"AUTOGRADER_LAYERS": ""})
    assert code == 0, said
    feedback = (out / "attacker" / "feedback.md").read_text()
    assert "LEAKED" in feedback and "honest_marker.py" in feedback and "UNSAFE" in feedback
    assert (out / "PWNED").exists() and "attacker connected" not in said
