"""The Gradescope autograder: unpacked into a stand-in for /autograder, run_autograder grades a
correct and a wrong submission into a results.json that Gradescope's schema accepts, with
the solutions readable by root alone."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest

from autograder.config import load_course
from autograder.delivery import gradescope
from autograder.delivery.gradescope import SCHEMA, build_gradescope
from autograder.errors import GraderError
from tests.conftest import COURSE, ROOT, autograder

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow]
TOY = ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml"  # builds in a second

THE_COURSE = load_course(COURSE)
FULL = THE_COURSE.max_score + THE_COURSE.bonus_points  # what full marks score, the bonus included


# Gradescope's documented results.json format, as the engine ships it for `gradescope --run`.
RESULTS_SCHEMA = json.loads(SCHEMA.read_text())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    run = autograder("gradescope", "--out", str(out), course=None, timeout=300)
    assert run.returncode == 0, run.stderr + run.stdout
    return out


def run_autograder(bundle: Path, root: Path, submission: Path, *arguments: str,
                   env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Lay out ``root`` as Gradescope's /autograder and run run_autograder there, as root would."""
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    shutil.copytree(submission, root / "submission")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable, **(env or {})}
    env.pop("PYTHONPATH", None)
    run = subprocess.run(["bash", str(root / "run_autograder"), *arguments], cwd="/", env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stderr + run.stdout
    return run


def graded(bundle: Path, root: Path, submission: Path, env: dict[str, str] | None = None) -> tuple[dict, float]:
    """run_autograder on ``submission``: its results.json (checked against Gradescope's format) and the seconds."""
    started = time.monotonic()
    run_autograder(bundle, root, submission, env=env)
    seconds = time.monotonic() - started
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, RESULTS_SCHEMA)
    return results, seconds


def test_the_bundle_holds_the_scripts_and_the_whole_course(bundle):
    names = set(zipfile.ZipFile(bundle).namelist())
    assert {"setup.sh", "run_autograder", "course.yaml", "autograder/cli.py", "requirements.lock"} <= names
    assert {f"solutions/{p.name}" for p in (ROOT / "solutions").glob("*.py")} <= names
    assert {f"suites/{p.name}" for p in (ROOT / "suites").glob("ex*.py")} <= names
    with zipfile.ZipFile(bundle) as archive:
        for script in ("setup.sh", "run_autograder"):
            assert archive.getinfo(script).external_attr >> 16 & 0o111
            syntax = subprocess.run(["bash", "-n"], input=archive.read(script), capture_output=True)
            assert syntax.returncode == 0, syntax.stderr


def test_a_correct_submission_scores_full_marks(bundle, tmp_path):
    results, seconds = graded(bundle, tmp_path, ROOT / "solutions")
    print(f"run_autograder on the reference: {seconds:.1f} s")
    # the bonus included: Gradescope takes a score above the maximum as extra credit
    assert results["score"] == FULL
    assert all(test["status"] == "passed" for test in results["tests"])
    assert "Student code ran in a sandbox" in results["output"]


def test_setup_records_the_examples_that_each_grading_then_replays(bundle, tmp_path):
    """setup.sh's ``run_autograder --record`` grades the solutions into root's cache (here a
    fresh one); a submission's grading then replays every recorded property (nothing is
    recorded again: a property is saved only when hypothesis ran it and it passed)."""
    assert 'run_autograder" --record' in zipfile.ZipFile(bundle).read("setup.sh").decode()
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    run_autograder(bundle, tmp_path / "image", ROOT / "exercises", "--record", env=cache)
    recorded = tmp_path / "cache" / "autograder" / "hypothesis"
    made = {path.name: path.stat().st_mtime_ns for path in recorded.glob("autograder-examples-*/*.json")}
    assert len(made) > 50 and not (tmp_path / "image" / "results").exists()
    results, _ = graded(bundle, tmp_path / "graded", ROOT / "solutions", env=cache)
    assert results["score"] == FULL
    assert {path.name: path.stat().st_mtime_ns for path in recorded.glob("autograder-examples-*/*.json")} == made


def test_a_wrong_submission_loses_points(bundle, tmp_path):
    results, _ = graded(bundle, tmp_path, ROOT / "samples" / "partly_wrong")
    assert 0 < results["score"] < THE_COURSE.max_score
    assert {t["status"] for t in results["tests"]} == {"passed", "failed"}


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="Gradescope runs the autograder as root")
def test_the_solutions_and_suites_are_readable_by_root_only(bundle, tmp_path):
    (tmp_path / "empty").mkdir()
    results, _ = graded(bundle, tmp_path, tmp_path / "empty")
    assert results["score"] == 0 and "could not be read" in results["output"]
    for private in ("solutions", "suites"):
        folder = tmp_path / "source" / private
        assert all(p.stat().st_mode & 0o077 == 0 for p in [folder, *folder.rglob("*")])
    nobody = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat",
                             str(tmp_path / "source" / "solutions" / "ex1_merge_tracing.py")], capture_output=True)
    assert nobody.returncode != 0 and b"Permission denied" in nobody.stderr


def test_a_bundle_of_one_exercise_replayed_keeps_its_results_and_names_each_failure(tmp_path):
    """``gradescope --run --exercise X --out DIR`` (a weekly notebook's bundle): results.json holds
    that exercise alone, out of its own points, stays at the path printed, and each failure is
    summed up by its property and its reason."""
    first = "ex1_merge_tracing"
    out = tmp_path / "replayed"
    done = autograder("gradescope", "--run", str(ROOT / "samples" / "partly_wrong"), "--exercise", first,
                      "--out", str(out), timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = " ".join(done.stdout.split())
    kept = re.search(r"results\.json kept in (\S+)", said)
    assert kept, said[-2000:]
    results = json.loads(Path(kept[1]).read_text())
    jsonschema.validate(results, RESULTS_SCHEMA)
    assert {t["extra_data"]["exercise"] for t in results["tests"]} == {first}
    assert results["score"] == 15 and sum(t["max_score"] for t in results["tests"]) == 20
    failed = re.findall(r"^failed {2}(\S+: \w+) \((public|hidden)\): (.*)$", done.stdout, re.M)
    assert len(failed) == sum(t["status"] == "failed" for t in results["tests"]) > 1, done.stdout
    assert all(reason.strip() not in ("", ")") for *_, reason in failed)
    assert any(kind == "public" and reason.startswith("trace_merges('aaa', 1)[0]: (count, length)")
               for _, kind, reason in failed)
    assert {reason for _, kind, reason in failed if kind == "hidden"} <= {"wrong result", "not implemented yet"}


def windows_zip(path: Path) -> Path:
    """The reference as a Windows zip hands it in: ``heidi\\exercises\\<module>.py`` (backslashes,
    made on FAT), CRLF line endings."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for module in sorted((ROOT / "solutions").glob("*.py")):
            info = zipfile.ZipInfo(f"heidi\\exercises\\{module.name}")
            info.create_system = 0  # MS-DOS
            archive.writestr(info, module.read_bytes().replace(b"\n", b"\r\n"))
    return path


def test_a_windows_zip_grades_the_same_on_every_channel(tmp_path):
    """``grade``, ``gradescope --run`` and ``check`` take the zip in through the same code, and so
    does ``grade`` of the folder an unzip that keeps the backslashes leaves (Gradescope's own
    unzip may be one): each grades it as the reference. nbgrader takes notebooks, never zips."""
    first = "ex1_merge_tracing"
    archive = windows_zip(tmp_path / "heidi.zip")
    kept = tmp_path / "kept" / "heidi"
    kept.mkdir(parents=True)
    with zipfile.ZipFile(archive) as opened:
        for info in opened.infolist():  # what Linux unzip keeps: one file per member, its name as it is
            (kept / info.filename).write_bytes(opened.read(info))
    documents = {}
    for name, submission in (("zip", archive), ("kept", kept), ("reference", ROOT / "solutions")):
        graded = autograder("grade", str(submission), "--out", str(tmp_path / name), "--exercise", first)
        assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
        documents[name] = json.loads((tmp_path / name / submission.stem / "results.json").read_text())
    replayed = autograder("gradescope", "--run", str(archive), "--exercise", first, "--out", str(tmp_path / "gs"))
    assert replayed.returncode == 0, replayed.stdout[-3000:] + replayed.stderr[-3000:]
    documents["gradescope"] = json.loads((tmp_path / "gs" / "results" / "results.json").read_text())
    assert documents["reference"]["score"] == 20
    for name in ("zip", "kept", "gradescope"):
        assert (documents[name]["score"], documents[name]["tests"]) == \
            (documents["reference"]["score"], documents["reference"]["tests"]), name
    rows = []
    for submission in (archive, ROOT / "solutions"):
        checked = autograder("check", str(submission), "--exercise", first)
        assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
        rows.append([line for line in checked.stdout.splitlines() if first in line and "│" in line])
    assert rows[0] == rows[1] and len(rows[0]) == 1 and "nothing" in rows[0][0], rows


def test_a_bundle_that_fails_keeps_the_last_and_a_folder_is_one_line(tmp_path, monkeypatch):
    """The zip is written beside --out and moved into place at the end: a build that fails keeps
    the bundle already there, and leaves nothing else; an --out that is a folder is one line."""
    course = load_course(TOY)
    out = tmp_path / "autograder.zip"
    build_gradescope(course, out)
    before = out.read_bytes()

    def failing(archive, path, name):
        raise GraderError("the zip could not be written")

    monkeypatch.setattr(gradescope, "_add", failing)
    with pytest.raises(GraderError, match="zip"):
        build_gradescope(course, out)
    assert list(tmp_path.iterdir()) == [out] and out.read_bytes() == before
    run = autograder("gradescope", "--out", str(tmp_path), course=TOY)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.strip() == f"error: --out {tmp_path}: a folder; name the file to write in it"
