"""What an instructor reads of a batch, with nothing graded: grades.csv, feedback.md and the
console's table for a grading of some exercises (``grade --exercise``), unreadable submissions
on the progress bar and in the gradebook, an 80-column terminal, and the command line's help."""

from __future__ import annotations

import csv
import re
import sqlite3

import pytest
from rich.console import Console

from autograder.batch.gradebook import Gradebook
from autograder.batch.pipeline import BatchOptions, grade_many
from autograder.cli import main
from autograder.config import load_course
from autograder.engine.report_files import feedback_markdown
from autograder.reports.terminal import grades_table, print_grades
from autograder.results import Grade, PropertyResult
from tests.conftest import COURSE, ROOT

FIRST = "ex1_merge_tracing"


@pytest.fixture(scope="module")
def course():
    return load_course(COURSE)


def first_only(course) -> Grade:
    """A grading of exercise 1 alone (``grade --exercise ex1_merge_tracing``): 15 of its 20 points."""
    return Grade((PropertyResult(FIRST, "test_a", 15, 15, True, False, ""),
                  PropertyResult(FIRST, "test_b", 5, 0, False, False, "b\n\nwrong")), ("isolation note",), 2.0)


def test_a_grading_of_one_exercise_records_that_exercise_alone(course, tmp_path):
    """No zeros for the exercises that were not graded: feedback.md names only the one graded and
    scores it out of its own points; grades.csv leaves the others' cells empty."""
    grade = first_only(course)
    text = feedback_markdown(course, "alice", grade)
    assert "**Score: 15 / 20**" in text and f"Only {FIRST} was graded this time." in text
    assert re.findall(r"^## (\w+)", text, re.M) == [FIRST]
    book = Gradebook(tmp_path)
    book.record("alice", {"digest": "d", "course_digest": "c", "seed": 1, "engine_version": "v", "isolation": "none",
                          "max_score": course.full_marks([FIRST])}, grade, 2.0)
    book.write_csv(course, tmp_path / "grades.csv")
    book.close()
    (row,) = csv.DictReader((tmp_path / "grades.csv").open())
    assert (row["score"], row["max_score"], row[FIRST]) == ("15", "20", "15")
    assert [row[e.module] for e in course.exercises[1:]] == [""] * (len(course.exercises) - 1)


def test_the_grades_table_shows_the_graded_exercises_and_whole_notes_in_80_columns(course):
    console = Console(record=True, width=80)
    grade = Grade.unreadable(course, "The submission could not be read: bad zip")
    note = "unreadable: broken.zip: not a readable zip file (File is not a zip file)"
    print_grades(console, course, [("partly_wrong", grade, note), ("alice", Grade.joined([grade], 1.0), "2.1 s")])
    screen = console.export_text()
    assert "…" not in screen and max(map(len, screen.splitlines())) <= 80
    lines = screen.splitlines()
    start = next(line.index(" note") + 1 for line in lines if line.rstrip().endswith(" note"))
    first = next(index for index, line in enumerate(lines) if "partly_wrong" in line)
    assert " ".join(line[start:] for line in lines[first:]).split() == [*note.split(), "2.1", "s"]
    console = Console(record=True, width=80)
    print_grades(console, course, [("alice", first_only(course), "2.0 s")])
    screen = console.export_text()
    assert "ex1" in screen and "ex2" not in screen and "/20" in screen and "bonus" not in screen


def test_every_total_is_shown_with_and_without_the_bonus_as_grades_csv_defines_them(course, tmp_path):
    """The console's table and grades.csv: ``score`` (every point, the bonus's too) and
    ``score_without_bonus`` (the exercises that are not bonus, out of ``max_score``)."""
    grade = Grade(tuple(PropertyResult(e.module, "p", e.points, e.points - 1, False, False, "p\n\nwrong")
                        for e in course.exercises), (), 1.0)
    table = grades_table(course, [("alice", grade, "")])
    headers = [" ".join(str(column.header).split()) for column in table.columns]
    cells = {header: next(iter(column.cells)) for header, column in zip(headers, table.columns, strict=True)}
    everything = sum(e.points - 1 for e in course.exercises)
    regular = sum(e.points - 1 for e in course.exercises if not e.bonus)
    assert cells[f"total /{course.max_score} +{course.bonus_points} bonus"] == f"{everything:g}"
    assert cells[f"no bonus /{course.max_score}"] == f"{regular:g}" and regular < everything
    book = Gradebook(tmp_path)
    book.record("alice", {"digest": "d", "course_digest": "c", "seed": 1, "engine_version": "v", "isolation": "none",
                          "max_score": course.max_score}, grade, 1.0)
    book.write_csv(course, tmp_path / "grades.csv")
    book.close()
    (row,) = csv.DictReader((tmp_path / "grades.csv").open())
    assert (row["score"], row["score_without_bonus"], row["max_score"]) == (
        f"{everything:g}", f"{regular:g}", f"{course.max_score}")
    only_first = grades_table(course, [("alice", first_only(course), "")])
    assert not any("no bonus" in str(column.header) for column in only_first.columns), "no bonus graded: one total"


@pytest.mark.sandbox
def test_an_unreadable_submission_is_counted_on_the_bar_and_recorded_once(course, tmp_path):
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"not a zip")
    out = tmp_path / "out"
    for _ in range(2):  # a rerun finds the same unreadable file
        console = Console(record=True, width=120)
        rows = grade_many(course, [("broken", broken)], out, console, BatchOptions(jobs=2))
        assert rows[0][2].startswith("unreadable: ")
        assert re.search(r"\b1/1\b", console.export_text()), console.export_text()
    with sqlite3.connect(out / "gradebook.sqlite") as book:
        assert book.execute("SELECT COUNT(*) FROM gradings").fetchone()[0] == 1
    rows = grade_many(course, [("broken", broken)], out, Console(file=open("/dev/null", "w")),
                      BatchOptions(jobs=2, exercises=[FIRST]))
    with sqlite3.connect(out / "gradebook.sqlite") as book:
        assert book.execute("SELECT COUNT(*) FROM gradings").fetchone()[0] == 2, "another grading: another row"
    assert [r.exercise for r in rows[0][1].results] == [FIRST]
    (row,) = csv.DictReader((out / "grades.csv").open())
    assert (row["digest"], row["exercises"]) == ("unreadable", FIRST), "the digest is the content's alone"


@pytest.mark.sandbox
def test_an_unreadable_submission_s_feedback_gives_its_reason_once(course, tmp_path):
    """It once repeated the reason under every exercise, seven times in all."""
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"not a zip")
    grade_many(course, [("broken", broken)], tmp_path / "out", Console(file=open("/dev/null", "w")))
    feedback = (tmp_path / "out" / "broken" / "feedback.md").read_text(encoding="utf-8")
    assert feedback.count("not a readable zip file") == 1, feedback
    assert feedback.count("Not graded: the submission could not be read") == len(course.exercises)


@pytest.mark.sandbox
@pytest.mark.data  # the course file is checked, its fetched data included, before the option
def test_an_unknown_exercise_is_one_clear_error(capsys):
    assert main(["--course", str(COURSE), "grade", str(ROOT / "exercises"), "--out", "/nonexistent",
                 "--exercise", "ex9_nothing"]) == 2
    said = capsys.readouterr()
    assert "--exercise ex9_nothing: not an exercise of course.yaml" in " ".join((said.out + said.err).split())


def test_a_replay_of_a_built_bundle_takes_no_exercise(capsys, tmp_path):
    """``--exercise`` is the bundle's: with ``--zip`` (a bundle built before) it would go unheard."""
    assert main(["--course", str(COURSE), "gradescope", "--run", str(ROOT / "exercises"), "--zip",
                 str(tmp_path / "a.zip"), "--exercise", FIRST]) == 2
    assert "give it when the bundle is built" in " ".join(capsys.readouterr().err.split())


def test_a_replay_whose_grading_failed_is_summed_up(monkeypatch, capsys):
    """run_autograder's fallback results.json, when grading itself failed, has no tests."""
    from autograder.commands import gradescope
    from autograder.delivery.gradescope import Replay

    said = "The autograder could not grade this submission (exit 2)."
    monkeypatch.setattr(gradescope, "replay", lambda *args: Replay({"score": 0, "output": said}, 1.0, None))
    assert main(["--course", str(COURSE), "gradescope", "--run", str(ROOT / "exercises")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert said in out and "score 0, 0 of 0 tests passed" in out and "results.json not kept" in out


def test_a_replay_names_every_failure_s_reason_and_both_totals(course, monkeypatch, capsys):
    """An unreadable submission's failure lines once ended in an empty reason; a score that
    holds a bonus is given without it too, as grades.csv gives it."""
    from autograder.commands import gradescope
    from autograder.delivery.gradescope import Replay

    unreadable = Grade.unreadable(course, "The submission could not be read: no exercise module")
    monkeypatch.setattr(gradescope, "replay", lambda *args: Replay(unreadable.to_gradescope(course), 1.0, None))
    assert main(["--course", str(COURSE), "gradescope", "--run", str(ROOT / "exercises")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.count("(public): Not graded: the submission could not be read (the reason is above).") == len(
        course.exercises) == out.count("failed "), out
    graded = Grade(tuple(PropertyResult(e.module, "p", e.points, e.points, True, False, "") for e in course.exercises),
                   (), 1.0)
    monkeypatch.setattr(gradescope, "replay", lambda *args: Replay(graded.to_gradescope(course), 1.0, None))
    assert main(["--course", str(COURSE), "gradescope", "--run", str(ROOT / "exercises")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    everything = course.max_score + course.bonus_points
    assert f"score {everything} ({course.max_score} without the bonus)," in out


def test_a_bundle_without_the_bonus_exercise_says_nothing_of_bonus_points(course, monkeypatch, capsys, tmp_path):
    from autograder.commands import gradescope

    monkeypatch.setattr(gradescope, "build_gradescope", lambda *args: None)
    bonus = [e.module for e in course.exercises if e.bonus]
    for chosen, said in (([FIRST], f"give the assignment {course.full_marks([FIRST])} points."),
                         ([], f"its {course.bonus_points} bonus points are extra credit"),
                         (bonus, f"give the assignment 0 points (its {course.bonus_points} bonus points")):
        assert main(["--course", str(COURSE), "gradescope", "--out", str(tmp_path / "a.zip"),
                     *(f"--exercise={module}" for module in chosen)]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert said in out and ("bonus" in out) == (chosen != [FIRST]), out


def test_the_top_level_help_and_grade_s_help_say_the_same_of_what_grade_takes(capsys):
    helps = []
    for argv in (["--help"], ["grade", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        helps.append(" ".join(capsys.readouterr().out.split()))
    accepted = "folder, .zip, .py or .ipynb file"
    assert f"grade submissions (each a {accepted})" in helps[0] and f"SUBMISSION a {accepted}" in helps[1]


def test_the_partly_wrong_sample_s_readme_counts_its_missing_exercises(course):
    sample = ROOT / "samples" / "partly_wrong"
    missing = [e.module for e in course.exercises if not (sample / "exercises" / f"{e.module}.py").exists()]
    words = {4: "four", 5: "five", 6: "six"}
    text = " ".join((sample / "README.md").read_text(encoding="utf-8").split())
    assert f"The other {words[len(missing)]} exercises" in text, text


def test_a_batch_s_reports_are_out_of_reach_while_it_runs_and_back_when_it_ends(tmp_path):
    """While a batch runs, its reports (earlier batches' too), gradebook and grades.csv are in a
    folder of ``--out`` under a random name, the grader's alone; an instructor's own files stay.
    A batch that was killed leaves that folder, and the next one moves it back first; a second
    batch on the same output while one runs stops, naming the folder."""
    from autograder.batch.withheld import PREFIX, Withheld
    from autograder.errors import GraderError

    out = tmp_path / "out"
    (out / "alice").mkdir(parents=True)
    (out / "alice" / "results.json").write_text("{}")
    (out / "grades.csv").write_text("submission\n")
    (out / "notes.txt").write_text("the instructor's")
    with Withheld(out) as folder:
        assert folder.parent == out and folder.name.startswith(PREFIX) and len(folder.name) == len(PREFIX) + 32
        assert folder.stat().st_mode & 0o777 == 0o700
        assert sorted(p.name for p in out.iterdir()) == sorted([folder.name, "notes.txt"])
        (folder / "bob").mkdir()
        (folder / "bob" / "results.json").write_text("{}")
        with pytest.raises(GraderError, match="another batch is grading into"), Withheld(out):
            pass
    assert sorted(p.name for p in out.iterdir()) == ["alice", "bob", "grades.csv", "notes.txt"]
    killed = out / f"{PREFIX}{'0' * 32}"  # what a batch killed outright leaves
    (killed / "carol").mkdir(parents=True)
    (killed / "carol" / "results.json").write_text("{}")
    with Withheld(out):
        pass
    assert sorted(p.name for p in out.iterdir()) == ["alice", "bob", "carol", "grades.csv", "notes.txt"]
