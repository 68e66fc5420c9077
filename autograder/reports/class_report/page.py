"""The class report's page: one self-contained HTML file, and ``build_report``, which makes it.
This module works out what the page says; ``page.html.j2`` beside it says it in HTML.

``python -m autograder report GRADES_DIR --out report.html``; what the page holds is described
in :mod:`autograder.reports.class_report`. The page loads nothing: no script, no font, no
stylesheet from elsewhere, plots as inline ``data:`` images, and a Content-Security-Policy that
forbids any other source."""

from __future__ import annotations

import datetime
import functools
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ... import __version__, bidi
from ...config import Course
from ...errors import GraderError
from ...results import NOT_WRITTEN
from .load import Batch, Entry, boilerplate_sources, graded_exercises, load_batch, submission_modules
from .names import KEY_FILE, Names
from .nbgrader import nbgrader_batch
from .plots import exercise_plots, figure_html, histogram, pyplot
from .similarity import DEFAULT_THRESHOLD, MAX_PAIRS, Similarity, similarity
from .stats import PropertyStats, load_mutants, property_stats

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def open_batch(course: Course, folder: Path) -> Batch:
    """The batch in ``folder``: a `grade` run's output (gradebook.sqlite) or an nbgrader course (gradebook.db)."""
    if (folder / "gradebook.sqlite").is_file():
        return Batch(load_batch(folder), "grade", lambda paths, modules: submission_modules(course, paths, modules),
                     boilerplate_sources(course))
    if (folder / "gradebook.db").is_file():
        return nbgrader_batch(course, folder)
    raise GraderError(f"{folder}: no gradebook.sqlite (the --out folder of a `grade` run) nor gradebook.db (an "
                      "nbgrader course folder, after `nbgrader autograde`) here")

@dataclass(frozen=True)
class Summary:
    """The spread of some numbers, as the page states it."""

    low: float
    middle: float
    high: float
    least: float
    most: float
    count: int


def _summary(values: list[float]) -> Summary | None:
    if not values:
        return None
    if len(values) == 1:
        low = middle = high = values[0]
    else:
        low, middle, high = statistics.quantiles(values, n=4, method="inclusive")
    return Summary(low, middle, high, min(values), max(values), len(values))


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value)}"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 pair``, ``2 pairs``: a count and its noun, in English (``plural``, where it is not the noun and an s)."""
    return f"{count} {noun}" if count == 1 else f"{count} {plural or noun + 's'}"


def _anchor(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)


@functools.cache  # one environment a process: a second page reuses the template compiled for the first
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), autoescape=True,
                                     undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                                     keep_trailing_newline=True)
    environment.filters.update(number=_number, anchor=_anchor, inline=lambda text: Markup(bidi.inline(text)),
                               bdi=lambda text: Markup(bidi.bdi(text)), counted=counted)
    return environment


def render(course: Course, folder: Path, batch: Batch, stats: list[PropertyStats], similar: Similarity | None,
           names: Names) -> str:
    """The page's HTML."""
    plt = pyplot()
    entries = batch.entries
    modules = graded_exercises(course, entries)
    regular = [m for m in modules if not course.exercise(m).bonus]
    bonus = [m for m in modules if course.exercise(m).bonus]
    everything = modules == [e.module for e in course.exercises]
    template = _environment().get_template("page.html.j2")
    return template.render(
        **_scores(plt, course, entries, regular, bonus, names), **_wrong(plt, batch, modules, stats),
        title=course.title, origin=batch.origin, submissions=len(entries), folder=names.scrub(folder.name),
        made=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"), version=__version__,
        csp=Markup(CSP), anonymise=names.anonymise, key_file=KEY_FILE, not_written=NOT_WRITTEN,
        full_marks=course.full_marks_text(modules), only=None if everything else modules,
        similar=similar, max_pairs=MAX_PAIRS, name=names, scrub=names.scrub)


def _scores(plt: Any, course: Course, entries: list[Entry], regular: list[str], bonus: list[str],
            names: Names) -> dict[str, Any]:
    """The values of the scores section: totals, exercises, bonus, times, every submission."""
    modules = regular + bonus
    graded = [e for e in entries if e.graded and e.grade]
    seconds = [e.seconds for e in graded if e.seconds is not None]
    bonuses = [sum(e.scores(course).get(m, 0.0) for m in bonus) for e in entries]  # not handed in: nothing
    both = bool(regular and bonus)  # a total without the bonus differs from the total
    without_bonus = [course.score_without_bonus(e.scores(course)) for e in entries]  # grades.csv's
    rows = [{"name": names(e.name), "total": e.score, "note": names.scrub(e.note),
             "without_bonus": course.score_without_bonus(e.scores(course)) if both else None,
             "scores": [e.scores(course).get(m) for m in modules],
             "seconds": e.seconds if e.graded else None}
            for e in sorted(entries, key=lambda e: names(e.name))]
    return {"unreadable": sum(1 for e in entries if not e.graded),
            "total": _summary([e.score for e in entries]),  # grades.csv's score, bonus included
            "without_bonus": _summary(without_bonus) if both else None,
            "regular_marks": course.full_marks(regular),
            "total_plot": _total_plot(plt, course, entries, modules) if regular else None,
            "regular": _exercises(plt, course, entries, regular) if regular else None,
            "bonus": {**_exercises(plt, course, entries, bonus), "summary": _summary(bonuses),
                      "earned": sum(1 for b in bonuses if b > 0), "count": len(bonuses)} if bonus else None,
            "seconds": _summary(seconds), "seconds_plot": _seconds_plot(plt, seconds) if seconds else None,
            "columns": [m.split("_")[0] for m in modules], "rows": rows}


def _exercises(plt: Any, course: Course, entries: list[Entry], modules: list[str]) -> dict[str, Any]:
    """The histograms and the table rows of the exercises ``modules``."""
    rows = []
    for module in modules:
        exercise = course.exercise(module)
        values = [e.scores(course)[module] for e in entries if module in e.scores(course)]
        rows.append({"module": module, "title": exercise.title, "points": exercise.points_text,
                     "summary": _summary(values), "full": sum(1 for v in values if v >= exercise.points)})
    return {"plots": Markup(exercise_plots(plt, course, entries, modules)), "rows": rows}


def _total_plot(plt: Any, course: Course, entries: list[Entry], modules: list[str]) -> Markup:
    maximum, extra = course.full_marks(modules), course.bonus_marks(modules)
    figure, axis = plt.subplots(figsize=(6.5, 2.8))
    histogram(plt, axis, [e.score for e in entries], maximum + extra, "Total score (bonus included)",
              f"points of {course.full_marks_text(modules)}")
    if extra:
        axis.axvline(maximum, color="#56606b", linestyle="--", linewidth=1)
    return Markup(figure_html(figure, "histogram of the total scores"))


def _seconds_plot(plt: Any, seconds: list[float]) -> Markup:
    figure, axis = plt.subplots(figsize=(6.5, 2.4))
    axis.hist(seconds, bins=min(20, max(len(seconds), 1)), color="#7a9a4a", edgecolor="white")
    axis.set_xlabel("seconds", fontsize=9)
    axis.set_ylabel("submissions", fontsize=9)
    axis.yaxis.get_major_locator().set_params(integer=True)
    return Markup(figure_html(figure, "histogram of grading times"))


def _wrong(plt: Any, batch: Batch, modules: list[str], stats: list[PropertyStats]) -> dict[str, Any]:
    """The values of the section on what the class got wrong."""
    catches: dict[str, list[PropertyStats]] = {}
    for s in stats:
        for mutant in s.mutants:
            catches.setdefault(mutant, []).append(s)
    failing = [s for s in stats if s.failed]
    return {"graded": sum(1 for e in batch.entries if e.graded and e.grade), "stats": stats,
            "hidden_rows": _nbgrader_hidden(batch.entries, modules) if batch.origin == "nbgrader" else [],
            "failure_plot": _failure_plot(plt, failing) if failing else None, "catches": sorted(catches.items())}


def _nbgrader_hidden(entries: list[Entry], modules: list[str]) -> list[dict[str, Any]]:
    """What nbgrader's record says of the hidden properties: a count per notebook, no names."""
    rows = []
    for module in modules:
        counts = [e.hidden[module] for e in entries if module in e.hidden]
        if any(total for _, total in counts):
            rows.append({"module": module, "properties": max(total for _, total in counts), "graded": len(counts),
                         "failing": sum(1 for passed, total in counts if passed < total)})
    return rows


def _failure_plot(plt: Any, failing: list[PropertyStats]) -> Markup:
    figure, axis = plt.subplots(figsize=(7, 0.28 * min(len(failing), 30) + 0.8))
    shown = failing[:30][::-1]
    axis.barh([f"{s.name}{' (hidden)' if s.hidden else ''}" for s in shown], [100 * s.share for s in shown],
              color=["#b05a4a" if s.hidden else "#4a78b0" for s in shown])
    axis.set_xlim(0, 100)
    axis.set_xlabel("% of graded submissions failing", fontsize=9)
    axis.tick_params(axis="y", labelsize=7)
    return Markup(figure_html(figure, "failure share per property"))


# --------------------------------------------------------------------------- the command


def build_report(course: Course, folder: Path, out: Path, submissions: list[Path] | None = None,
                 anonymise: bool = False, threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """Write the page for the grades in ``folder`` to ``out``; return what it found, for the console."""
    if not 0 < threshold <= 1:
        raise GraderError("--threshold is a share of the code: a number above 0 and at most 1")
    batch = open_batch(course, folder)
    entries = batch.entries
    modules = graded_exercises(course, entries)
    names = Names(folder, [e.name for e in entries], anonymise)
    stats = property_stats(entries, load_mutants(course))
    similar = similarity(batch, submissions, modules, threshold, names)
    page = render(course, folder, batch, stats, similar, names)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return {"submissions": len(entries), "properties": len(stats), "failing": sum(1 for s in stats if s.failed),
            "pairs": None if similar is None else len(similar.pairs)}
