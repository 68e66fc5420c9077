"""The self-check shipped beside each notebook: ``grader.check("<module>")`` in the check cell.

This folder is the course's student release (the engine, the public properties and the
locked known-answer cases, no solutions). ``check`` runs ``python -m autograder check`` on
the saved notebook, in a separate process that runs the student's code in the sandbox, and
prints its table. It raises :class:`CheckFailed` when a check fails, so that running the
notebook (``nbgrader validate``, the Validate button) fails too.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def N_(message):  # noqa: N802 (gettext's name, which the engine's catalog extraction knows)
    """``message``, marked: the engine ships this file with it in the course's language."""
    return message


FAILED = N_("{module}: not every check passed (see above); fix it, save, and run this cell again")


class CheckFailed(AssertionError):
    """A public property or a known-answer case failed (the table above says which)."""


def check(module, notebook=None):
    """Check ``notebook`` (default: ``<module>.ipynb`` in the current folder) on ``module``'s public properties."""
    notebook = os.path.abspath(notebook or f"{module}.ipynb")
    # PYTHONDONTWRITEBYTECODE: the command keeps the code it compiles in the user's cache, not here
    env = {**os.environ, "PYTHONPATH": HERE, "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "110", "NO_COLOR": "1",
           "TERM": "dumb"}
    command = [sys.executable, "-m", "autograder", "--course", os.path.join(HERE, "course.yaml"),
               "check", notebook, f"--exercise={module}"]
    run = subprocess.run(command, cwd=HERE, env=env, capture_output=True, text=True)
    print(run.stdout + run.stderr, end="")
    if run.returncode != 0:
        raise CheckFailed(FAILED.format(module=module)) from None
