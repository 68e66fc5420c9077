"""Sealing the locked cases for a release: the reference's answers hashed, and refused if guessable.

:func:`seal` runs the reference on every case and keeps only a random salt and
``sha256(salt + canonical(output))``, and the same hash of each *part* of the case (:func:`split`):
its calls in order, cut wherever the calls so far have more than :data:`~.attack.BUDGET`
candidates, so that a failure can name the call, or the few calls, whose answer differs. A case
the attacker (:mod:`.attack`) recovers from its hash is refused.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import secrets
from collections.abc import Callable
from typing import Any

from ..config import Course
from ..engine.run import on_path
from ..errors import GraderError
from .attack import BUDGET, Space, attack, attack_spaces
from .cases import load_cases
from .hashing import digest
from .run import run_case


def seal(course: Course) -> dict[str, list[dict]]:
    """Run the reference on every case; return the cases with a salt and their output's hash.

    Raises :class:`GraderError` naming every case that :func:`attack` recovers from its hash.
    """
    sealed: dict[str, list[dict]] = {}
    found = []
    support = reference_support(course)
    with on_path(course.root):
        for case in load_cases(course):
            module = importlib.import_module(f"{course.solutions}.{case.exercise}")
            output = run_case(case, module, support)
            salt = secrets.token_hex(16)
            spaces = attack_spaces(case, output)
            if attack(spaces, salt, digest(salt, output)) is not None:
                guesses = math.prod(space.size for space in spaces)
                found.append(f"{case.exercise}: {case.name!r} (found by a search of {guesses:,} structured guesses)")
            parts = [{"calls": part, "sha256": digest(salt, [output[i] for i in part])} for part in split(spaces)]
            entry = case.entry.model_dump(exclude_defaults=True) | {"salt": salt, "sha256": digest(salt, output)} | (
                {"parts": parts} if len(parts) > 1 else {})
            sealed.setdefault(case.exercise, []).append(entry)
    if found:
        raise GraderError(f"locked cases whose answers are too small to hide (a search of at most {BUDGET:,} "
                          "guesses shaped like the answer recovers them); make their inputs larger or add "
                          "calls: " + "; ".join(found))
    return sealed


def split(spaces: list[Space]) -> list[list[int]]:
    """The calls of a case in parts, each hashed on its own so a failure can name its call: in
    order, a part ends once its calls' spaces hold more than :data:`BUDGET` candidates, the
    rule's size for a case; calls left over join the last part (so a case too small to split
    stays one part)."""
    parts: list[list[int]] = []
    current: list[int] = []
    for index in range(len(spaces)):
        current.append(index)
        if math.prod(spaces[i].size for i in current) > BUDGET:
            parts.append(current)
            current = []
    if current:
        parts[-1:] = [[*parts[-1], *current]] if parts else [current]
    return parts


def reference_support(course: Course) -> Callable[[str], Any]:
    """The course's support modules (and ``builtins``) loaded here, for the reference."""
    modules = {"builtins": importlib.import_module("builtins")}
    for relative in course.sandbox.support_modules:
        path = course.path(relative)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise GraderError(f"{relative}: not a Python module the reference can load")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[path.stem] = module
    return modules.__getitem__
