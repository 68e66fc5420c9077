"""The isolation layer: everything that starts, confines and talks to a sandboxed worker.

Its contract with the layers above it is this module's names, and they import nothing else of
it. :class:`Worker` is one sandboxed process seen through :meth:`Worker.request` (one framed
request and its answer, within :attr:`WorkerLimits.call_seconds`); :class:`Layout` is what it
sees; :class:`Standby` hands each property a :class:`Child` of a zygote or a fresh worker;
:func:`isolation` says which layers hold here, :func:`require_isolation` refuses official grading
without them, :func:`isolation_note` says which held. The order of the modules inside and what
each layer holds: docs/architecture.md, "Where each part lives"; docs/security.md, "The layers".
"""

from .cache import cache_home, compiled_code, hypothesis_storage, keep_compiled_code, keyed_folder, own_folder
from .cgroup import join_lane
from .detect import isolation, isolation_note, require_isolation, with_layers
from .helper import HelperLimits, OverLimits, run_helper
from .inside import codec
from .inside.cpython import put_random_words, random_words
from .layers import LAYERS, Isolation, IsolationRefused
from .layout import Layout
from .limits import WorkerLimits
from .process import Worker
from .reaping import sweep_folders, tree
from .standby import Standby, fresh_worker
from .zygote import Child

__all__ = ["LAYERS", "Child", "HelperLimits", "Isolation", "IsolationRefused", "Layout", "OverLimits", "Standby",
           "Worker", "WorkerLimits", "cache_home", "codec", "compiled_code", "fresh_worker", "hypothesis_storage",
           "isolation", "isolation_note", "join_lane", "keep_compiled_code", "keyed_folder", "own_folder",
           "put_random_words", "require_isolation", "random_words", "run_helper", "sweep_folders", "tree",
           "with_layers"]
