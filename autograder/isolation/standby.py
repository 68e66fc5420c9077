"""The workers of one exercise's run of properties: forked from a zygote, or booted ahead.

Every property gets a worker of its own, and nothing one property does reaches the next. A
:class:`Standby` hands each property its worker: a child of the exercise's zygote
(:mod:`autograder.isolation.zygote`) where the machine allows one, otherwise (or when the zygote
cannot serve: it died, or the submission has a file named like a standard-library module, which
the zygote's imports would then pass over) a fresh process booted while the property before it
ran, as a cold one would start: slower, with the same isolation and the same grades.
"""

from __future__ import annotations

from ..errors import GraderError, SandboxFailure
from . import detect
from .layout import Layout
from .limits import WorkerLimits
from .process import Worker
from .zygote import Child, Zygote, forks, preloads, sources


def fresh_worker(layout: Layout, limits: WorkerLimits, uid_slot: int = 0) -> Worker:
    """A worker started cold, under the layers that hold on this machine (:func:`detect.isolation`)."""
    return Worker(layout, limits, detect.isolation(), uid_slot=uid_slot)


class Standby:
    """The workers of one run of properties (same layout, same limits): each property's comes
    from the exercise's zygote where :func:`forks` allows one, else is booted while the one
    before it serves, so that a property seldom waits for its worker to boot.

    A booted worker is a fresh process, started exactly as a cold one: nothing passes from
    one to the next. At most two live at once, the one serving and the one booting, under the
    grader's two private uids (:func:`~autograder.isolation.process.sandbox_uid`), so that closing one,
    which kills every process of its uid, leaves the other alone. Taking a worker closes the
    one taken before.
    """

    def __init__(self, layout: Layout, limits: WorkerLimits, module: str | None = None):
        self.layout = layout
        self.limits = limits
        # the modules its zygote imports, if the properties of ``module`` are forked from one
        self.preloads = preloads(layout.submission, module) if module and forks(detect.isolation()) else None
        self.sources = sources(layout.submission, module) if module and self.preloads is not None else []
        self.zygote: Zygote | None = None
        self.serving: Worker | Child | None = None
        self.booting: Worker | None = None

    def take(self) -> Worker | Child:
        if self.serving is not None:
            self.serving.close()
            self.serving = None
        if self.preloads is not None:
            try:
                self.serving = self._zygote().fork()
                return self.serving
            except (SandboxFailure, GraderError, OSError):  # a fresh worker meets what broke it, and says so
                self.preloads = None
                if self.zygote is not None:
                    self.zygote.close()
        worker = self.booting or fresh_worker(self.layout, self.limits)
        self.serving, self.booting = worker, None
        try:
            self.booting = fresh_worker(self.layout, self.limits, uid_slot=1 - worker.uid_slot)
        except (GraderError, OSError, SandboxFailure):  # not this property's: the next take starts one cold, says why
            pass
        return worker

    def close(self) -> None:
        for worker in (self.serving, self.booting):
            if worker is not None:
                worker.close()
        if self.zygote is not None:
            self.zygote.close()
        self.serving = self.booting = self.zygote = None

    def _zygote(self) -> Zygote:
        """The exercise's zygote: a new one if the last died (a child's memory bomb, say)."""
        if self.zygote is None or not self.zygote.alive:
            assert self.preloads is not None
            self.zygote = Zygote(self.layout, self.limits, detect.isolation(), self.preloads, self.sources)
        return self.zygote
