"""How workers are started and handed to properties: a standby booted ahead and a zygote's
children are each fresh and out of reach of the one before, and student code never runs in the
zygote."""

import marshal
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.engine.session import Session
from autograder.errors import SandboxFailure, StudentError
from autograder.isolation import Child, Layout, Standby, inside
from autograder.isolation import WorkerLimits as Limits
from autograder.isolation.inside import codec
from autograder.isolation.zygote import preloads
from tests.isolation.sandbox.conftest import FORKING, HOLDING, MODES, close_session, in_mode, open_session

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.mark.parametrize("mode", HOLDING)
def test_a_standby_worker_is_fresh_and_out_of_reach_of_the_one_serving(submission, monkeypatch, mode):
    """The worker a Standby boots for the next property lives while this one serves: nothing
    this one does (kill what it can see, leave files and globals behind) reaches it."""
    in_mode(monkeypatch, mode)
    probe = open_session(submission)
    standby = Standby(probe.layout, probe.limits)
    sessions = [Session(probe.layout, probe.limits, budget_seconds=30, standby=standby) for _ in range(2)]
    try:
        first = sessions[0].module("exercises.toy")
        uid = first.identity()[0]
        first.harm_the_next()
        booting = standby.booting
        assert booting is not None and booting.process.poll() is None, "the next worker boots while this one serves"
        sessions[0].close()
        second = sessions[1].module("exercises.toy")
        assert standby.serving is booting
        assert second.add(2, 3) == 5 and second.found_left_behind() is False
        if "uid" in MODES[mode]:
            assert second.identity()[0] != uid, "the two live workers have uids of their own"
    finally:
        for session in sessions:
            session.close()
        standby.close()


@pytest.mark.parametrize("mode", FORKING)
def test_a_forked_worker_is_fresh_and_out_of_reach_of_the_one_before(submission, monkeypatch, mode):
    """Each property's worker forked from the exercise's zygote starts from the state just after
    the import: what the one before did (kill every process it can see, leave files, globals and
    module state behind, start a process) reaches neither the zygote nor the next child."""
    in_mode(monkeypatch, mode)
    first, second = (open_session(submission, forked=True) for _ in range(2))
    second.standby = first.standby
    try:
        toy = first.module("exercises.toy")
        toy.harm_the_next()
        assert toy.remember("first") == ["first"]
        zygote = first.standby.zygote
        first.close()
        toy = second.module("exercises.toy")
        assert first.standby.zygote is zygote and zygote.alive, "the zygote outlived the child's attacks"
        assert toy.add(2, 3) == 5 and toy.found_left_behind() is False
        assert toy.remember("second") == ["second"]
    finally:
        for session in (first, second):
            session.close()
        first.standby.close()


@pytest.mark.parametrize("mode", FORKING)
def test_a_forked_worker_cannot_leave_a_file_for_the_next(submission, monkeypatch, mode):
    """A child's folder goes with it, even one it made hard to remove (a read-only folder
    inside), and no child can read another's folder or the zygote's."""
    in_mode(monkeypatch, mode)
    first = open_session(submission, forked=True)
    try:
        secret = first.module("exercises.toy").leave_locked()
        first.close()
        second = Session(first.layout, first.limits, budget_seconds=30, standby=first.standby)
        toy = second.module("exercises.toy")
        with pytest.raises(StudentError, match="FileNotFoundError|PermissionError"):
            toy.read_any(secret)
        with pytest.raises(StudentError, match="PermissionError"):
            toy.listdir(str(Path(secret).parents[2]))
        assert first.standby.zygote.alive and type(second.worker) is Child
        second.close()
    finally:
        close_session(first)


@pytest.mark.parametrize("mode", FORKING)
def test_a_child_ends_in_the_next_fork_s_round_trip_or_at_once_when_it_crashed(submission, monkeypatch, mode):
    """Closing a property's child kills it and asks the zygote nothing: the next fork collects it
    and clears its folder, in one request. A child that crashed is ended at once, to say how."""
    in_mode(monkeypatch, mode)
    first = open_session(submission, forked=True)
    try:
        first.module("exercises.toy").leave_locked()
        zygote = first.standby.zygote
        sent: list[list[str]] = []
        asking = zygote.worker.request_many

        def counted(payloads, *rest):
            sent.append([codec.loads(payload)["op"] for payload in payloads])
            return asking(payloads, *rest)
        monkeypatch.setattr(zygote.worker, "request_many", counted)
        first.close()
        assert sent == []
        second = Session(first.layout, first.limits, budget_seconds=30, standby=first.standby)
        toy = second.module("exercises.toy")
        assert toy.found_left_behind() is False and sent == [["fork"]]
        with pytest.raises(SandboxFailure, match="exited with status 5"):
            toy.hard_exit(5)
        assert sent == [["fork"], ["end"]]
        second.close()
        assert sent == [["fork"], ["end"]] and first.standby.zygote is zygote and zygote.alive
    finally:
        close_session(first)


def test_student_code_never_runs_in_the_zygote(submission, monkeypatch):
    """The zygote imports only the standard library's modules the submission imports: each
    child imports the submission itself, so none inherits what another's import left (a pipe, a
    shared mapping, a thread, an at-fork hook), and no student code touches the zygote's loop."""
    if not FORKING:
        pytest.skip("no mode here can fork workers")
    in_mode(monkeypatch, FORKING[0])
    layout, limits = Layout(submission), Limits(call_seconds=3)
    standby = Standby(layout, limits, module="exercises.toy")
    assert {"os", "builtins", "subprocess"} <= set(standby.preloads) and "exercises" not in standby.preloads
    try:
        for _ in range(2):
            session = Session(layout, limits, budget_seconds=30, standby=standby)
            assert session.module("exercises.toy").imported_here() is True
            assert type(session.worker) is Child
            session.close()
    finally:
        standby.close()


def test_a_zygote_s_children_import_the_code_it_compiled_and_the_grader_writes_only_what_it_asked(
        submission, monkeypatch):
    """The zygote compiles the package's files once (in a helper, student code never run) and
    its children import that code; an answer naming a file the grader did not ask for, or
    anything but bytes, stops the zygote."""
    if not FORKING:
        pytest.skip("no mode here can fork workers")
    in_mode(monkeypatch, FORKING[0])
    layout, limits = Layout(submission), Limits(call_seconds=3)
    standby = Standby(layout, limits, module="exercises.toy")
    assert "exercises/toy.py" in standby.sources
    try:
        session = Session(layout, limits, budget_seconds=30, standby=standby)
        assert session.module("exercises.toy").read_compiled_code() is True
        zygote = standby.zygote
        for forged in ({"../../outside.py": b"x"}, {"exercises/toy.py": "text"}):
            with pytest.raises(SandboxFailure, match="answered code"):
                zygote._write_compiled(codec.encode(forged), standby.sources)
        assert not (zygote.worker.home / "outside.py").exists()
        session.close()
    finally:
        standby.close()
    fresh = open_session(submission)
    assert fresh.module("exercises.toy").read_compiled_code() is False
    close_session(fresh)


def test_a_file_named_like_the_compiled_code_s_folder_leaves_the_children_forked(submission, monkeypatch):
    if not FORKING:
        pytest.skip("no mode here can fork workers")
    in_mode(monkeypatch, FORKING[0])
    (submission / "exercises" / "__pycache__").write_text("not a folder")
    session = open_session(submission, forked=True)
    try:
        assert session.module("exercises.toy").read_compiled_code() is False  # compiled by the child itself
        assert type(session.worker) is Child
    finally:
        close_session(session)


def test_a_submission_that_names_a_file_like_the_standard_library_gets_fresh_workers(submission):
    """A submission's ``re.py`` stands in for the standard library's in a fresh worker; a zygote
    would have imported the real one for every child, so no zygote serves that submission."""
    assert preloads(submission, "exercises.toy") is not None
    (submission / "re.py").write_text("")
    assert preloads(submission, "exercises.toy") is None


def test_a_module_that_cannot_be_imported_fails_alike_in_a_forked_worker(submission, monkeypatch):
    """A forked worker imports the submission as a fresh one does: a failing import (a syntax
    error, an exception, ``sys.exit``, a missing module) is reported word for word alike."""
    if not FORKING:
        pytest.skip("no mode here can fork workers")
    in_mode(monkeypatch, FORKING[0])
    for module in ("exercises.crashes", "exercises.leaves", "exercises.broken", "exercises.missing"):
        layout, limits = Layout(submission), Limits(call_seconds=3)
        messages = []
        for standby in (None, Standby(layout, limits, module=module)):
            session = Session(layout, limits, budget_seconds=30, standby=standby)
            with pytest.raises(SandboxFailure) as caught:
                session.module(module).f()
            messages.append(str(caught.value))
            if standby is not None:
                assert type(session.worker) is Child
            close_session(session)
        assert messages[0] == messages[1], module


def test_the_worker_starts_on_compiled_code_without_the_heavy_imports(tmp_path, monkeypatch):
    """What a worker imports at each start (about 75 starts a grading): its own modules from the
    compiled code the grader made once (wherever the grader's Python keeps its own, and naming
    no folder of the grader's), and none of json, re, enum, typing or traceback, which were two
    thirds of a start's imports, nor functools and collections (a named tuple's decoding
    imports them), which were half of what was left."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))  # PYTHONPYCACHEPREFIX
    inside.compiled_files.cache_clear()
    try:
        code = inside.compiled_files()
    finally:
        inside.compiled_files.cache_clear()
    assert not (tmp_path / "prefix").exists()
    for name, data in code.items():
        if name.endswith(".pyc"):
            assert marshal.loads(data[16:]).co_filename == Path(name).name.split(".")[0] + ".py"
    inside.write_files(tmp_path)
    assert sorted(p.name for p in (tmp_path / "__pycache__").iterdir()) == sorted(
        f"{Path(name).stem}.{sys.implementation.cache_tag}.pyc" for name in inside.FILES)
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import worker, zygote_loop; print(' '.join(sys.modules))"
    run = subprocess.run([sys.executable, "-S", "-s", "-P", "-B", "-v", "-c", probe, str(tmp_path)],
                         capture_output=True, text=True, check=True)
    loaded = set(run.stdout.split())
    assert {"worker", "zygote_loop", "codec", "cpython", "frames", "landlock"} <= loaded
    assert not loaded & {"json", "re", "enum", "typing", "traceback", "signal", "base64", "functools", "collections",
                              "importlib"}
    for name in inside.FILES:  # python -v names the file each module's code came from
        assert f"code object from '{tmp_path}/__pycache__/{Path(name).stem}." in run.stderr, name


def test_the_grader_counts_each_worker_s_wait_for_a_cpu(session):
    """In every setup, fresh and forked, the grader reads the run delay of the process that answers
    (``/proc/<pid>/schedstat``), so that time a neighbour keeps it from the CPU is not charged to it."""
    assert session.module("exercises.toy").add(1, 2) == 3
    assert session.worker.channel.waits.handle is not None, f"no run delay in {session.mode}"
