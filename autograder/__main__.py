"""``python -m autograder`` and the ``autograder`` command: :func:`autograder.cli.main`, with a
Ctrl-C that comes while the command line is still being imported as quiet as one after."""

import os
import signal
import sys


def run(prog: str = "autograder") -> None:
    """Import the command line, run it, and exit with its status.

    A Ctrl-C during the import ends the process at once with 130, as ``main`` does on one: nothing
    is under way to clean up yet, and a KeyboardInterrupt raised inside an import can come out as
    another error, or be swallowed by a library's fallback. SIGINT left ignored by whoever started
    the process stays ignored."""
    chosen = signal.getsignal(signal.SIGINT)
    if chosen is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop_at_once)
    from .cli import main

    signal.signal(signal.SIGINT, chosen)
    sys.exit(main(prog=prog))


def _stop_at_once(signum: int, frame: object) -> None:
    os._exit(130)


if __name__ == "__main__":
    run("python -m autograder")
