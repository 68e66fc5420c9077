"""What ran past its time while one exercise was graded, and what that does to the calls after it.

The properties of an exercise share an :class:`Overruns` (one for its public properties and
locked cases, another for its hidden ones): once a function ran past its time, its calls from
other properties get :data:`AFTER_SECONDS` at most, and once it ran past that too, every later
call fails at once (kind ``overran``), so that a function that hangs costs its exercise one
limit, not one a property. Why and how: docs/architecture.md, "A function that hangs".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SandboxFailure, TimedOut
from ..i18n import _

AFTER_SECONDS = 2.0  # a call's limit once its function ran past its time in another property


@dataclass
class Overruns:
    """The functions (by the label messages give them: ``ex5_parity.ratio_curve``) of one exercise's
    public, or hidden, properties that ran past their time, and the calls that did."""

    first: dict[str, str] = field(default_factory=dict)  # function: the property where it first ran past its time
    out: dict[str, tuple[str, str]] = field(default_factory=dict)  # function: where it ran past its time again, and
    # why it is not called again (where it ran past its time, it is: the same call fails as it did)
    calls: dict[tuple[str, bytes], TimedOut] = field(default_factory=dict)  # (property, request): its failure

    def check(self, function: str, place: str) -> None:
        """Fail a call of ``function`` from the property ``place`` at once if the function is out."""
        if function in self.out and place not in (self.first[function], self.out[function][0]):
            raise SandboxFailure("overran", self.out[function][1])

    def limit(self, function: str, place: str, seconds: float) -> float:
        """The time limit of a call of ``function`` from ``place`` whose own limit is ``seconds``."""
        return seconds if self.first.get(function, place) == place else min(seconds, AFTER_SECONDS)

    def again(self, place: str, payload: bytes) -> TimedOut | None:
        """The failure a request made before in this property met, if it ran past its time."""
        failed = self.calls.get((place, payload))
        return None if failed is None else TimedOut(str(failed), failed.seconds, budget=failed.budget,
                                                    answering=failed.answering)

    def timed_out(self, call: str, function: str, place: str, payload: bytes, failure: TimedOut,
                  budget: float) -> TimedOut:
        """The failure of ``call`` (the request ``payload`` from ``place``, of ``function``), which
        ran past its time as ``failure`` says, in the words a student reads (which limit, and
        whether the time went on the call or on sending its answer back), in a property whose
        budget was ``budget`` seconds; kept."""
        first = self.first.setdefault(function, place)
        if first != place:
            limit = _("the {seconds:g} s each call to it has in the other properties of this exercise, since it "
                      "ran past its time in {place}").format(seconds=failure.seconds, place=first)
            self.out.setdefault(function, (place, _("{function} was not called: it ran past its time in {place}, and "
                                                    "again in {again}, so the other properties of this exercise do not "
                                                    "wait for it").format(function=function, place=first, again=place)))
        elif failure.budget:
            limit = _("the {seconds:.3g} s left of its property's time budget of {budget:.3g} s").format(
                seconds=failure.seconds, budget=budget)
        else:
            limit = _("the time limit of {seconds:g} s per call").format(seconds=failure.seconds)
        said = (_("{call} returned, but its answer was too big to send back within {limit}") if failure.answering
                else _("{call} did not return within {limit}"))
        timed_out = TimedOut(said.format(call=call, limit=limit), failure.seconds, budget=failure.budget,
                             answering=failure.answering)
        self.calls[(place, payload)] = timed_out
        return timed_out

    def used_up(self, function: str, place: str) -> None:
        """``function`` took most of the budget of ``place``, which ran out: as if it ran past its time."""
        self.first.setdefault(function, place)
