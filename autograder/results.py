"""The result model: what grading one submission found, as every part of the engine reads it.

The pytest plugin records a :class:`PropertyResult` per property (self-check adds one per locked
case); a :class:`Grade` holds a submission's results, the notes its reader gets and the seconds
grading took, and is what reports, the gradebook, self-check and nbgrader read. Gradescope's
``results.json`` appears only at the edges (:meth:`Grade.to_gradescope`,
:meth:`Grade.from_gradescope`); it holds no time, and every text in it is capped with a marker.
Why: docs/gradescope.md, "What the bundle does on Gradescope"; docs/security.md, "Hidden inputs
never reach public feedback".
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass, replace

from .config import Course, Limits
from .i18n import N_, _, every_language, speaking


@dataclass(frozen=True)
class PropertyResult:
    """One graded property, as reports and the gradebook see it."""

    exercise: str
    name: str
    points: int
    score: int
    passed: bool
    hidden: bool
    output: str
    # the student's code stopped the property before it could judge an answer (a function not
    # written yet, a module missing or not importable, the time budget used up): every property
    # it stops fails with the same words, which a report says once
    blocked: bool = False
    # it failed on the sandbox's time limit (a call that timed out or overran, the time budget
    # used up), which mutate tells from a caught mutant; a grader process's answer (Grade.to_plain)
    # says so, results.json does not
    timed_out: bool = False

    def to_plain(self) -> dict:
        """This result as plain data (JSON), as grader processes and their callers pass it."""
        return asdict(self)

    @classmethod
    def from_plain(cls, plain: dict) -> PropertyResult:
        """The result :meth:`to_plain` made plain."""
        return cls(**plain)

    @property
    def title(self) -> str:
        """The name reports and the gradebook show: ``exercise: property``."""
        return f"{self.exercise}: {self.name}"

    @property
    def status(self) -> str:
        return "passed" if self.passed else "failed"

    @property
    def description(self) -> str:
        """The property's description, as its feedback begins (a hidden property's without its reason)."""
        if self.hidden:
            return self.output.rsplit(HIDDEN_REASON, 1)[0]
        return split_feedback(self.output)[0]

    @property
    def reason(self) -> str:
        """Why the property failed, in one line: a hidden property's reason (from a fixed set), or
        the first line of a public property's message (of its feedback, where it has no message
        of its own: an unreadable submission's)."""
        if self.hidden:
            return self.output.rsplit(HIDDEN_REASON, 1)[-1].strip().rstrip(".")
        message = split_feedback(self.output)[1] or self.output
        return next((line.strip() for line in message.splitlines() if line.strip()), "")

    @property
    def unwritten(self) -> bool:
        """Whether it failed on a function the student has not written yet (still the stub)."""
        return not self.passed and self.reason.endswith(every_language(NOT_WRITTEN))


@dataclass(frozen=True)
class Grade:
    """One submission's results, the notes for its reader and the seconds grading took.

    ``seconds`` is None for a submission that could not be read: nothing ran, so its tests
    (one per exercise) name no property. A grade read back from ``results.json`` has no time
    (the document holds none): its ``seconds`` are 0.0 if the suites ran, else None.
    """

    results: tuple[PropertyResult, ...]
    notes: tuple[str, ...]
    seconds: float | None

    @classmethod
    def unreadable(cls, course: Course, message: str, exercises: Collection[str] | None = None) -> Grade:
        """Zero on every exercise graded (``exercises``, default all) of a submission that could not be read,
        and why: ``message``, said once in the notes, which each exercise's result points to."""
        with speaking(course.language):
            pointer = _("Not graded: the submission could not be read (the reason is above).")
        return cls(tuple(PropertyResult(exercise=e.module, name="submission", points=e.points, score=0, passed=False,
                                        hidden=False, output=pointer)
                         for e in course.exercises if exercises is None or e.module in exercises), (message,), None)

    @classmethod
    def joined(cls, parts: list[Grade], seconds: float | None) -> Grade:
        """The grade of a submission graded in ``parts``: their results in order, and their
        notes once (every part of a submission has the same; any other, after them)."""
        return cls(tuple(r for part in parts for r in part.results),
                   tuple(note for notes in dict.fromkeys(part.notes for part in parts) for note in notes), seconds)

    @property
    def score(self) -> int:
        return sum(r.score for r in self.results)

    @property
    def max_score(self) -> int:
        return sum(r.points for r in self.results)

    @property
    def notes_text(self) -> str:
        return "\n".join(self.notes)

    def by_exercise(self, course: Course) -> dict[str, tuple[float, int]]:
        """Score and maximum per exercise graded: ``course``'s in its order, then any other. An
        exercise left out of the grading (``grade --exercise``) is not there: it was not graded,
        which is not a zero."""
        graded = {r.exercise for r in self.results}
        scores = {e.module: [0.0, 0] for e in course.exercises if e.module in graded}
        for result in self.results:
            entry = scores.setdefault(result.exercise, [0.0, 0])
            entry[0] += result.score
            entry[1] += result.points
        return {module: (score, int(maximum)) for module, (score, maximum) in scores.items()}

    def capped(self, limits: Limits) -> Grade:
        """This grade with each text cut to ``limits.feedback_chars``, and all of them together (the
        notes first) to ``limits.report_chars``: the later ones get what the earlier ones left.
        Capping a capped grade changes nothing."""
        left = limits.report_chars
        texts = []
        for text in [self.notes_text, *(r.output for r in self.results)]:
            text = clip(text, min(limits.feedback_chars, max(left, 0)))
            left -= len(text)
            texts.append(text)
        results = tuple(replace(r, output=output) for r, output in zip(self.results, texts[1:], strict=False))
        return replace(self, results=results, notes=(texts[0],))

    def to_plain(self) -> dict:
        """This grade as plain data (JSON), as a grader process answers it (:meth:`from_plain`)."""
        return {"results": [result.to_plain() for result in self.results], "notes": list(self.notes),
                "seconds": self.seconds}

    @classmethod
    def from_plain(cls, plain: dict) -> Grade:
        """The grade :meth:`to_plain` made plain."""
        return cls(tuple(PropertyResult.from_plain(result) for result in plain["results"]), tuple(plain["notes"]),
                   plain["seconds"])

    def to_gradescope(self, course: Course) -> dict:
        """Gradescope's ``results.json`` document, capped to ``course``'s limits."""
        grade = self.capped(course.limits)
        seen = course.visibility
        return {"score": grade.score, "output": grade.notes_text, "visibility": seen.score,
                "tests": [grade._gradescope_test(r, seen.hidden_properties) for r in grade.results]}

    def _gradescope_test(self, result: PropertyResult, hidden_visibility: str) -> dict:
        extra: dict[str, object] = {"exercise": result.exercise}
        if self.seconds is not None:
            extra |= {"property": result.name, "hidden": result.hidden} | ({"blocked": True} if result.blocked else {})
        return {"name": result.title, "score": result.score, "max_score": result.points, "status": result.status,
                "visibility": hidden_visibility if result.hidden else "visible", "output": result.output,
                "extra_data": extra}

    @classmethod
    def from_gradescope(cls, document: dict) -> Grade:
        """The grade a ``results.json`` document of :meth:`to_gradescope` holds."""
        results = tuple(PropertyResult(
            exercise=t["extra_data"]["exercise"], name=t["extra_data"].get("property", t["name"].split(": ", 1)[-1]),
            points=t["max_score"], score=t["score"], passed=t["status"] == "passed",
            hidden=t["extra_data"].get("hidden", False), output=t["output"],
            blocked=t["extra_data"].get("blocked", False),
        ) for t in document["tests"])
        ran = any("property" in t["extra_data"] for t in document["tests"])  # what _gradescope_test names
        return cls(results, (document["output"],), 0.0 if ran else None)


HIDDEN_REASON = " — "  # a hidden property's feedback: "description — reason."
LOCKED_PREFIX = "locked case: "  # how a locked case's name begins (check_locked), in every language
NOT_WRITTEN = N_("not implemented yet")  # the reason of a call into a function still the stub (engine.session)


def split_feedback(output: str) -> tuple[str, str]:
    """A public property's feedback as ``(description, message)``: the plugin writes the
    description, a blank line, then the message and hypothesis's notes."""
    description, _, message = output.strip("\n").partition("\n\n")
    return description.strip(), message


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying so: student code decides how
    long its messages are, and a report must stay readable (and small) whatever it does."""
    if len(text) <= limit:
        return text
    return text[:limit] + _("… [feedback cut at {limit} characters]").format(limit=limit)
