"""The instructor's view of a class: one self-contained HTML page made from a ``grade`` run or an nbgrader course.

``python -m autograder report GRADES_DIR --out report.html`` reads what ``grade`` left in its
output folder (:mod:`autograder.gradebook`'s ``gradebook.sqlite`` for the scores and times,
each submission's ``results.json`` for the properties and their feedback), or, given an
autograded nbgrader course folder (``gradebook.db``), what nbgrader kept
(:mod:`autograder.delivery.nbgrader_gradebook`: its scores, the engine's feedback in each
autograded notebook, the submitted notebooks; hidden properties only as counts), and writes a
page with four parts:

- **scores**: histograms of the totals and of each exercise (bonus exercises apart), the
  median and quartiles, and the time each grading took;
- **what the class got wrong**: each property's failure share, sorted; for a public property
  the most common smallest counterexample (hypothesis's falsifying example, read back from the
  feedback), how many hit exactly that one and the reference's answer where the feedback
  states it (``expected X, got Y``); for a hidden property counts only; and, where the course
  names a mutant catalog (``report.mutants`` in ``course.yaml``: property → mutants, per
  exercise), links from each property to the mutants it catches;
- **code similarity**: with ``--submissions``, every pair of submissions compared module by
  module with copydetect's winnowing (the course's stubs and provided files are boilerplate
  and ignored), pairs above ``--threshold`` ranked with their similar regions side by side;
- **privacy**: the page holds student data and says so; ``--anonymise`` names every
  submission by a stable pseudonym (an HMAC of its name under a key kept in the grades folder).

The page loads nothing: no script, no font, no stylesheet from elsewhere, plots as inline
``data:`` images, and a Content-Security-Policy that forbids any other source. matplotlib and
copydetect come from the ``report`` extra and are imported only here, when a report is made:
grading never needs them.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import html
import io
import json
import re
import secrets
import sqlite3
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import __version__, bidi
from .config import Course
from .errors import GraderError
from .i18n import read_back
from .results import NOT_WRITTEN, Grade, split_feedback
from .suite import EXPECTED

KEY_FILE = ".pseudonym-key"  # in the grades folder; a dot name no submission can be filed under
DEFAULT_THRESHOLD = 0.5
MAX_PAIRS = 50  # pairs shown in full; the rest above the threshold are listed by name only
CONTEXT_LINES = 3  # unhighlighted lines kept around each similar region
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


# --------------------------------------------------------------------------- the batch


@dataclass
class Entry:
    """One submission's latest grading (one student's, from nbgrader), as the gradebook and
    its ``results.json`` (the autograded notebooks' feedback) hold it."""

    name: str
    score: float
    seconds: float | None  # None where the grader does not record it (nbgrader)
    graded_at: str
    note: str
    grade: Grade | None  # None when its results.json is missing (a grader that failed)
    graded: bool  # whether the suites ran (an unreadable submission has a grade, but nothing ran)
    exercise_scores: dict[str, float] | None = None  # where the gradebook's scores are not the grade's (nbgrader)
    hidden: dict[str, tuple[int, int]] = field(default_factory=dict)  # exercise -> (passed, of), where only counted

    def scores(self, course: Course) -> dict[str, float]:
        """Points per exercise graded (the gradebook's, manual grades included, where it has its own)."""
        if self.exercise_scores is not None:
            return self.exercise_scores
        return {module: score for module, (score, _) in self.grade.by_exercise(course).items()} if self.grade else {}


@dataclass
class Batch:
    """What a report is made from, whichever grader made it."""

    entries: list[Entry]
    origin: str  # "grade" (a `grade` run's folder) or "nbgrader" (an autograded nbgrader course)
    sources: Callable[[list[Path], list[str]], dict[str, dict[str, str]]]  # --submissions -> name -> module -> code
    boilerplate: list[tuple[str, str]]  # what every submission starts from


def open_batch(course: Course, folder: Path) -> Batch:
    """The batch in ``folder``: a `grade` run's output (gradebook.sqlite) or an nbgrader course (gradebook.db)."""
    if (folder / "gradebook.sqlite").is_file():
        return Batch(load_batch(folder), "grade", lambda paths, modules: submission_modules(course, paths, modules),
                     boilerplate_sources(course))
    if (folder / "gradebook.db").is_file():
        from .delivery.nbgrader_gradebook import nbgrader_batch

        return nbgrader_batch(course, folder)
    raise GraderError(f"{folder}: no gradebook.sqlite (the --out folder of a `grade` run) nor gradebook.db (an "
                      "nbgrader course folder, after `nbgrader autograde`) here")


def load_batch(folder: Path) -> list[Entry]:
    """Every submission's latest grading in the output folder of a ``grade`` run."""
    database = folder / "gradebook.sqlite"
    if not database.is_file():
        raise GraderError(f"{folder}: no gradebook.sqlite here; name the --out folder of a `grade` run")
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT submission, score, seconds, graded_at, note FROM gradings WHERE id IN "
            "(SELECT MAX(id) FROM gradings GROUP BY submission) ORDER BY submission").fetchall()
    except sqlite3.Error as error:
        raise GraderError(f"{database} cannot be read: {error}") from None
    finally:
        connection.close()
    entries = []
    for name, score, seconds, graded_at, note in rows:
        results = folder / name / "results.json"
        grade = None
        if results.is_file():
            try:
                grade = Grade.from_gradescope(json.loads(results.read_text(encoding="utf-8")))
            except (ValueError, KeyError, TypeError) as error:
                note = f"{note} (results.json unreadable: {error})".strip()
        entries.append(Entry(name, score, seconds, graded_at, note, grade,
                             graded=grade is not None and grade.seconds is not None))
    if not entries:
        raise GraderError(f"{database} records no grading yet")
    return entries


def graded_exercises(course: Course, entries: list[Entry]) -> list[str]:
    """The course's exercises that this batch graded (``grade --exercise`` grades fewer)."""
    seen = {r.exercise for e in entries if e.graded and e.grade for r in e.grade.results}
    seen |= {module for e in entries if e.exercise_scores for module in e.exercise_scores}
    return [e.module for e in course.exercises if e.module in seen] or [e.module for e in course.exercises]


# --------------------------------------------------------------------------- pseudonyms


class Names:
    """What the page calls each submission: its own name, or a stable pseudonym."""

    def __init__(self, folder: Path, names: list[str], anonymise: bool):
        self.anonymise = anonymise
        self.shown = {name: name for name in names}
        if anonymise:
            key = _pseudonym_key(folder)
            self.shown = {name: "student-" + hmac.new(key, name.encode(), hashlib.sha256).hexdigest()[:8]
                          for name in names}
        # the longest name first, so that a name inside another is not replaced within it
        self._order = sorted((n for n in names if len(n) >= 3), key=len, reverse=True)

    def __call__(self, name: str) -> str:
        return self.shown.get(name, name)

    def html(self, name: str) -> str:
        """What the page calls ``name``, as HTML isolated from the text around it (a name may be
        written right to left)."""
        return bidi.bdi(self(name))

    def scrub(self, text: str) -> str:
        """``text`` with every submission's name replaced by its pseudonym (feedback, notes, code)."""
        if not self.anonymise or not self._order:
            return text
        pattern = re.compile("|".join(re.escape(n) for n in self._order))
        return pattern.sub(lambda m: self.shown[m.group(0)], text)


def _pseudonym_key(folder: Path) -> bytes:
    """The batch's pseudonym key, made on first use: the same names get the same pseudonyms on
    every run, and nobody without the key can recompute them from a class list."""
    path = folder / KEY_FILE
    if not path.is_file():
        path.write_text(secrets.token_hex(32) + "\n", encoding="ascii")
        path.chmod(0o600)
    return bytes.fromhex(path.read_text(encoding="ascii").strip())


# --------------------------------------------------------------------------- what failed


@dataclass
class Example:
    """One counterexample of a property and how many submissions hit exactly it."""

    arguments: str  # hypothesis's falsifying example, as ``name=value, ...``; "" when there was none
    call: str  # the call the feedback names (``f(x)``), where it names one
    expected: str  # the reference's answer, where the feedback states it
    reason: str  # the first line of the feedback's message
    count: int = 0


@dataclass
class PropertyStats:
    exercise: str
    name: str
    points: int
    hidden: bool
    summary: str = ""
    failed: list[str] = field(default_factory=list)  # submission names
    unwritten: int = 0  # of the failures, those on a function still the stub: no mistake to show
    graded: int = 0
    examples: list[Example] = field(default_factory=list)  # most common first
    mutants: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        return len(self.failed) / self.graded if self.graded else 0.0

    @property
    def key(self) -> str:
        return f"{self.exercise}.{self.name}"


_FALSIFYING = re.compile(r"^Falsifying (?:explicit )?example: \w+\($")
_ANY = "(?s:.*?)"


def read_failure(output: str) -> Example:
    """A failed public property's feedback (:func:`autograder.plugin._feedback`: the summary, a
    blank line, the message, then hypothesis's notes) taken apart, in whichever language the
    course spoke when it was graded."""
    body = split_feedback(output)[1].splitlines()
    arguments: list[str] = []
    message: list[str] = []
    inside = False
    for line in body:
        if _FALSIFYING.match(line.strip()):
            inside = True
            continue
        if inside:
            if line.strip() == ")":
                inside = False
                continue
            arguments.append(line.strip())
        elif not arguments:
            message.append(line)
    text = "\n".join(message).strip()
    first = text.split("\n\n", 1)[0].strip()
    found = read_back(EXPECTED, first, what=_ANY, expected=_ANY, got="(?s:.*)")
    return Example(arguments=" ".join(arguments).rstrip(","), call=found["what"].strip() if found else "",
                   expected=found["expected"].strip() if found else "",
                   reason=(first.splitlines() or [""])[0])


def load_mutants(course: Course) -> dict[str, list[str]]:
    """``exercise.property -> [mutant, ...]`` from the course's catalog file, if it names one."""
    relative = course.report.mutants
    if not relative:
        return {}
    path = course.path(relative)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise GraderError(f"report.mutants: {relative} cannot be read: {error}") from None
    if not isinstance(raw, dict):
        raise GraderError(f"report.mutants: {relative} must map each exercise to a mapping of property -> mutants")
    found: dict[str, list[str]] = {}
    for exercise, properties in raw.items():
        if not isinstance(properties, dict):
            raise GraderError(f"report.mutants: {relative}: {exercise}: expected a mapping of property -> mutants")
        for name, mutants in properties.items():
            found[f"{exercise}.{name}"] = [str(m) for m in (mutants if isinstance(mutants, list) else [mutants])]
    return found


def property_stats(entries: list[Entry], mutants: dict[str, list[str]]) -> list[PropertyStats]:
    """Every property graded in the batch, the most often failed first."""
    stats: dict[tuple[str, str], PropertyStats] = {}
    failures: dict[tuple[str, str], list[Example]] = {}
    for entry in entries:
        if not entry.graded or entry.grade is None:
            continue
        for result in entry.grade.results:
            key = (result.exercise, result.name)
            item = stats.setdefault(key, PropertyStats(result.exercise, result.name, result.points, result.hidden))
            item.graded += 1
            if not result.passed:
                item.failed.append(entry.name)
                item.summary = item.summary or result.description
                if result.unwritten:  # the stub: the same "mistake" for every student who has not begun
                    item.unwritten += 1
                elif not result.hidden:
                    failures.setdefault(key, []).append(read_failure(result.output))
    for key, item in stats.items():
        item.mutants = mutants.get(item.key, [])
        # one group per counterexample (per reason where there is none); its call and the
        # reference's answer as most of its feedback states them (a stub's states none)
        groups: dict[str, list[Example]] = {}
        for example in failures.get(key, []):
            groups.setdefault(example.arguments or "\0" + example.reason, []).append(example)
        found = []
        for group in groups.values():
            call = Counter(e.call for e in group if e.call).most_common(1)
            expected = Counter(e.expected for e in group if e.expected).most_common(1)
            found.append(Example(group[0].arguments, call[0][0] if call else "", expected[0][0] if expected else "",
                                 group[0].reason, len(group)))
        # the most common first; those with a counterexample before those without one
        item.examples = sorted(found, key=lambda e: (not e.arguments, -e.count, e.arguments, e.reason))
    return sorted(stats.values(), key=lambda s: (-s.share, s.exercise, s.name))


# --------------------------------------------------------------------------- similarity


@dataclass
class Region:
    module: str
    left: str  # HTML: the first submission's module, similar regions marked
    right: str
    left_share: float
    right_share: float


@dataclass
class Pair:
    first: str
    second: str
    first_share: float  # of the first's code (its winnowed tokens), the share found in the second
    second_share: float
    regions: list[Region]

    @property
    def score(self) -> float:
        return max(self.first_share, self.second_share)


@dataclass
class Similarity:
    pairs: list[Pair]  # above the threshold, the most similar first
    compared: int  # pairs compared
    submissions: int
    modules: list[str]
    missing: list[str]  # graded submissions whose code was not found among --submissions
    threshold: float


def submission_modules(course: Course, paths: list[Path], modules: list[str]) -> dict[str, dict[str, str]]:
    """``name -> module -> source`` for each submission, named as ``grade`` names it."""
    from .grading import safe_names
    from .submission import SubmissionError, stage, submission_name

    found: dict[str, dict[str, str]] = {}
    for name, path in safe_names([(submission_name(p), p) for p in paths]):
        try:
            staged = stage(course, path)
        except SubmissionError:
            continue  # graded as unreadable: nothing to compare
        try:
            package = staged.root / course.package
            found[name] = {m: (package / f"{m}.py").read_text(encoding="utf-8", errors="replace")
                           for m in modules if (package / f"{m}.py").is_file()}
        finally:
            staged.remove()
    return found


def boilerplate_sources(course: Course) -> list[tuple[str, str]]:
    """What every submission starts from: the course package as handed out (stubs, lesson)
    and the provided files."""
    files = sorted(course.path(course.package).rglob("*.py")) + [course.path(p) for p in course.provided]
    return [(str(f), f.read_text(encoding="utf-8")) for f in dict.fromkeys(files) if f.is_file()]


def compare(sources: dict[str, dict[str, str]], boilerplate: list[tuple[str, str]], threshold: float,
            names: Names) -> list[Pair]:
    """Every pair of ``sources`` compared module by module (copydetect), those whose larger share
    reaches ``threshold``, the most similar first."""
    import numpy as np
    from copydetect import CodeFingerprint, compare_files, defaults

    k, window = defaults.NOISE_THRESHOLD, defaults.GUARANTEE_THRESHOLD - defaults.NOISE_THRESHOLD + 1

    def fingerprint(label: str, code: str, skip: Any = None) -> Any:
        return CodeFingerprint(label + ".py", k, window, boilerplate=skip, fp=io.StringIO(code), language="python")

    skip = np.unique(np.array([h for label, code in boilerplate for h in fingerprint(label, code).hashes],
                              dtype=np.int64)) if boilerplate else None
    prints = {(name, module): fingerprint(f"{name}/{module}", code, skip)
              for name, modules in sources.items() for module, code in modules.items()}
    names_sorted = sorted(sources)
    pairs: list[tuple[Pair, list[Any]]] = []
    for i, first in enumerate(names_sorted):
        for second in names_sorted[i + 1:]:
            shared = sorted(set(sources[first]) & set(sources[second]))
            overlap = [0.0, 0.0]
            coverage = [0.0, 0.0]
            found = []
            for module in shared:
                one, two = prints[(first, module)], prints[(second, module)]
                coverage[0] += one.token_coverage
                coverage[1] += two.token_coverage
                tokens, (share1, share2), slices = compare_files(one, two)
                if tokens:
                    overlap[0] += share1 * one.token_coverage
                    overlap[1] += share2 * two.token_coverage
                    found.append((module, one, two, float(share1), float(share2), slices))
            shares = [o / c if c else 0.0 for o, c in zip(overlap, coverage, strict=True)]
            if max(shares) >= threshold:
                pairs.append((Pair(first, second, shares[0], shares[1], []), found))
    pairs.sort(key=lambda p: (-p[0].score, -min(p[0].first_share, p[0].second_share), p[0].first, p[0].second))
    for pair, found in pairs[:MAX_PAIRS]:  # the regions of the pairs the page shows in full
        pair.regions = [Region(module, _marked(one.raw_code, slices[0], names),
                               _marked(two.raw_code, slices[1], names), share1, share2)
                        for module, one, two, share1, share2, slices in found]
    return [pair for pair, _ in pairs]


def _marked(code: str, slices: Any, names: Names) -> str:
    """``code`` as HTML with the similar ``slices`` marked, far-off unmarked lines elided."""
    spans = sorted((int(a), int(b)) for a, b in zip(slices[0], slices[1], strict=True)) if len(slices) else []
    parts: list[str] = []
    at = 0
    for start, end in spans:
        start = max(start, at)
        if end <= start:
            continue
        parts.append(_elide(names.scrub(code[at:start]), first=not parts, last=False))
        parts.append(f"<mark>{html.escape(names.scrub(code[start:end]))}</mark>")
        at = end
    parts.append(_elide(names.scrub(code[at:]), first=not parts, last=True))
    return "".join(parts)


def _elide(text: str, first: bool, last: bool) -> str:
    """Unmarked code kept to a few lines at each side of the marked regions around it."""
    lines = text.split("\n")
    keep = CONTEXT_LINES + 1
    if first and not last and len(lines) > keep:
        lines = ["…"] + lines[-keep:]
    elif last and not first and len(lines) > keep:
        lines = lines[:keep] + ["…"]
    elif not first and not last and len(lines) > 2 * keep + 1:
        lines = lines[:keep] + ["…"] + lines[-keep:]
    return html.escape("\n".join(lines))


def similarity(batch: Batch, paths: list[Path] | None, modules: list[str], threshold: float,
               names: Names) -> Similarity | None:
    """The code-similarity section's data, or None without ``--submissions``."""
    if paths is None:
        return None
    sources = batch.sources(paths, modules)
    graded = [e.name for e in batch.entries if e.graded]
    sources = {name: modules for name, modules in sources.items() if name in graded and modules}
    pairs = compare(sources, batch.boilerplate, threshold, names)
    count = len(sources)
    return Similarity(pairs, count * (count - 1) // 2, count, modules,
                      sorted(set(graded) - set(sources)), threshold)


# --------------------------------------------------------------------------- plots


def _figure_html(figure: Any, alt: str) -> str:
    """A matplotlib figure as an inline SVG image (a data: URI, so the page fetches nothing)."""
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    data = base64.b64encode(buffer.getvalue().encode("utf-8")).decode("ascii")
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/svg+xml;base64,{data}">'


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise GraderError("the report needs matplotlib and copydetect (the `report` extra: "
                          "pip install -e '.[report]', or make setup, which installs requirements-nbgrader.lock)"
                          ) from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "class-report"  # the same data draws the same bytes
    import matplotlib.pyplot as plt

    return plt


def _histogram(plt: Any, axis: Any, values: list[float], maximum: float, title: str, xlabel: str) -> None:
    top = max([maximum, *values]) if values else maximum
    bins = min(20, max(int(top), 1))
    axis.hist(values, bins=bins, range=(0, top if top > 0 else 1), color="#4a78b0", edgecolor="white")
    axis.set_title(title, fontsize=10)
    axis.set_xlabel(xlabel, fontsize=9)
    axis.set_ylabel("submissions", fontsize=9)
    axis.yaxis.get_major_locator().set_params(integer=True)


def _exercise_plots(plt: Any, course: Course, entries: list[Entry], modules: list[str]) -> str:
    if not modules:
        return ""
    columns = min(3, len(modules))
    rows = (len(modules) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 2.6 * rows), squeeze=False)
    for index, module in enumerate(modules):
        exercise = course.exercise(module)
        values = [e.scores(course)[module] for e in entries if module in e.scores(course)]
        _histogram(plt, axes[index // columns][index % columns], values, exercise.points, module,
                   f"points of {exercise.points_text}")
    for index in range(len(modules), rows * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    return _figure_html(figure, "histograms of the points per exercise: " + ", ".join(modules))


# --------------------------------------------------------------------------- the page


def _quartiles(values: list[float]) -> tuple[float, float, float] | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0], values[0], values[0]
    low, middle, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, middle, high


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value)}"


def _stats_line(values: list[float], unit: str = "") -> str:
    found = _quartiles(values)
    if found is None:
        return "no graded submission"
    low, middle, high = found
    return (f"median <b>{_number(middle)}{unit}</b>, quartiles {_number(low)}{unit} – {_number(high)}{unit}, "
            f"range {_number(min(values))}{unit} – {_number(max(values))}{unit} (n = {len(values)})")


def render(course: Course, folder: Path, batch: Batch, modules: list[str], stats: list[PropertyStats],
           similar: Similarity | None, names: Names) -> str:
    """The page's HTML."""
    plt = _pyplot()
    esc = html.escape
    entries = batch.entries
    graded = [e for e in entries if e.graded and e.grade]
    unreadable = [e for e in entries if not e.graded]
    regular = [m for m in modules if not course.exercise(m).bonus]
    bonus = [m for m in modules if course.exercise(m).bonus]
    source = "grades.csv" if batch.origin == "grade" else "nbgrader's gradebook (as nbgrader export reads it)"

    def points(entry: Entry, chosen: list[str]) -> float:
        scores = entry.scores(course)
        return sum(scores.get(m, 0.0) for m in chosen)  # an exercise not handed in scores nothing

    totals = [e.score for e in entries]  # the gradebook's score: grades.csv's, bonus included
    bonuses = [points(e, bonus) for e in entries]
    seconds = [e.seconds for e in graded if e.seconds is not None]
    out: list[str] = []

    # -- scores
    out.append('<section id="scores"><h2>1. Scores</h2>')
    out.append(f"<p class=definition>Every submission of {source} counts here, as it counts there"
               + (f": unreadable submissions count with 0 points (here {len(unreadable)})" if unreadable else "")
               + ". <b>Total</b> is all the points a submission earned, bonus included (the score column of "
               f"{source}), out of {esc(course.full_marks_text(modules))}.</p>")
    if modules != [e.module for e in course.exercises]:
        out.append(f"<p class=note>This batch graded only {esc(', '.join(modules))}; totals are out of the points "
                   "of those.</p>")
    if regular:  # a batch of the bonus exercise alone has no total to show
        maximum, extra = course.full_marks(modules), course.bonus_marks(modules)
        out.append(f"<p>Total, out of {esc(course.full_marks_text(modules))}: {_stats_line(totals)}.</p>")
        figure, axis = plt.subplots(figsize=(6.5, 2.8))
        _histogram(plt, axis, totals, maximum + extra, "Total score (bonus included)",
                   f"points of {course.full_marks_text(modules)}")
        if extra:
            axis.axvline(maximum, color="#56606b", linestyle="--", linewidth=1)
        out.append(_figure_html(figure, "histogram of the total scores"))
        out.append("<h3>Per exercise</h3>")
        out.append(_exercise_plots(plt, course, entries, regular))
        out.append(_exercise_table(course, entries, regular))
    if bonus:
        out.append('<h3 id="bonus">Bonus (extra credit, on top of the full marks)</h3>')
        out.append(f"<p>Bonus points: {_stats_line(bonuses)}; "
                   f"{sum(1 for b in bonuses if b > 0)} of {len(bonuses)} submissions earned some.</p>")
        out.append(_exercise_plots(plt, course, entries, bonus))
        out.append(_exercise_table(course, entries, bonus))
    out.append("<h3>Time per submission</h3>")
    if batch.origin == "nbgrader":
        out.append("<p>Not known: nbgrader does not record how long each grading took.</p>")
    else:
        out.append("<p>Wall time of each grading that ran (the grader process, sandbox included): "
                   f"{_stats_line(seconds, ' s')}.</p>")
    if seconds:
        figure, axis = plt.subplots(figsize=(6.5, 2.4))
        axis.hist(seconds, bins=min(20, max(len(seconds), 1)), color="#7a9a4a", edgecolor="white")
        axis.set_xlabel("seconds", fontsize=9)
        axis.set_ylabel("submissions", fontsize=9)
        axis.yaxis.get_major_locator().set_params(integer=True)
        out.append(_figure_html(figure, "histogram of grading times"))
    out.append(_submission_table(course, entries, regular, bonus, names))
    out.append("</section>")

    # -- what the class got wrong
    out.append('<section id="wrong"><h2>2. What the class got wrong</h2>')
    out.append(f"<p class=definition>Each property's failure share among the {len(graded)} submissions whose code "
               "ran" + (f" (the {len(unreadable)} that could not be read ran no property, so they are not counted "
                        "here)" if unreadable else "") + ", most failed first. A function left as the stub ("
               f"<i>{NOT_WRITTEN}</i>) counts as a failure, shown apart: it is no mistake in the code. Public "
               "properties show the most common smallest counterexample among the real mistakes (hypothesis's "
               "falsifying example, as the student's feedback shows it), how many submissions hit exactly that "
               "one, and the reference's answer where the feedback states it. Hidden properties show counts "
               "only.</p>")
    if batch.origin == "nbgrader":
        out.append(_nbgrader_hidden(course, entries, modules))
    failing = [s for s in stats if s.failed]
    if failing:
        figure, axis = plt.subplots(figsize=(7, 0.28 * min(len(failing), 30) + 0.8))
        shown = failing[:30][::-1]
        axis.barh([f"{s.name}{' (hidden)' if s.hidden else ''}" for s in shown], [100 * s.share for s in shown],
                  color=["#b05a4a" if s.hidden else "#4a78b0" for s in shown])
        axis.set_xlim(0, 100)
        axis.set_xlabel("% of graded submissions failing", fontsize=9)
        axis.tick_params(axis="y", labelsize=7)
        out.append(_figure_html(figure, "failure share per property"))
    out.append(_property_table(stats))
    out.append("<h3>Counterexamples of the public properties</h3>")
    out.append(_examples(stats, names))
    out.append(_mutant_section(stats))
    out.append("</section>")

    # -- similarity
    out.append('<section id="similarity"><h2>3. Code similarity</h2>')
    out.append('<p class="caution"><b>Similarity is a lead to look at, not a verdict.</b> Short exercises with one '
               "natural solution, code from the lesson, the same textbook algorithm or help from the same tutor "
               "all make honest work look alike; a high score says where to read, and only reading the code (and "
               "talking to the students) can say more. Do not act on this list alone.</p>")
    out.append(_similarity_section(similar, names))
    out.append("</section>")

    # -- privacy
    out.append('<section id="privacy"><h2>4. Privacy</h2>')
    if names.anonymise:
        out.append("<p>Submissions are named by pseudonyms (<code>student-…</code>): an HMAC of each name under the "
                   f"key in <code>{esc(KEY_FILE)}</code> of the grades folder, so the same student keeps the same "
                   "pseudonym in every report made from that folder, and nobody without the key can work them out "
                   "from a class list. Names are also replaced wherever they occur in feedback and code, but code "
                   "can still identify its author (a name in a comment, a style): share it with care.</p>")
    else:
        out.append("<p>This page names students as the gradebook does, and shows their scores, feedback and code: "
                   "it holds student data. Keep it where the grades are kept, and do not share it with students or "
                   "outside the course staff. <code>--anonymise</code> makes a copy with stable pseudonyms.</p>")
    out.append("</section>")

    title = f"{course.title}: class report"
    who = "students of the nbgrader course" if batch.origin == "nbgrader" else "submissions"
    made = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (f"<header><h1>{bidi.bdi(course.title)}: class report</h1><p class=privacy><b>Contains student data</b> "
              f"({'pseudonymised' if names.anonymise else 'names, scores, feedback and code'}): see "
              '<a href="#privacy">Privacy</a>.</p>'
              f"<p>{len(entries)} {who} in <code>{esc(names.scrub(folder.name))}</code>; made {made} by "
              f"autograder {esc(__version__)}.</p>"
              '<nav><a href="#scores">Scores</a> · <a href="#wrong">What the class got wrong</a> · '
              '<a href="#similarity">Code similarity</a> · <a href="#privacy">Privacy</a></nav></header>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>{header}<main>{''.join(out)}</main>"
            "</body></html>\n")


def _nbgrader_hidden(course: Course, entries: list[Entry], modules: list[str]) -> str:
    """What nbgrader's record says of the hidden properties: a count per notebook, no names."""
    rows = []
    for module in modules:
        counts = [e.hidden[module] for e in entries if module in e.hidden]
        if not any(total for _, total in counts):
            continue
        failing = sum(1 for passed, total in counts if passed < total)
        rows.append(f'<tr class="hidden-count" data-exercise="{html.escape(module)}" data-failing="{failing}" '
                    f'data-graded="{len(counts)}"><td><code>{html.escape(module)}</code></td>'
                    f"<td>{max(total for _, total in counts)}</td><td>{failing} of {len(counts)}</td></tr>")
    table = ("<table><thead><tr><th>exercise</th><th>hidden properties</th><th>notebooks failing at least one</th>"
             f"</tr></thead><tbody>{''.join(rows)}</tbody></table>") if rows else ""
    return ('<p class="note" id="nbgrader-hidden"><b>From nbgrader: hidden properties are not listed one by one.</b> '
            "nbgrader keeps of each grading only the score and the engine's feedback in the autograded notebook, and "
            "that feedback counts the hidden properties without naming them; so the table below has the public "
            "properties only, and which hidden property failed is not known to this page. Regrade the notebooks "
            "with <code>python -m autograder grade</code> (it accepts <code>.ipynb</code>) for every property.</p>"
            + table)


def _exercise_table(course: Course, entries: list[Entry], modules: list[str]) -> str:
    rows = []
    for module in modules:
        exercise = course.exercise(module)
        values = [e.scores(course)[module] for e in entries if module in e.scores(course)]
        full = sum(1 for v in values if v >= exercise.points)
        rows.append(f"<tr><td><code>{html.escape(module)}</code></td><td dir=auto>{html.escape(exercise.title)}</td>"
                    f"<td>{exercise.points_text}</td><td>{_stats_line(values)}</td><td>{full}</td></tr>")
    return ("<table><thead><tr><th>exercise</th><th>title</th><th>points</th><th>scores</th><th>full marks</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _submission_table(course: Course, entries: list[Entry], regular: list[str], bonus: list[str], names: Names) -> str:
    head = "".join(f"<th>{html.escape(m.split('_')[0])}</th>" for m in regular + bonus)
    rows = []
    for entry in sorted(entries, key=lambda e: names(e.name)):
        scores = entry.scores(course)
        cells = "".join(f"<td>{_number(scores[m]) if m in scores else '–'}</td>" for m in regular + bonus)
        total = _number(entry.score)  # bonus included, as in grades.csv
        seconds = "–" if entry.seconds is None or not entry.graded else f"{entry.seconds:.1f} s"
        rows.append(f'<tr class="submission" data-name="{html.escape(names(entry.name))}" data-total="{total}">'
                    f"<td>{names.html(entry.name)}</td>{cells}<td><b>{total}</b></td>"
                    f"<td>{seconds}</td><td>{html.escape(names.scrub(entry.note))}</td></tr>")
    return ("<details><summary>Every submission</summary><table><thead><tr><th>submission</th>"
            f"{head}<th>total (bonus included)</th><th>time</th><th>note</th></tr></thead><tbody>{''.join(rows)}"
            "</tbody></table>"
            "</details>")


def _anchor(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)


def _property_table(stats: list[PropertyStats]) -> str:
    rows = []
    for s in stats:
        kind = "hidden" if s.hidden else "public"
        link = f'<a href="#ex-{_anchor(s.key)}">{html.escape(s.name)}</a>' if (s.failed and not s.hidden) else \
            html.escape(s.name)
        mutants = ", ".join(f'<a href="#mutant-{_anchor(m)}">{html.escape(m)}</a>' for m in s.mutants) or "–"
        unwritten = f"<br>{s.unwritten} {NOT_WRITTEN}" if s.unwritten else ""
        rows.append(
            f'<tr class="{kind}" data-property="{html.escape(s.key)}" data-failed="{len(s.failed)}" '
            f'data-graded="{s.graded}" data-unwritten="{s.unwritten}"><td><code>{html.escape(s.exercise)}</code></td>'
            f'<td>{link}<div class="summary">{bidi.inline(s.summary)}</div></td><td>{kind}</td><td>{s.points}</td>'
            f'<td class="share"><span class="bar" style="width:{100 * s.share:.0f}%"></span>'
            f"{100 * s.share:.0f}% ({len(s.failed)} of {s.graded}){unwritten}</td><td>{mutants}</td></tr>")
    columns = "".join(f'<col style="width:{width}%">' for width in (14, 40, 6, 5, 13, 22))
    return (f'<table class="properties"><colgroup>{columns}</colgroup><thead><tr><th>exercise</th><th>property</th>'
            "<th>kind</th><th>points</th><th>failed by</th><th>catalog mutants it catches</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _examples(stats: list[PropertyStats], names: Names) -> str:
    blocks = []
    for s in stats:
        if s.hidden or not s.failed:
            continue
        with_example = [e for e in s.examples if e.arguments]
        without = [e for e in s.examples if not e.arguments]
        parts = [f'<div class="example" id="ex-{_anchor(s.key)}" data-property="{html.escape(s.key)}">'
                 f"<h4><code>{html.escape(s.exercise)}</code> {html.escape(s.name)} — failed by {len(s.failed)} of "
                 f"{s.graded}</h4>"]
        if with_example:
            top = with_example[0]
            parts.append(_example_html(top, names, "most common smallest counterexample"))
            for other in with_example[1:4]:
                parts.append(_example_html(other, names, "also"))
            if len(with_example) > 4:
                parts.append(f"<p>… and {len(with_example) - 4} other counterexamples.</p>")
        if without:
            reasons = "".join(f"<li>{e.count} × {bidi.inline(names.scrub(e.reason) or 'failed')}</li>"
                              for e in without[:5])
            parts.append(f"<p>Failures without a counterexample (an error before any example, or an explicit "
                         f"check):</p><ul>{reasons}</ul>")
        if s.unwritten:
            parts.append(f'<p class="unwritten">{s.unwritten} of the {len(s.failed)} failed on a function not '
                         f"written yet (still the stub: <i>{NOT_WRITTEN}</i>); they are not counted among the "
                         "counterexamples above.</p>")
        parts.append("</div>")
        blocks.append("".join(parts))
    return "".join(blocks) or "<p>No public property failed.</p>"


def _example_html(example: Example, names: Names, label: str) -> str:
    arguments = html.escape(names.scrub(example.arguments))
    rows = [f"<tr><th>{html.escape(label)}</th><td><code>{arguments}</code></td></tr>",
            f'<tr><th>hit by</th><td class="count">{example.count}</td></tr>']
    if example.call:
        rows.append(f"<tr><th>call</th><td><code>{html.escape(names.scrub(example.call))}</code></td></tr>")
    if example.expected:
        rows.append(f'<tr><th>reference\'s answer</th><td class="expected"><code>'
                    f"{html.escape(names.scrub(example.expected))}</code></td></tr>")
    elif example.reason:
        rows.append(f"<tr><th>feedback</th><td>{bidi.inline(names.scrub(example.reason))}</td></tr>")
    return f'<table class="counterexample">{"".join(rows)}</table>'


def _mutant_section(stats: list[PropertyStats]) -> str:
    catches: dict[str, list[PropertyStats]] = {}
    for s in stats:
        for mutant in s.mutants:
            catches.setdefault(mutant, []).append(s)
    if not catches:
        return ("<h3>Mutant catalog</h3><p>The course names no mutant catalog (<code>report: mutants:</code> in its "
                "course file), so properties are not linked to the mistakes they catch.</p>")
    items = "".join(
        f'<li id="mutant-{_anchor(m)}"><code>{html.escape(m)}</code>: caught by '
        + ", ".join(f"{html.escape(s.name)} ({100 * s.share:.0f}% failed)" for s in found) + "</li>"
        for m, found in sorted(catches.items()))
    return ("<h3>Mutant catalog</h3><p>Each mutant is one plausible mistake, planted in the reference solution; the "
            "properties that catch it are where a student making that mistake loses points. A property failed "
            f"often points at these misconceptions.</p><ul>{items}</ul>")


def _similarity_section(similar: Similarity | None, names: Names) -> str:
    if similar is None:
        return ("<p>Not computed: the grades folder holds no code. Name the submissions that were graded: "
                "<code>python -m autograder report GRADES --submissions submissions/*.zip</code>.</p>")
    parts = [f"<p>{similar.compared} pairs of {similar.submissions} submissions compared on "
             f"{html.escape(', '.join(similar.modules))} with copydetect's winnowing (MOSS's method: names, "
             "strings and layout do not count, so renaming variables hides nothing); the course's stubs and "
             "provided files are ignored. A pair's score is the larger of its two shares: how much of one "
             f"submission's code is found in the other. Pairs at {100 * similar.threshold:.0f}% or more "
             f"(<code>--threshold</code>): {len(similar.pairs)}.</p>"]
    if similar.missing:
        parts.append(f"<p class=note>Not compared (code not among --submissions, or no exercise module): "
                     f"{html.escape(', '.join(names(n) for n in similar.missing))}.</p>")
    if not similar.pairs:
        return "".join(parts)
    rows = "".join(
        f'<tr class="pair" data-first="{html.escape(names(p.first))}" data-second="{html.escape(names(p.second))}" '
        f'data-score="{p.score:.4f}"><td>{rank}</td><td><a href="#pair-{rank}">{names.html(p.first)} · '
        f"{names.html(p.second)}</a></td><td><b>{100 * p.score:.0f}%</b></td>"
        f"<td>{100 * p.first_share:.0f}% / {100 * p.second_share:.0f}%</td></tr>"
        for rank, p in enumerate(similar.pairs, 1))
    parts.append('<table class="pairs"><thead><tr><th>rank</th><th>pair</th><th>score</th>'
                 f"<th>share of each found in the other</th></tr></thead><tbody>{rows}</tbody></table>")
    for rank, pair in enumerate(similar.pairs[:MAX_PAIRS], 1):
        parts.append(f'<details class="regions" id="pair-{rank}"{" open" if rank <= 3 else ""}><summary>#{rank} '
                     f"{names.html(pair.first)} · {names.html(pair.second)}: "
                     f"{100 * pair.score:.0f}%</summary>")
        for region in pair.regions:
            parts.append(f"<h4><code>{html.escape(region.module)}</code> ({100 * region.left_share:.0f}% / "
                         f'{100 * region.right_share:.0f}%)</h4><div class="side">'
                         f"<div><div class=who>{names.html(pair.first)}</div><pre>{region.left}</pre></div>"
                         f"<div><div class=who>{names.html(pair.second)}</div><pre>{region.right}</pre></div>"
                         "</div>")
        parts.append("</details>")
    if len(similar.pairs) > MAX_PAIRS:
        parts.append(f"<p>Regions are shown for the first {MAX_PAIRS} pairs only.</p>")
    return "".join(parts)


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232b;background:#fafbfc}
header{background:#1f3550;color:#fff;padding:16px 28px}header h1{margin:0 0 4px;font-size:22px}
header a{color:#cfe3ff}header code{color:#fff}.privacy{background:#8a2b1d;display:inline-block;padding:2px 8px;
border-radius:4px}main{padding:8px 28px 40px;max-width:1400px;box-sizing:border-box}section{margin-top:26px}
h2{border-bottom:2px solid #1f3550;padding-bottom:3px}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #d5dbe2;padding:3px 8px;text-align:left;vertical-align:top}thead th{background:#eef2f6}
.plot{max-width:100%;display:block;margin:8px 0}.summary{color:#56606b;font-size:12px}
table.properties{table-layout:fixed;width:100%}table.properties td{overflow-wrap:anywhere}
.definition{background:#eef2f6;padding:6px 10px}
tr.hidden td{background:#fbf4f2}.share{min-width:150px;position:relative}.bar{position:absolute;left:0;top:0;
bottom:0;background:#4a78b033;z-index:0}.example{border-left:3px solid #4a78b0;padding:2px 10px;margin:12px 0}
.counterexample th{background:#f3f6f9;width:150px}.caution{background:#fff3cd;border:1px solid #e0c36a;
padding:8px 12px}.note{color:#6b5a1d}.side{display:grid;grid-template-columns:1fr 1fr;gap:10px}
.side pre{background:#fff;border:1px solid #d5dbe2;padding:6px;overflow:auto;max-height:520px;font-size:12px;
white-space:pre-wrap}.who{font-weight:bold}mark{background:#ffd54a}details{margin:8px 0}summary{cursor:pointer;
font-weight:600}
"""


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
    page = render(course, folder, batch, modules, stats, similar, names)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return {"submissions": len(entries), "properties": len(stats), "failing": sum(1 for s in stats if s.failed),
            "pairs": None if similar is None else len(similar.pairs)}
