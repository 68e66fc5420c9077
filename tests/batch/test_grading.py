"""The command-line contract: grade, resume, determinism, reports and self-check."""

import csv
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from autograder.config import load_course
from tests.conftest import COURSE, ROOT, autograder

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow, pytest.mark.xdist_group(__name__)]

THE_COURSE = load_course(COURSE)  # what the scores below are out of: its full marks and bonus, whatever they are
FULL = THE_COURSE.max_score + THE_COURSE.bonus_points



@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The reference (as a flat folder) and the stubs, graded twice into two folders, then once more."""
    base = tmp_path_factory.mktemp("grading")
    reference = base / "reference"
    shutil.copytree(ROOT / "solutions", reference, ignore=shutil.ignore_patterns("__pycache__"))
    stubs = base / "stubs"
    shutil.copytree(ROOT / "exercises", stubs, ignore=shutil.ignore_patterns("__pycache__"))
    runs = [autograder("grade", str(reference), str(stubs), "--out", f"out{i}", "--jobs", "2", cwd=base)
            for i in (1, 2)]  # relative paths, as a person types them
    again = autograder("grade", str(reference), str(stubs), "--out", str(base / "out1"))
    return base, runs, again


def results(base: Path, out: str, name: str) -> dict:
    return json.loads((base / out / name / "results.json").read_text())


def test_grading_exits_zero_and_scores(graded):
    base, runs, _ = graded
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr
    assert results(base, "out1", "reference")["score"] == FULL  # the bonus included
    stubs = results(base, "out1", "stubs")
    assert stubs["score"] == 0
    assert all("not implemented yet" in test["output"] for test in stubs["tests"])


def test_the_stubs_feedback_is_a_line_per_function_not_written(graded):
    """Untouched stubs once got 74 entries (25 KB), each with its falsifying example: now a line per
    function that is not written yet, and one per exercise for its hidden properties."""
    base, _, _ = graded
    feedback = (base / "out1" / "stubs" / "feedback.md").read_text()
    failed = [line for line in feedback.splitlines() if line.startswith("- FAILED")]
    functions = re.findall(r"^- FAILED \(0/\d+\) (\w+\.\w+) is not implemented yet: ", feedback, re.MULTILINE)
    assert len(functions) == len(set(functions)) >= 25, feedback
    assert len(failed) == len(functions) + len(THE_COURSE.exercises), "one line per exercise's hidden properties"
    assert "Falsifying" not in feedback and len(feedback) < 8000


def test_results_follow_gradescope_schema(graded):
    base, _, _ = graded
    document = results(base, "out1", "reference")
    assert set(document) >= {"score", "tests"}
    for test in document["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "visibility", "output", "extra_data"}
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in ("visible", "after_published")
        assert test["extra_data"]["exercise"] in {e.module for e in THE_COURSE.exercises}
    assert sum(t["max_score"] for t in document["tests"]) == FULL  # the bonus exercises' points included


def test_same_submission_gives_byte_identical_tests(graded):
    base, _, _ = graded
    for name in ("reference", "stubs"):
        first = json.dumps(results(base, "out1", name)["tests"], sort_keys=True)
        assert first == json.dumps(results(base, "out2", name)["tests"], sort_keys=True)


def test_csv_gradebook_and_resume(graded):
    base, _, again = graded
    assert again.returncode == 0
    assert again.stdout.count("unchanged, skipped") == 2
    rows = {row["submission"]: row for row in csv.DictReader((base / "out1" / "grades.csv").open())}
    assert rows["reference"]["score"] == f"{FULL}" and rows["stubs"]["score"] == "0"
    assert rows["reference"]["max_score"] == f"{THE_COURSE.max_score}"
    assert all(rows["reference"][e.module] == f"{e.points}" for e in THE_COURSE.exercises), rows["reference"]
    with sqlite3.connect(base / "out1" / "gradebook.sqlite") as db:
        gradings = db.execute("SELECT submission, digest, seed, engine_version FROM gradings").fetchall()
        assert len(gradings) == 2, "the resumed run added no grading"
        assert {g[2] for g in gradings} == {THE_COURSE.hypothesis.seed}
        assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] > 60


def test_feedback_hides_hidden_inputs(graded):
    base, _, _ = graded
    feedback = (base / "out1" / "stubs" / "feedback.md").read_text()
    assert f"# {THE_COURSE.title}: feedback for stubs" in feedback
    hidden = [t for t in results(base, "out1", "stubs")["tests"] if t["visibility"] == "after_published"]
    assert hidden and all(t["output"].count("\n") == 0 for t in hidden), "hidden feedback is one line"


def test_grader_problems_exit_nonzero(tmp_path):
    unreadable = tmp_path / "unreadable.zip"
    unreadable.write_bytes(b"not a zip")
    graded = autograder("grade", str(unreadable), "--out", str(tmp_path / "out"))
    assert graded.returncode == 0, "an unreadable submission is graded zero, not a grader failure"
    assert "unreadable" in graded.stdout
    broken = tmp_path / "course.yaml"
    broken.write_text("title: x\n")
    bad = autograder("grade", str(tmp_path), "--out", str(tmp_path / "o"), course=broken)
    assert bad.returncode == 2 and "hypothesis: required key is missing" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_mistyped_submission_path_stops_the_batch_before_anyone_is_graded(tmp_path):
    """`grade nobody` is a typing slip, not a student graded zero: one line naming it, exit 2, and no
    grades written, not even the good submission's beside it."""
    out = tmp_path / "grades"
    run = autograder("grade", str(ROOT / "samples" / "partly_wrong"), "nobody", "--out", str(out), cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.strip() == "error: no such submission: nobody (nothing was graded)", run.stderr
    assert not out.exists() and "Traceback" not in run.stderr


def test_self_check_exit_status(tmp_path):
    reference = tmp_path / "mine"
    shutil.copytree(ROOT / "solutions", reference, ignore=shutil.ignore_patterns("__pycache__"))
    good = autograder("check", str(reference))
    assert good.returncode == 0, good.stdout[-3000:]
    assert "hidden properties" in good.stdout
    partly = autograder("check", str(ROOT / "samples" / "partly_wrong"))
    assert partly.returncode == 1
    assert "trace_merges('aaa', 1)[0]: (count, length) of the merge of (97, 97)" in partly.stdout
    assert "ex2_special_tokens is missing from the submission" in partly.stdout


def test_no_sandbox_refuses_official_grading_unless_told(tmp_path):
    """With every layer off (as on a machine without bubblewrap or Landlock), checking against the
    full course and grading exit 3 naming each layer; --unsafe-no-sandbox grades and says so."""
    reference = tmp_path / "mine"
    shutil.copytree(ROOT / "solutions", reference, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"AUTOGRADER_LAYERS": ""}
    for command in (["check", str(reference)], ["grade", str(reference), "--out", str(tmp_path / "out")]):
        run = autograder(*command, course=None, timeout=300, env=env)
        assert run.returncode == 3, run.stdout[-3000:] + run.stderr[-3000:]
        said = " ".join(run.stderr.split())
        assert "refusing to grade" in said and "bwrap: turned off" in said and "landlock: turned off" in said
    run = autograder("--unsafe-no-sandbox", "grade", str(reference), "--out", str(tmp_path / "out"),
                     "--exercise", "ex1_merge_tracing", course=None, timeout=600, env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "UNSAFE" in (tmp_path / "out" / "mine" / "feedback.md").read_text()
    assert "20" in (tmp_path / "out" / "grades.csv").read_text().splitlines()[1].split(",")[1]


def broken_zips(folder: Path) -> list[Path]:
    """One submission for each way a zip or folder was seen to stop a batch."""
    import zipfile

    made = []

    def archive(name: str, members: dict[str, bytes], method=zipfile.ZIP_STORED) -> Path:
        path = folder / f"{name}.zip"
        with zipfile.ZipFile(path, "w", method) as out:
            for member, data in members.items():
                out.writestr(member, data)
        made.append(path)
        return path

    module = b"def get_pair_counts(ids):\n    return {}\n" * 50
    encrypted = archive("encrypted", {"exercises/ex1_merge_tracing.py": module})
    data = bytearray(encrypted.read_bytes())
    for offset in (6, data.rfind(b"PK\x01\x02") + 8):  # the flag bit, in the local and central headers
        data[offset] |= 1
    encrypted.write_bytes(bytes(data))
    for name, method in (("deflate", zipfile.ZIP_DEFLATED), ("bzip2", zipfile.ZIP_BZIP2)):
        path = archive(name, {"exercises/ex1_merge_tracing.py": module}, method)
        data = bytearray(path.read_bytes())
        data[40:60] = b"\xff" * 20  # inside the compressed data
        path.write_bytes(bytes(data))
    archive("file_named_exercises", {"exercises": b"not a folder"})
    archive("file_and_folder", {"exercises/a": b"x", "exercises/a/b.py": b"x"})
    archive("long_name", {"exercises/" + "a" * 300 + ".py": b"x"})
    odd = folder / "odd_name"
    (odd / "exercises").mkdir(parents=True)
    os.close(os.open(bytes(odd / "exercises") + b"/bad\xff.py", os.O_CREAT | os.O_WRONLY))
    return [*made, odd]


def test_one_bad_submission_never_stops_the_batch(tmp_path):
    """Every unreadable submission gets 0 with its reason in grades.csv and its feedback; the
    honest one beside them is graded, and the batch exits 0."""
    alice = tmp_path / "subs" / "alice"
    shutil.copytree(ROOT / "solutions", alice / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    broken = broken_zips(tmp_path / "subs")
    out = tmp_path / "out"
    run = autograder("grade", str(alice), *map(str, broken), "--out", str(out), "--exercise", "ex1_merge_tracing")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Traceback" not in run.stdout + run.stderr
    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert float(rows["alice"]["ex1_merge_tracing"]) == 20
    for path in broken:
        name = path.stem if path.suffix == ".zip" else path.name
        assert float(rows[name]["score"]) == 0 and rows[name]["note"].startswith("unreadable: "), rows[name]
        assert "could not be read" in (out / name / "feedback.md").read_text(), name


def test_grader_processes_keep_hypothesis_s_files_in_the_user_s_cache(tmp_path, monkeypatch):
    """Hypothesis builds its unicode table on first use (about 0.9 s); grader processes share
    it through the user's cache, and use their scratch folder where no cache can be made."""
    from autograder.isolation import hypothesis_storage

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert hypothesis_storage("scratch") == str(tmp_path / "cache" / "autograder" / "hypothesis")
    assert (tmp_path / "cache" / "autograder" / "hypothesis").is_dir()
    (tmp_path / "a file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a file"))
    assert hypothesis_storage("scratch") == "scratch"


def test_a_lone_submission_is_graded_in_parts_as_the_whole_is(tmp_path, monkeypatch):
    """With more jobs than submissions, each exercise's public properties are a part of their own
    on a free grader process, then, once all of those are graded, its hidden ones: the reports
    and the gradebook's row are byte for byte the whole grading's. The grader processes start
    before the submission is staged, so that their start-up and the staging overlap."""
    import time

    from rich.console import Console

    from autograder.batch import pipeline
    from autograder.batch.grader import GraderPool, GraderProcess
    from autograder.batch.pipeline import BatchOptions, grade_many
    from autograder.config import load_course

    course = load_course(ROOT / "course.yaml")
    chosen = ["ex1_merge_tracing", "ex3_wordpiece"]  # a partly wrong one, then a wrong one: feedback in both
    starts, graded, events = [], [], []
    start, grade, stage_many = GraderProcess._start, GraderPool.grade, pipeline.stage_many
    monkeypatch.setattr(GraderProcess, "_start", lambda self: starts.append(self) or events.append("start")
                        or start(self))
    monkeypatch.setattr(pipeline, "stage_many", lambda *a: events.append("stage") or stage_many(*a))

    def timed(self, *args, **kwargs):
        began = time.monotonic()
        answer = grade(self, *args, **kwargs)
        graded.append(("public" if args[-1].public_only else "hidden", began, time.monotonic()))
        return answer

    monkeypatch.setattr(GraderPool, "grade", timed)
    quiet = Console(file=open(os.devnull, "w"))
    rows = {jobs: grade_many(course, [("partly", ROOT / "samples" / "partly_wrong")], tmp_path / f"jobs{jobs}", quiet,
                             BatchOptions(jobs, True, chosen)) for jobs in (1, 2)}
    assert len(starts) == 3, "one grader process for the whole, one for each grading thread"
    assert events == ["start", "stage", "start", "start", "stage"], events
    parts = graded[1:]  # the whole grading's first
    assert sorted(kind for kind, _, _ in parts) == ["hidden", "hidden", "public", "public"]
    assert max(end for kind, _, end in parts if kind == "public") <= min(
        began for kind, began, _ in parts if kind == "hidden"), "a hidden part began before every public one ended"
    assert rows[1][0][1] is not None and rows[1][0][1].score == 15
    assert rows[1][0][1].results == rows[2][0][1].results
    whole, parts = tmp_path / "jobs1" / "partly", tmp_path / "jobs2" / "partly"
    assert sorted(p.name for p in parts.iterdir()) == ["feedback.md", "results.json"]
    assert (whole / "feedback.md").read_bytes() == (parts / "feedback.md").read_bytes()
    documents = [json.loads((folder / "results.json").read_text()) for folder in (whole, parts)]
    assert documents[0] == documents[1] and {t["extra_data"]["exercise"] for t in documents[0]["tests"]} == set(chosen)
    csv_rows = [[row[:-2] for row in csv.reader((tmp_path / f"jobs{jobs}" / "grades.csv").open())] for jobs in (1, 2)]
    assert csv_rows[0] == csv_rows[1]  # all but graded_at and the note


def test_a_lone_submission_is_split_in_a_group_of_exercises_per_idle_grader():
    """Each part costs a grader's round of pytest and zygotes: a lone submission on two jobs is
    graded in two runs of exercises, public then hidden, not in a part per exercise."""
    from autograder.batch.parts import GradingInParts
    from autograder.config import load_course

    course = load_course(ROOT / "course.yaml")
    modules = [e.module for e in course.exercises]
    four = [modules[:1], modules[1:3], modules[3:4], modules[4:]]
    for groups, expected in ((2, [modules[:3], modules[3:]]), (4, four), (9, [[m] for m in modules])):
        parts = GradingInParts(course, "one", None, ROOT / "unused", None, groups)
        try:
            assert parts.exercises == expected * 2 and parts.public == len(expected)
        finally:
            parts.scratch.cleanup()
    assert GradingInParts(course, "one", None, ROOT / "unused", None, 1).exercises == [None]


def test_a_part_that_fails_fails_its_submission_with_its_log(tmp_path, monkeypatch):
    """A submission graded in parts gets no grade if one part's grader fails, and keeps that
    part's log."""
    from rich.console import Console

    from autograder.batch.grader import GraderPool
    from autograder.batch.pipeline import BatchOptions, grade_many
    from autograder.config import load_course

    course = load_course(ROOT / "course.yaml")
    grade = GraderPool.grade

    def failing(self, course, name, staged, folder, part):
        if part.exercises == ["ex3_wordpiece"]:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "grader.log").write_text("why it died\n")
            return None, 0.5, "grader failed (exit code 9)"
        return grade(self, course, name, staged, folder, part)

    monkeypatch.setattr(GraderPool, "grade", failing)
    chosen = ["ex1_merge_tracing", "ex3_wordpiece"]
    rows = grade_many(course, [("partly", ROOT / "samples" / "partly_wrong")], tmp_path / "out",
                      Console(file=open(os.devnull, "w")), BatchOptions(2, True, chosen))
    assert rows == [("partly", None, "grader failed (exit code 9), see partly/grader.log")]
    assert (tmp_path / "out" / "partly" / "grader.log").read_text() == "why it died\n"
    assert not (tmp_path / "out" / "partly" / "results.json").exists()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("capsh"), reason="needs root and capsh to lose DAC_OVERRIDE")
def test_a_course_file_the_grader_cannot_read_stops_the_batch_before_anyone_is_graded(tmp_path):
    """One clear line and exit status 2, and no student row: not zeros for everyone, nor a traceback."""
    import subprocess
    import sys

    course = tmp_path / "toy"
    shutil.copytree(ROOT / "tests" / "fixtures" / "toy_course", course, ignore=shutil.ignore_patterns("__pycache__"))
    (course / "answers" / "ex_sum.py").chmod(0)
    run = subprocess.run(["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", 'exec "$@"', "sh",
                          sys.executable, "-m", "autograder", "--course", str(course / "course.yaml"), "grade",
                          str(course / "answers"), "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200",
                                                                             "PYTHONPATH": str(ROOT)})
    said = " ".join(run.stderr.split())
    assert run.returncode == 2, run.stdout + run.stderr
    assert said.startswith("error: cannot read the course file") and "answers/ex_sum.py" in said, said
    assert "Traceback" not in run.stderr and not (tmp_path / "out" / "answers").exists()


@pytest.mark.parametrize("jobs", ["0", "-1"])
def test_every_command_with_jobs_refuses_fewer_than_one(tmp_path, jobs):
    """`--jobs 0` would grade nothing: every command that takes --jobs refuses it in one line, exit 2."""
    import argparse

    from autograder.cli import _parser

    (commands,) = [a.choices for a in _parser("autograder")._actions if isinstance(a, argparse._SubParsersAction)]
    with_jobs = {name for name, command in commands.items()
                 if any("--jobs" in action.option_strings for action in command._actions)}
    arguments = {"grade": [str(ROOT / "samples" / "partly_wrong"), "--out", str(tmp_path / "grades")],
                 "demo": ["--out", str(tmp_path / "demo")], "mutate": ["ex1_merge_tracing"],
                 "nbgrader-autograde": [str(tmp_path / "nbcourse")]}
    assert with_jobs == set(arguments), "a new command with --jobs: add it here"
    for name, given in arguments.items():
        run = autograder(name, *given, "--jobs", jobs, cwd=tmp_path)
        assert run.returncode == 2, (name, run.stdout + run.stderr)
        assert run.stderr.strip() == f"error: --jobs {jobs}: give at least 1 (how many run at once)", run.stderr
        assert not list(tmp_path.iterdir()), f"{name} wrote {list(tmp_path.iterdir())}"


def test_an_out_folder_that_is_a_file_is_one_line(tmp_path):
    """`grade --out` names a folder: a file there is refused in one line, before anyone is graded."""
    taken = tmp_path / "grades"
    taken.write_text("not a folder")
    run = autograder("grade", str(ROOT / "samples" / "partly_wrong"), "--out", str(taken))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stdout + run.stderr
    assert run.stderr.strip() == f"error: --out {taken}: a file; name a folder"
    assert taken.read_text() == "not a folder"


def test_a_property_that_meets_an_internal_error_fails_the_grading_not_the_student(tmp_path):
    """A reference that does not import (the course is whole, so the check lets it by) fails the
    grading of everyone it meets, exit 2, with the reason in the batch's row and the grader's log:
    never a student's lost points with "tell your instructor", nor a results.json that says so."""
    course = shutil.copytree(ROOT / "tests" / "fixtures" / "toy_course", tmp_path / "toy",
                             ignore=shutil.ignore_patterns("__pycache__"))
    alice = shutil.copytree(course / "answers", tmp_path / "alice")  # a correct submission
    reference = course / "answers" / "ex_sum.py"
    reference.write_text("import a_helper_the_course_forgot\n" + reference.read_text())
    out = tmp_path / "out"
    run = autograder("grade", str(alice), "--out", str(out), course=course / "course.yaml")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "grader failed" in run.stdout and "Traceback" not in run.stderr, run.stdout
    assert "a_helper_the_course_forgot" in " ".join(run.stdout.split()), run.stdout  # the row names why
    assert not (out / "alice" / "results.json").exists()
    log = (out / "alice" / "grader.log").read_text()
    assert "the grader hit an internal error (ModuleNotFoundError: No module named 'a_helper_the_course_forgot')" in log


def test_a_grading_that_fails_is_a_row_that_says_so_until_it_succeeds(tmp_path, monkeypatch):
    """A grader that overruns its time gives its submission no grade, but never a missing student:
    grades.csv has its row with no score and the reason, the gradebook keeps the failure, and the
    batch's rows (the table, the exit status) carry it. A later grading that succeeds replaces it."""
    from rich.console import Console

    from autograder.batch import grader
    from autograder.batch.gradebook import Gradebook
    from autograder.batch.pipeline import BatchOptions, grade_many
    from autograder.config import load_course

    course = load_course(ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml")
    quiet, out = Console(file=open(os.devnull, "w")), tmp_path / "out"
    submissions = [("answers", course.path(course.solutions)), ("stubs", course.path(course.package))]
    real = grader.grader_seconds
    with monkeypatch.context() as hurried:
        hurried.setattr(grader, "grader_seconds", lambda course, exercises=None: 0.01)
        rows = grade_many(course, submissions, out, quiet, BatchOptions(1, True, None))
    assert [(name, grade) for name, grade, _ in rows] == [("answers", None), ("stubs", None)]
    table = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert sorted(table) == ["answers", "stubs"]
    assert all(row["score"] == "" and row["note"].startswith("grader failed") for row in table.values())
    book = Gradebook(out)
    assert len(book.connection.execute("SELECT * FROM failures").fetchall()) == 2
    book.close()
    assert real(course) > 1
    grade_many(course, submissions, out, quiet, BatchOptions(1, False, None))
    table = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert (table["answers"]["score"], table["stubs"]["score"]) == ("10", "0") and table["answers"]["note"] == ""
    with monkeypatch.context() as hurried:  # a forced regrade that fails: the earlier grade no longer stands
        hurried.setattr(grader, "grader_seconds", lambda course, exercises=None: 0.01)
        grade_many(course, submissions[:1], out, quiet, BatchOptions(1, True, None))
    assert next(csv.DictReader((out / "grades.csv").open()))["score"] == ""
    kept = sorted(path.name for path in (out / "answers").iterdir())
    assert kept == ["grader.log"], f"the failed regrade left {kept}: an earlier report would stand for a grade"
    rows = grade_many(course, submissions[:1], out, quiet, BatchOptions(1, False, None))
    assert rows[0][1] is not None and next(csv.DictReader((out / "grades.csv").open()))["score"] == "10"
