"""The limited helper's process: the engine's own code run on untrusted bytes, under limits.

:mod:`autograder.isolation.helper` starts Python with this folder first on ``sys.path`` and
calls :func:`main`, which lowers its limits, dies with its parent and confines itself as a
worker does (no capabilities, Landlock, seccomp) before it imports the task named on its
command line. The task reads plain JSON on stdin; its answer, plain JSON (an exception as its
type and message), goes to stdout, read back under a size cap. Why: docs/security.md,
"Untrusted input is parsed only in the limited helper".
"""

import importlib
import json
import sys

TYPE_CHECKING = False  # typing is not imported: the helper's every import is paid at each of its starts

if TYPE_CHECKING:  # mypy reads the siblings as the package's own modules
    from . import landlock, seccomp
    from .worker import apply_limits, die_with_parent
else:  # the sibling modules, found on sys.path (the helper does not import the isolation package)
    import landlock
    import seccomp
    from worker import apply_limits, die_with_parent


def confine(config):
    """What a worker takes away, but processes: they are refused outright. Raises OSError."""
    if config["drop_capabilities"]:
        landlock.drop_capabilities()
    if config["landlock"]:
        landlock.restrict(config["read"], config["write"])
    seccomp.restrict(processes=True)


def main():
    config = json.loads(sys.argv[1])
    die_with_parent()
    apply_limits(config["limits"])
    try:
        confine(config)
    except OSError as error:
        answer = {"broken": f"the helper could not confine itself: {error}"}
    else:
        sys.path[:0] = config["path"]  # the engine's package, then site-packages (Python starts with -S)
        module, _, name = config["task"].partition(":")
        try:
            answer = {"ok": getattr(importlib.import_module(module), name)(json.load(sys.stdin))}
        except BaseException as error:  # MemoryError and RecursionError included: the input's doing
            answer = {"failed": f"{type(error).__name__}: {error}"[:2000]}
    sys.stdout.write(json.dumps(answer))  # ASCII: a name that is not UTF-8 crosses as its escapes
    sys.stdout.flush()
