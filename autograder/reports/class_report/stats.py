"""What the class got wrong: each property's failures, its most common counterexample read
back from the feedback, and the catalog mutants it catches."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import yaml

from ...config import Course
from ...engine.feedback import FALSIFYING, FALSIFYING_EXPLICIT
from ...errors import GraderError
from ...i18n import every_language, read_back
from ...results import split_feedback
from ...suite import EXPECTED
from .load import Entry


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
    """A failed public property's feedback (:func:`autograder.engine.feedback.property_feedback`: the summary, a
    blank line, the message, then hypothesis's notes) taken apart, in whichever language the
    course spoke when it was graded."""
    body = _as_hypothesis_wrote(split_feedback(output)[1]).splitlines()
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


def _as_hypothesis_wrote(text: str) -> str:
    """``text`` with hypothesis's headings of a falsifying example as hypothesis writes them, in
    whichever language the feedback wrote them (a Persian one on a line of its own)."""
    for message in (FALSIFYING, FALSIFYING_EXPLICIT):
        for said in every_language(message):
            before, after = said.split("{call}")
            english = message.replace("\\", "\\\\").replace("{call}", "\\1")  # the call, as hypothesis wrote it
            text = re.sub(re.escape(before) + r"(\w+\()" + re.escape(after), english, text)
    return text


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
