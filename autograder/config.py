"""The course definition: ``course.yaml`` loaded through a validated schema.

The engine knows no particular course: a course file (of any name; :attr:`Course.file` is where
it was read from, and every command that hands the course on names it) gives the package,
solutions, suites, points, budgets, feedback caps, hypothesis settings, data files, what the
channels ship (``delivery``), its ``language`` and its ``suite_texts``; every path in it is
relative to its folder, and a course without ``solutions`` is a student release.
:func:`load_course` raises :class:`CourseConfigError` with one line per problem, each naming the
key; :func:`check_course` checks the course whole before a command grades or builds anything.
The keys: docs/authors.md, "The course file".
"""

from __future__ import annotations

import importlib.util
import re
import string
import sys
import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from .i18n import _

IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"
Language = Literal["en", "fa"]  # what a course can be delivered in: English (the source) and Persian
LANGUAGES: tuple[Language, ...] = ("en", "fa")
TEMPLATE_FIELDS = {  # the placeholders each course text of ``delivery.templates`` may use
    "release_readme": ("title", "package", "exercise_rows", "setup", "data_section", "check", "reach_rows"),
    "nbgrader_howto": ("package",),
    "nbgrader_grade_cell": ("points", "module"),
}


class CourseConfigError(Exception):
    """``course.yaml`` is missing, not YAML, or does not match the schema."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Exercise(_Strict):
    module: Annotated[str, Field(pattern=IDENTIFIER)]
    title: str
    points: Annotated[int, Field(gt=0)]
    suite: str
    call_seconds: Annotated[float | None, Field(gt=0)] = None
    bonus: bool = False  # extra credit: its points come on top of the course's maximum

    @property
    def points_text(self) -> str:
        """The exercise's maximum as reports show it: ``20``, or ``10 bonus``."""
        return _("{points} bonus").format(points=self.points) if self.bonus else str(self.points)


class Limits(_Strict):
    call_seconds: Annotated[float, Field(gt=0)] = 5.0
    property_seconds: Annotated[float, Field(gt=0)] = 60.0
    exercise_seconds: Annotated[float, Field(gt=0)] = 300.0
    submission_seconds: Annotated[float | None, Field(gt=0)] = None  # all exercises together (None: no cap)
    memory_mb: Annotated[int, Field(ge=64)] = 1024
    processes: Annotated[int, Field(ge=1)] = 32
    file_mb: Annotated[int, Field(ge=1)] = 16
    open_files: Annotated[int, Field(ge=16)] = 64
    message_mb: Annotated[int, Field(ge=1)] = 16
    disk_mb: Annotated[int, Field(ge=1)] = 64
    feedback_chars: Annotated[int, Field(ge=200)] = 4000  # one property's feedback
    report_chars: Annotated[int, Field(ge=1000)] = 200_000  # all of one submission's feedback


class Hypothesis(_Strict):
    seed: Annotated[int, Field(ge=0)]
    max_examples: Annotated[int, Field(gt=0)]


class Sandbox(_Strict):
    support_modules: list[str] = []
    readonly_paths: list[str] = []
    env: dict[str, str] = {}

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str]) -> dict[str, str]:
        for name in env:
            if not re.match(IDENTIFIER, name):
                raise ValueError(f"{name!r} is not an environment variable name")
        return env


class Calls(_Strict):
    """What every call of a property into student code must respect, whatever the property checks."""

    # a call that changes one of its plain-data arguments (a value, a nested container, the order
    # of a dict's keys) fails the property that made it, naming the argument
    arguments_unchanged: bool = False


class Texts(_Strict):
    """The course text the delivery channels write, each a file with ``${name}`` placeholders
    (:class:`string.Template`, ``$$`` for a dollar sign; :data:`TEMPLATE_FIELDS` lists them);
    a key left out takes the engine's default, in ``autograder/delivery/templates/``."""

    release_readme: str | None = None  # the student release's README.md
    nbgrader_howto: str | None = None  # "how this notebook works", under each notebook's task
    nbgrader_grade_cell: str | None = None  # each notebook's last cell: the check, and the grade


class Templates(Texts):
    """The course's own texts in English, and under ``fa`` in Persian (the engine's Persian
    defaults in ``templates/fa/`` fill the keys left out)."""

    fa: Texts = Texts()

    def of(self, language: Language) -> Texts:
        """The texts a course delivered in ``language`` writes."""
        return self if language == "en" else getattr(self, language)


class Visibility(_Strict):
    """When students see what official grading found (Gradescope's ``visibility`` values)."""

    # a hidden property's result: never, after the due date, or once the grades are published
    hidden_properties: Literal["hidden", "after_due_date", "after_published"] = "after_published"
    # the total score and the feedback on the whole submission (results.json's top-level visibility)
    score: Literal["visible", "hidden", "after_due_date", "after_published"] = "visible"


class Delivery(_Strict):
    """What the delivery channels (student release, nbgrader, Gradescope) ship besides the
    files the rest of the course file names."""

    locked: str | None = None  # the locked known-answer cases (a release holds their hashes only)
    include: list[str] = []  # more course files and folders to ship, such as support packages
    fetch: str | None = None  # the command a student runs to fetch the data the exercises read
    templates: Templates = Templates()  # course text of its own in place of the engine's
    # a folder of one folder per language (fa/): the titles and the package's docstrings in
    # that language (autograder.translation), which a channel ships in their place
    translations: str | None = None


class Mutation(_Strict):
    """What ``python -m autograder mutate`` reads (:mod:`autograder.authoring.mutate`)."""

    # the mutants the course judged equivalent to the reference, with reasons; read (and
    # checked) by that command alone, so the delivery channels need not ship it
    equivalents: str | None = None


class Report(_Strict):
    """What ``python -m autograder report`` reads (:mod:`autograder.reports.class_report`)."""

    # per exercise, each property's catalog mutants (mistakes planted in the reference) that it
    # catches, as YAML or JSON; the class report links each property to them
    mutants: str | None = None


class Sample(_Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]
    path: str


class Course(_Strict):
    title: str
    language: Language = "en"  # what students read; release, nbgrader and gradescope take --lang to override it
    package: Annotated[str, Field(pattern=IDENTIFIER)]
    # the untouched stubs, where the graded functions' signatures and docstring examples are read
    # (autograder.signatures); by default the package itself, which in the course is the stubs
    stubs: str | None = None
    solutions: Annotated[str | None, Field(pattern=IDENTIFIER)] = None  # absent in a student release
    provided: list[str] = []
    total_points: Annotated[int | None, Field(gt=0)] = None
    hypothesis: Hypothesis
    limits: Limits = Limits()
    sandbox: Sandbox = Sandbox()
    calls: Calls = Calls()
    data: dict[str, str] = {}
    samples: list[Sample] = []
    delivery: Delivery = Delivery()
    # per language, the file of the suites' words in it (autograder.suite_texts), which grading shows
    suite_texts: dict[Language, str] = {}
    visibility: Visibility = Visibility()  # when students see hidden properties and the score (Gradescope)
    mutation: Mutation = Mutation()
    report: Report = Report()  # the instructor's class report
    exercises: Annotated[list[Exercise], Field(min_length=1)]
    root: Path = Path(".")
    file: Path = Path("course.yaml")  # the course file itself, whatever its name

    @model_validator(mode="after")
    def _consistent(self) -> Course:
        modules = [e.module for e in self.exercises]
        repeated = sorted({m for m in modules if modules.count(m) > 1})
        if repeated:
            raise ValueError(f"exercise module listed twice: {', '.join(repeated)}")
        total = sum(e.points for e in self.exercises if not e.bonus)
        if not total:
            raise ValueError("every exercise is a bonus: at least one must not be")
        if self.total_points is not None and total != self.total_points:
            raise ValueError(f"exercise points add up to {total}, but total_points is {self.total_points}")
        return self

    def path(self, relative: str) -> Path:
        """An absolute path for a path written in the course file."""
        return (self.root / relative).resolve()

    def solutions_path(self) -> Path:
        """The absolute path of the solutions package, which a student release lacks."""
        if self.solutions is None:
            raise CourseConfigError(f"{self.file}: a student release has no solutions")
        return self.path(self.solutions)

    def exercise(self, module: str) -> Exercise:
        for exercise in self.exercises:
            if exercise.module == module:
                return exercise
        raise KeyError(module)

    @property
    def is_release(self) -> bool:
        """A student release: no solutions, so only public properties that need no reference."""
        return self.solutions is None

    @property
    def max_score(self) -> int:
        """The full marks: the points of the exercises that are not bonus."""
        return self.full_marks()

    @property
    def bonus_points(self) -> int:
        """The extra credit the bonus exercises add on top of :attr:`max_score`."""
        return self.bonus_marks()

    @property
    def max_score_text(self) -> str:
        """The full marks as reports show them: ``100``, or ``100 + 10 bonus``."""
        return self.full_marks_text()

    def full_marks(self, modules: Collection[str] | None = None) -> int:
        """The full marks of the exercises ``modules`` (default all): their points, bonus left out."""
        return sum(e.points for e in self.exercises if not e.bonus and (modules is None or e.module in modules))

    def bonus_marks(self, modules: Collection[str] | None = None) -> int:
        """The extra credit of the exercises ``modules`` (default all): the points of the bonus ones."""
        return sum(e.points for e in self.exercises if e.bonus and (modules is None or e.module in modules))

    def score_without_bonus(self, scores: Mapping[str, float]) -> float:
        """Of the points earned per exercise (``scores``), those of the exercises that are not bonus:
        the total that :meth:`full_marks` is the most of. Every report that shows a total shows this
        beside the total with the bonus."""
        bonus = {e.module for e in self.exercises if e.bonus}
        return sum(score for module, score in scores.items() if module not in bonus)

    def full_marks_text(self, modules: Collection[str] | None = None) -> str:
        """The full marks of the exercises ``modules`` (default all) as reports show them: ``100``,
        ``100 + 10 bonus``, or ``10 bonus`` for a bonus exercise alone."""
        regular, bonus = self.full_marks(modules), self.bonus_marks(modules)
        if not bonus:
            return str(regular)
        if not regular:
            return _("{points} bonus").format(points=bonus)
        return _("{regular} + {bonus} bonus").format(regular=regular, bonus=bonus)


def load_course(path: str | Path = "course.yaml") -> Course:
    """Read, validate and return the course; raise :class:`CourseConfigError` on any problem."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise CourseConfigError(f"{path}: cannot be read ({error})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise CourseConfigError(f"{path}:{where}: not valid YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise CourseConfigError(f"{path}: the top level must be a mapping of keys, got {type(raw).__name__}")
    for key in ("root", "file"):
        if key in raw:
            raise CourseConfigError(f"{path}: {key}: not a course key (it is where the file is; "
                                    "paths are relative to it)")
    try:
        course = Course.model_validate({**raw, "root": path.resolve().parent, "file": path.resolve()})
    except ValidationError as error:
        raise CourseConfigError(f"{path}: " + "; ".join(_describe(e) for e in error.errors())) from None
    _check_files(course, path)
    return course


def _describe(error: ErrorDetails) -> str:
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]).lstrip(".")
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown key"
    elif error["type"] == "missing":
        message = "required key is missing"
    elif "input" in error and not isinstance(error["input"], (dict, list)):
        message += f" (got {error['input']!r})"
    return f"{where}: {message}" if where else message


def _check_files(course: Course, path: Path) -> None:
    """Every file and folder the course names exists (and each course text fills in)."""
    named: list[tuple[str, str | None, str]] = [  # (key, path, what it must be)
        *((f"exercises[{i}].suite", e.suite, "file") for i, e in enumerate(course.exercises)),
        *((f"sandbox.support_modules[{i}]", m, "file") for i, m in enumerate(course.sandbox.support_modules)),
        *((f"samples[{i}].path", s.path, "file or folder") for i, s in enumerate(course.samples)),
        ("package", course.package, "folder"), ("solutions", course.solutions, "folder"),
        ("stubs", course.stubs, "folder"),
        ("delivery.locked", course.delivery.locked, "file"),
        ("delivery.translations", course.delivery.translations, "folder"),
        *((f"suite_texts.{language}", texts, "file") for language, texts in course.suite_texts.items()),
    ]
    problems = _missing(course, named)
    templates = course.delivery.templates
    for where, texts in (("delivery.templates", templates), ("delivery.templates.fa", templates.fa)):
        for key in TEMPLATE_FIELDS:
            relative = getattr(texts, key)
            if relative is not None:
                problems += _template_problems(course, f"{where}.{key}", key, relative)
    if problems:
        raise CourseConfigError(f"{path}: " + "; ".join(problems))


EXISTS = {"file": Path.is_file, "folder": Path.is_dir, "file or folder": Path.exists}


def _missing(course: Course, named: Sequence[tuple[str, str | None, str]]) -> list[str]:
    """Of ``(key, path, what it must be)``, one line for each path that is not there."""
    return [f"{key}: no such {kind} {relative!r}" for key, relative, kind in named
            if relative is not None and not EXISTS[kind](course.path(relative))]


def _modules_missing(course: Course) -> list[str]:
    """Each exercise's module in the solutions (grading imports it) and in the stubs (grading reads
    their signatures), a line for each that is not there. A student release has no solutions, and its
    package is the student's work, whose missing modules grading reports to the student."""
    stubs = course.stubs or (None if course.is_release else course.package)
    problems = []
    for i, exercise in enumerate(course.exercises):
        for folder, what, package_too in ((course.solutions, "reference", True), (stubs, "stub", False)):
            if folder is None or not course.path(folder).is_dir():  # a missing folder is said once, above
                continue
            module = course.path(folder) / exercise.module
            if not (module.with_suffix(".py").is_file() or package_too and (module / "__init__.py").is_file()):
                problems.append(f"exercises[{i}]: no such file '{folder}/{exercise.module}.py' (the {what} of "
                                f"{exercise.module})")
    return problems


def check_course(course: Course, grading: bool) -> None:
    """The course as a whole, beyond the files :func:`load_course` checks: each exercise's reference
    and stub module and each provided file is there, every suite imports and, where ``grading`` on
    the full course, every data file and read-only path is there. One line naming each problem
    (:class:`CourseConfigError`): a course that cannot grade a property must stop before anyone is
    graded or anything built, never cost students points."""
    problems = _modules_missing(course) + _missing(course, [(f"provided[{i}]", p, "file")
                                                           for i, p in enumerate(course.provided)])
    problems += [problem for i, exercise in enumerate(course.exercises)
                 if (problem := _import_problem(course, f"exercises[{i}].suite", exercise.suite))]
    if grading and not course.is_release:
        named = [*((f"data.{name}", path, "file or folder") for name, path in course.data.items()),
                 *((f"sandbox.readonly_paths[{i}]", path, "file or folder")
                   for i, path in enumerate(course.sandbox.readonly_paths))]
        missing = _missing(course, named)
        fetch = [f"fetch the course's data: {course.delivery.fetch}"] if missing and course.delivery.fetch else []
        problems += missing + fetch
    if problems:
        raise CourseConfigError(f"{course.file}: " + "; ".join(problems))


def _import_problem(course: Course, key: str, relative: str) -> str | None:
    """Why the suite at ``relative`` does not import, as grading imports it (the course's folder first
    on the path), or None. It runs here under a name of its own, forgotten after."""
    name = f"_autograder_course_check_{Path(relative).stem}"
    spec = importlib.util.spec_from_file_location(name, course.path(relative))
    if spec is None or spec.loader is None:
        return f"{key}: {relative!r} is not a Python module"
    root = str(course.root.resolve())
    sys.path.insert(0, root)
    try:
        with warnings.catch_warnings():  # pytest's, of marks no pytest run has registered here
            warnings.simplefilter("ignore")
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception as error:  # whatever the suite raises, the course is at fault
        said = str(error).strip().splitlines()
        return f"{key}: {relative!r} does not import ({type(error).__name__}{': ' + said[0] if said else ''})"
    finally:
        sys.path.remove(root)
        sys.modules.pop(name, None)
    return None


def _template_problems(course: Course, where: str, key: str, relative: str) -> list[str]:
    """What keeps the course text ``where`` (of kind ``key``) from filling in: no such file,
    a lone ``$``, a placeholder the text may not use."""
    path, fields = course.path(relative), TEMPLATE_FIELDS[key]
    if not path.is_file():
        return [f"{where}: no such file {relative!r}"]
    try:
        template = string.Template(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        return [f"{where}: cannot be read ({error})"]
    if not template.is_valid():
        return [f"{where}: a `$` that starts no placeholder (write `$$` for a dollar sign)"]
    allowed = ", ".join(f"${{{name}}}" for name in fields)
    return [f"{where}: unknown placeholder ${{{name}}} (it may use {allowed})"
            for name in template.get_identifiers() if name not in fields]
