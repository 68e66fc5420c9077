"""Hostile submissions at grading level: each attack costs only the properties it touches.

Every attack below is the reference solution of exercise 1 with ``get_pair_counts``
replaced by hostile code. The properties that call ``get_pair_counts`` must score 0, every
other property of the exercise keeps its points, the grade completes, nothing outside the
output folder changes and no sandbox process outlives the grading. (The process check
of the batch test sees every grader on the machine: run it where no other grading runs.)
"""

import ast
import hashlib
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.engine.run import Scope, run_suites
from autograder.isolation import isolation
from autograder.isolation.process import SANDBOX_UIDS, sandbox_uid
from tests.conftest import ROOT, autograder

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow]

COURSE = load_course(ROOT / "course.yaml")
# a memory bomb fills its worker's limit page by page on every try of the property it fails, and
# a grading tries a failing property many times: the attacks are graded under a quarter of the
# course's limit, which ex1's reference stays well under
ATTACKED = COURSE.model_copy(update={"limits": COURSE.limits.model_copy(update={"memory_mb": 256})})
EXERCISE = "ex1_merge_tracing"
SUITE = ROOT / "suites" / f"{EXERCISE}.py"
STRONG = isolation().holds

ATTACKS = {
    "sys_exit": "import sys\n    sys.exit(0)",
    "os_exit": "import os\n    os._exit(3)",
    "hang": "while True:\n        pass",
    "memory_bomb": "hog = []\n    while True:\n        hog.append(bytearray(64 << 20))",
    "fork_bomb": ("import os, time\n    for _ in range(500):\n        try:\n            pid = os.fork()\n"
                  "        except OSError:\n            break\n        if pid == 0:\n            time.sleep(120)\n"
                  "            os._exit(0)\n    return {}"),
    "read_solutions": f"return eval(open({str(ROOT / 'solutions' / 'ex1_merge_tracing.py')!r}).read()[:0] or '{{}}')",
    "import_solutions": "from solutions.ex1_merge_tracing import get_pair_counts as real\n    return real(ids)",
    "socket": ("import socket\n    socket.create_connection(('127.0.0.1', 80), timeout=1)\n"
               "    return {}"),
    "forge_results": ("import glob\n    for path in glob.glob('/tmp/**/results.json', recursive=True):\n"
                      "        open(path, 'w').write('{\"score\": 100, \"tests\": []}')\n"
                      "    raise RuntimeError('forged nothing')"),
    "patch_builtins": ("import builtins, sys\n    builtins.len = lambda x: 0\n    sys.modules['json'] = None\n"
                       "    return {}"),
    "always_equal": "class Same:\n        def __eq__(self, other):\n            return True\n    return Same()",
    "flood_output": "for _ in range(100):\n        print('x' * (1 << 20))\n    return {}",
    "base_exception": "class Out(BaseException):\n        pass\n    raise Out('escape')",
}


def attacked_properties() -> set[str]:
    """The suite's properties that call ``student.get_pair_counts``: by name, or as one of the
    graded functions the shared rules call (``expect_bad_input_rules``)."""
    tree = ast.parse(SUITE.read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
            and ("student.get_pair_counts" in ast.unparse(node) or "expect_bad_input_rules" in ast.unparse(node))}


def submission(folder: Path, ex1_source: str | None) -> Path:
    package = folder / "exercises"
    shutil.copytree(ROOT / "solutions", package, ignore=shutil.ignore_patterns("__pycache__"))
    if ex1_source is None:
        (package / f"{EXERCISE}.py").unlink()
    else:
        (package / f"{EXERCISE}.py").write_text(ex1_source)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def with_attack(body: str) -> str:
    source = (ROOT / "solutions" / f"{EXERCISE}.py").read_text()
    return source + f"\n\ndef get_pair_counts(ids):\n    {body}\n"


def sandbox_processes(uids=SANDBOX_UIDS) -> set[str]:
    """Processes running as a sandbox user (the uids graders drop to), as "uid pid" strings."""
    out = subprocess.run(["ps", "-eo", "uid=,pid=,stat="], capture_output=True, text=True).stdout
    rows = [line.split() for line in out.splitlines()]
    return {f"{uid} {pid}" for uid, pid, stat in rows if int(uid) in uids and not stat.startswith("Z")}


def own_sandbox_uid() -> range:
    """This grader's two private uids (the worker serving and the one booting), if it has them."""
    uid = sandbox_uid()
    return range(uid, uid + 2) if "uid" in isolation().layers else range(0)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_costs_only_the_attacked_properties(tmp_path, attack):
    if attack in ("read_solutions", "import_solutions", "socket") and not STRONG:
        pytest.skip("needs bubblewrap or Landlock: without them nothing hides files or the network")
    results, _ = run_suites(ATTACKED, submission(tmp_path, with_attack(ATTACKS[attack])), Scope([EXERCISE]))
    failed = {r.name for r in results if not r.passed}
    targets = attacked_properties()
    assert "test_pair_counts_overlapping_in_first_occurrence_order" in failed
    assert failed <= targets, f"unattacked properties lost points: {failed - targets}"
    assert sum(r.score for r in results) == COURSE.exercise(EXERCISE).points - sum(
        r.points for r in results if r.name in failed)
    assert sandbox_processes(own_sandbox_uid()) == set()


@pytest.mark.parametrize("source, message", [
    ("def trace_merges(:\n", "SyntaxError"),
    ("raise RuntimeError('boom at import')\n", "RuntimeError: boom at import"),
    ("import sys\nsys.exit(0)\n", "SystemExit"),
    (None, "exercises.ex1_merge_tracing is missing from the submission"),
])
def test_broken_module_fails_its_exercise_with_a_clear_message(tmp_path, source, message):
    results, _ = run_suites(COURSE, submission(tmp_path, source), Scope([EXERCISE]))
    assert results and all(not r.passed and r.score == 0 for r in results)
    visible = [r for r in results if not r.hidden]
    assert all(message in r.output for r in visible), visible[0].output
    if source and "SyntaxError" in message:
        assert 'File "exercises/ex1_merge_tracing.py", line 1' in visible[0].output


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and ".venv" not in path.parts and "__pycache__" not in path.parts:
            digest.update(str(path).encode() + path.read_bytes())
    return digest.hexdigest()


def test_batch_with_hostile_submissions_completes_and_touches_nothing_else(tmp_path):
    """The CLI grades a mix of hostile submissions in parallel; the honest one gets full marks."""
    subs = tmp_path / "subs"
    submission(subs / "honest", (ROOT / "solutions" / f"{EXERCISE}.py").read_text())
    submission(subs / "syntax", "def trace_merges(:\n")
    submission(subs / "forger", with_attack(ATTACKS["forge_results"]))
    with zipfile.ZipFile(subs / "escape.zip", "w") as archive:
        archive.writestr("exercises/ex1_merge_tracing.py", "x = 1\n")
        archive.writestr("../../outside.py", "print('escaped')\n")
    (subs / "linked").mkdir()
    (subs / "linked" / "ex1_merge_tracing.py").symlink_to(ROOT / "solutions" / f"{EXERCISE}.py")
    before = tree_digest(ROOT)
    running = sandbox_processes()  # other graders on this machine, if any, are not ours to judge
    out = tmp_path / "out"
    run = autograder("grade", *sorted(str(p) for p in subs.iterdir()), "--out", str(out), "--jobs", "2",
                     course=None, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    scores = {line.split(",")[0]: float(line.split(",")[1])
              for line in (out / "grades.csv").read_text().splitlines()[1:]}
    full = COURSE.max_score + COURSE.bonus_points  # the bonus included
    assert scores["honest"] == full
    assert scores["syntax"] == full - COURSE.exercise(EXERCISE).points
    assert scores["escape"] == 0
    assert "points outside the submission" in (out / "escape" / "feedback.md").read_text()
    assert scores["linked"] == 0 and "links" in (out / "linked" / "feedback.md").read_text()
    assert full - COURSE.exercise(EXERCISE).points <= scores["forger"] < full
    assert '"score": 100, "tests": []' not in (out / "honest" / "results.json").read_text()
    assert not (tmp_path / "outside.py").exists() and not (subs.parent.parent / "outside.py").exists()
    assert tree_digest(ROOT) == before
    assert orphans(sandbox_processes() - running) == set()


def orphans(processes: set[str]) -> set[str]:
    """Of sandbox processes ("uid pid"), those whose grader process is gone: a grader's workers
    run as its own uids (``sandbox_uid``), so a worker outliving its grader was left behind,
    while one whose grader lives belongs to a grading still going on (another test process's)."""
    def grader_alive(uid: int) -> bool:
        return Path(f"/proc/{(uid - SANDBOX_UIDS.start) // 2}").exists()
    return {p for p in processes if not grader_alive(int(p.split()[0]))}


def _graded_with_a_tight_budget(folder: Path) -> tuple[list[tuple[str, bool, str]], float]:
    """The hang graded on exercise 1 with a 1.5 s budget: each property's name, pass and output."""
    limits = COURSE.limits.model_copy(update={"call_seconds": 2.0, "exercise_seconds": 1.5})
    tight = COURSE.model_copy(update={"limits": limits})
    results, seconds = run_suites(tight, submission(folder, with_attack(ATTACKS["hang"])), Scope([EXERCISE]))
    return [(r.name, r.passed, r.output) for r in results], seconds


@pytest.mark.parametrize("records", [False, True], ids=["no-records", "records"])
def test_exercise_budget_ends_the_exercise_once_spent(tmp_path, monkeypatch, records):
    """A hang spends the exercise's whole budget: it fails, and so does every property after it,
    quickly; the same whether the honest examples were recorded before (the hang then runs past
    its time in the replay, whose session is dropped, and hypothesis's run meets it at once)."""
    monkeypatch.setenv("AUTOGRADER_RECORDS", str(tmp_path / "records") if records else "off")
    if records:
        honest, _ = run_suites(COURSE, submission(tmp_path / "honest", (ROOT / "solutions" / f"{EXERCISE}.py")
                                                  .read_text()), Scope([EXERCISE]))
        assert all(r.passed for r in honest) and any((tmp_path / "records").iterdir())
    results, seconds = _graded_with_a_tight_budget(tmp_path / "hang")
    (name, _, output), *rest = results
    assert name == "test_pair_counts_overlapping_in_first_occurrence_order"
    assert re.search(r"did not return within the 1\.\d+ s left of its property's time budget", output)
    assert rest and all(not passed for _, passed, _ in rest)
    assert all(("time budget" in output) for _, _, output in rest)
    assert seconds < 30
