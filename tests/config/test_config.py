"""course.yaml: malformed ones get one clear message naming the key (the real one: tests/config/test_course.py)."""

import shutil
from pathlib import Path

import pytest
import yaml

from autograder.config import CourseConfigError, check_course, load_course
from tests.conftest import ROOT, autograder

# What the schema's messages below count, read from the course file: tests/config/test_course.py checks
# the course's own totals, whatever its exercises.
RAW = yaml.safe_load((ROOT / "course.yaml").read_text())
REGULAR = sum(e["points"] for e in RAW["exercises"] if not e.get("bonus"))
BONUS = next(index for index, e in enumerate(RAW["exercises"]) if e.get("bonus"))  # the course has a bonus exercise
LAST = len(RAW["exercises"]) - 1


def write_variant(tmp_path: Path, change) -> Path:
    """The real course.yaml, changed by ``change(dict)``, next to copies of what it points at."""
    raw = yaml.safe_load((ROOT / "course.yaml").read_text())
    change(raw)
    for name in ("suites", "solutions", "exercises", "tokcourse", "samples", "translations"):
        if not (tmp_path / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    path = tmp_path / "course.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.mark.parametrize("change, message", [
    (lambda c: c.pop("hypothesis"), "hypothesis: required key is missing"),
    (lambda c: c["hypothesis"].update(seed="soon"), "hypothesis.seed: Input should be a valid integer"),
    (lambda c: c["exercises"][1].update(points=-5), "exercises[1].points: Input should be greater than 0"),
    (lambda c: c["exercises"][0].update(pionts=3), "exercises[0].pionts: unknown key"),
    (lambda c: c["exercises"][2].update(module="ex3-wordpiece"), "exercises[2].module: String should match pattern"),
    (lambda c: c["exercises"].append(dict(c["exercises"][0])), "exercise module listed twice: ex1_merge_tracing"),
    (lambda c: c.update(total_points=REGULAR - 10), f"exercise points add up to {REGULAR}, but total_points is "
                                                     f"{REGULAR - 10}"),
    (lambda c: c["exercises"][LAST].update(suite="suites/missing.py"),
     f"exercises[{LAST}].suite: no such file 'suites/missing.py'"),
    (lambda c: c["limits"].update(call_seconds=0), "limits.call_seconds: Input should be greater than 0"),
    (lambda c: c["sandbox"]["env"].update({"BAD NAME": "x"}),
     "sandbox.env: Value error, 'BAD NAME' is not an environment"),
    (lambda c: c.update(exercises=[]), "exercises: List should have at least 1 item"),
    (lambda c: c["exercises"][BONUS].update(bonus=False),
     f"exercise points add up to {REGULAR + RAW['exercises'][BONUS]['points']}, but total_points is {REGULAR}"),
    (lambda c: c["exercises"][0].update(bonus="maybe"), "exercises[0].bonus: Input should be a valid boolean"),
    (lambda c: [e.update(bonus=True) for e in c["exercises"]], "every exercise is a bonus"),
])
def test_schema_errors_name_the_key(tmp_path, change, message):
    with pytest.raises(CourseConfigError) as caught:
        load_course(write_variant(tmp_path, change))
    assert message.replace("Value error, ", "") in str(caught.value)


def test_yaml_syntax_error_gives_the_line(tmp_path):
    path = tmp_path / "course.yaml"
    path.write_text("title: x\nexercises: [\n  - module: a\n")
    with pytest.raises(CourseConfigError, match=r"line \d+, column \d+: not valid YAML"):
        load_course(path)


@pytest.mark.parametrize("text, message",
                         [("", "top level must be a mapping"), ("- a\n- b\n", "top level must be a mapping")])
def test_wrong_top_level(tmp_path, text, message):
    path = tmp_path / "course.yaml"
    path.write_text(text)
    with pytest.raises(CourseConfigError, match=message):
        load_course(path)


def test_missing_file():
    with pytest.raises(CourseConfigError, match="no such file"):
        load_course("/nonexistent/course.yaml")


def test_command_line_reports_without_traceback(tmp_path):
    path = tmp_path / "course.yaml"
    path.write_text("title: [unclosed\n")
    run = autograder("check", course=path)
    assert run.returncode == 2
    assert "not valid YAML" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


def test_a_course_replaces_the_delivery_texts_with_its_own(tmp_path):
    """delivery.templates: a course's own text, checked when the course loads."""
    from autograder.delivery.release import student_readme

    (tmp_path / "readme.md").write_text("# ${title}\nOur own words for ${package}.\n${exercise_rows}\n${setup}\n"
                                        "${data_section}\n")
    (tmp_path / "howto.md").write_text("${points} is not a placeholder of the how-to\n")
    own = write_variant(tmp_path, lambda c: c["delivery"].update(templates={"release_readme": "readme.md"}))
    assert "Our own words for exercises." in student_readme(load_course(own))
    wrong = write_variant(tmp_path, lambda c: c["delivery"].update(templates={"nbgrader_howto": "howto.md"}))
    with pytest.raises(CourseConfigError,
                       match=r"delivery\.templates\.nbgrader_howto: unknown placeholder \$\{points\}"):
        load_course(wrong)


def test_bonus_points_come_on_top_of_the_full_marks(tmp_path):
    """A course without ``total_points`` counts the exercises that are not bonus; no bonus, no suffix."""
    plain = load_course(write_variant(tmp_path, lambda c: (c.pop("total_points"), c.update(
        exercises=[e for e in c["exercises"] if not e.get("bonus")]))))
    assert plain.max_score == REGULAR and plain.bonus_points == 0 and plain.max_score_text == f"{REGULAR}"
    regular = [f"{e['points']}" for e in RAW["exercises"] if not e.get("bonus")]
    assert [e.points_text for e in plain.exercises] == regular
    course = load_course(ROOT / "course.yaml")
    assert course.exercises[BONUS].points_text == f"{course.exercises[BONUS].points} bonus"


def test_the_course_s_language_is_checked_and_the_channels_override_it(tmp_path, command_here):
    """``language`` is en or fa (default en); ``--lang`` of release, nbgrader and gradescope
    overrides it and takes nothing else; a course's Persian texts are checked as its English ones."""
    assert load_course(ROOT / "course.yaml").language == "en"
    assert load_course(write_variant(tmp_path, lambda c: c.pop("language"))).language == "en"
    with pytest.raises(CourseConfigError, match=r"language: Input should be 'en' or 'fa' \(got 'de'\)"):
        load_course(write_variant(tmp_path, lambda c: c.update(language="de")))
    with pytest.raises(CourseConfigError, match=r"delivery\.translations: no such folder 'nowhere'"):
        load_course(write_variant(tmp_path, lambda c: c["delivery"].update(translations="nowhere")))
    (tmp_path / "howto.md").write_text("${points} is not a placeholder of the how-to\n")
    wrong = write_variant(tmp_path, lambda c: c["delivery"].update(templates={"fa": {"nbgrader_howto": "howto.md"}}))
    with pytest.raises(CourseConfigError,
                       match=r"delivery\.templates\.fa\.nbgrader_howto: unknown placeholder \$\{points\}"):
        load_course(wrong)
    for command in ("release", "nbgrader", "gradescope"):
        run = command_here(command, "--out", str(tmp_path / command), "--lang", "de")
        assert run.returncode == 2 and "--lang: invalid choice: 'de'" in run.stderr, run.stderr
    run = command_here("gradescope", "--run", "solutions", "--zip", str(tmp_path / "built.zip"), "--lang", "fa")
    assert run.returncode == 2 and "--lang chooses the language a bundle is built in" in run.stderr, run.stderr


def test_a_persian_course_uses_its_own_persian_texts(tmp_path):
    from autograder.delivery.release import student_readme

    (tmp_path / "readme.md").write_text("# ${title}\nOur own words.\n${exercise_rows}\n${setup}\n${data_section}\n")
    (tmp_path / "readme-fa.md").write_text("# ${title}\nسخن خودمان.\n${exercise_rows}\n${setup}\n${data_section}\n")
    own = load_course(write_variant(tmp_path, lambda c: c["delivery"].update(
        templates={"release_readme": "readme.md", "fa": {"release_readme": "readme-fa.md"}})))
    assert "Our own words." in student_readme(own)
    persian = student_readme(own.model_copy(update={"language": "fa"}))
    assert "سخن خودمان." in persian and "Our own words." not in persian
    engine = load_course(write_variant(tmp_path, lambda c: c["delivery"].update(
        templates={"release_readme": "readme.md"})))  # no Persian text of its own: the engine's
    assert "نسخه‌ی شما از درس" in student_readme(engine.model_copy(update={"language": "fa"}))


TOY = ROOT / "tests" / "fixtures" / "toy_course"


@pytest.mark.parametrize("breaking, message", [
    (lambda c: (c / "answers" / "ex_sum.py").unlink(),
     "exercises[0]: no such file 'answers/ex_sum.py' (the reference of ex_sum)"),
    (lambda c: (c / "toy" / "ex_sum.py").unlink(), "exercises[0]: no such file 'toy/ex_sum.py' (the stub of ex_sum)"),
    (lambda c: (c / "toy" / "__init__.py").unlink(), "provided[0]: no such file 'toy/__init__.py'"),
    (lambda c: (c / "suites" / "ex_sum.py").write_text("import a_module_nobody_wrote\n"),
     "exercises[0].suite: 'suites/ex_sum.py' does not import (ModuleNotFoundError: No module named "
     "'a_module_nobody_wrote')"),
])
def test_a_course_is_checked_whole_before_anything_runs(tmp_path, breaking, message):
    """What load_course cannot see from the file alone: each exercise's reference and stub, each
    provided file, each suite importing. One line naming it, and the course as it was otherwise."""
    course_folder = shutil.copytree(TOY, tmp_path / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    check_course(load_course(course_folder / "course.yaml"), grading=True)  # the toy course as it is: whole
    breaking(course_folder)
    with pytest.raises(CourseConfigError) as caught:
        check_course(load_course(course_folder / "course.yaml"), grading=True)
    assert str(caught.value) == f"{course_folder / 'course.yaml'}: {message}"


@pytest.mark.data  # the course's own data and .cache, linked in
def test_the_data_is_checked_where_the_course_grades_here(tmp_path):
    """Grading needs the data files and read-only paths; building a delivery does not (its students
    or its setup fetch them), nor does a student release before its student fetched them."""
    course = load_course(write_variant(tmp_path, lambda c: c["data"].update(corpus="nowhere/corpus.txt")))
    for name in ("data", ".cache"):
        (tmp_path / name).symlink_to(ROOT / name)
    check_course(course, grading=False)
    with pytest.raises(CourseConfigError) as caught:
        check_course(course, grading=True)
    assert str(caught.value).endswith(": data.corpus: no such file or folder 'nowhere/corpus.txt'; fetch the "
                                      f"course's data: {RAW['delivery']['fetch']}"), caught.value
    check_course(course.model_copy(update={"solutions": None}), grading=True)
