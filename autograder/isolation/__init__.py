"""The isolation layer: everything that starts, confines and talks to a sandboxed worker.

Its contract with the layers above it is this module's names: they import nothing else of it
(``tests/repo/test_architecture.py``). A :class:`Worker` is one sandboxed
process running student code, seen through :meth:`Worker.request`: one framed request (plain JSON
data, :mod:`~autograder.isolation.inside.codec`) and its answer at a time, within
:attr:`WorkerLimits.call_seconds`, every failure a :class:`~autograder.errors.SandboxFailure`; what
it sees is a :class:`Layout`, what it may use :class:`WorkerLimits`. A :class:`Standby` hands each
property of an exercise a worker of its own: a :class:`Child` forked from the exercise's zygote, which
answers as a worker does, or a fresh :class:`Worker` booted ahead. Which layers
hold on this machine is :func:`isolation`'s answer (an :class:`Isolation`); :func:`require_isolation`
refuses official grading (:class:`IsolationRefused`) where none keeps the grader's files from
student code; :func:`isolation_note` says which held, for reports.

Inside, the modules go one way: ``inside/`` (copied into every worker, standard library only),
then ``layers``, ``limits``, ``layout``, ``cgroup``, ``reaping``, ``channel``, ``process`` (a fresh
worker), ``zygote``, ``detect`` (the probes) and ``standby``. docs/security.md says what each
layer holds in each mode, and which test shows it.
"""

from .cache import cache_home, keyed_folder, own_folder
from .cgroup import join_lane
from .detect import isolation, isolation_note, require_isolation, with_layers
from .helper import HelperLimits, OverLimits, run_helper
from .inside import codec
from .layers import LAYERS, Isolation, IsolationRefused
from .layout import Layout
from .limits import WorkerLimits
from .process import Worker
from .reaping import tree
from .standby import Standby, fresh_worker
from .zygote import Child

__all__ = ["LAYERS", "Child", "HelperLimits", "Isolation", "IsolationRefused", "Layout", "OverLimits", "Standby",
           "Worker", "WorkerLimits", "cache_home", "codec", "fresh_worker", "isolation", "isolation_note",
           "join_lane", "keyed_folder", "own_folder", "require_isolation", "run_helper", "tree", "with_layers"]
