"""The class report's page: one self-contained HTML file, and ``build_report``, which makes it.

``python -m autograder report GRADES_DIR --out report.html``; what the page holds is described
in :mod:`autograder.reports.class_report`. The page loads nothing: no script, no font, no
stylesheet from elsewhere, plots as inline ``data:`` images, and a Content-Security-Policy that
forbids any other source."""

from __future__ import annotations

import datetime
import html
import re
import statistics
from pathlib import Path
from typing import Any

from ... import __version__, bidi
from ...config import Course
from ...errors import GraderError
from ...results import NOT_WRITTEN
from .load import Batch, Entry, boilerplate_sources, graded_exercises, load_batch, submission_modules
from .names import KEY_FILE, Names
from .nbgrader import nbgrader_batch
from .plots import exercise_plots, figure_html, histogram, pyplot
from .similarity import DEFAULT_THRESHOLD, MAX_PAIRS, Similarity, similarity
from .stats import Example, PropertyStats, load_mutants, property_stats

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
    plt = pyplot()
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
        histogram(plt, axis, totals, maximum + extra, "Total score (bonus included)",
                   f"points of {course.full_marks_text(modules)}")
        if extra:
            axis.axvline(maximum, color="#56606b", linestyle="--", linewidth=1)
        out.append(figure_html(figure, "histogram of the total scores"))
        out.append("<h3>Per exercise</h3>")
        out.append(exercise_plots(plt, course, entries, regular))
        out.append(_exercise_table(course, entries, regular))
    if bonus:
        out.append('<h3 id="bonus">Bonus (extra credit, on top of the full marks)</h3>')
        out.append(f"<p>Bonus points: {_stats_line(bonuses)}; "
                   f"{sum(1 for b in bonuses if b > 0)} of {len(bonuses)} submissions earned some.</p>")
        out.append(exercise_plots(plt, course, entries, bonus))
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
        out.append(figure_html(figure, "histogram of grading times"))
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
        out.append(figure_html(figure, "failure share per property"))
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
