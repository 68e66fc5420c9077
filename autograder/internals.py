"""Every use the engine makes of hypothesis's private internals, in one place.

Each is something hypothesis offers no public way to do, and each is checked where it is used:
an internal that is gone raises :class:`~autograder.errors.GraderError` naming the hypothesis
found and :data:`HYPOTHESIS`, the version these were written against (the one ``requirements.lock``
pins); ``tests/repo/test_internals.py`` checks what each does, and that the lock still pins that version,
so an upgrade fails there first, loudly. CPython's private parts, which the sandboxed worker uses
too, are in :mod:`autograder.isolation.inside.cpython`, standard library only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator
from typing import Any

import hypothesis

from .errors import GraderError

try:  # each is checked where it is used
    from hypothesis.internal import entropy
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants
except ImportError:
    entropy = providers = Constants = None  # type: ignore[assignment, misc]

HYPOTHESIS = "6.155.2"
PYTEST_PLUGIN = "_hypothesis_pytestplugin"  # the module hypothesis registers as its pytest plugin


def changed(what: str) -> GraderError:
    """The error of an internal that is not what :data:`HYPOTHESIS` had."""
    return GraderError(f"hypothesis {hypothesis.__version__} has changed {what}, which this engine uses as hypothesis "
                       f"{HYPOTHESIS} had it: update autograder/internals.py (tests/repo/test_internals.py shows what)")


def draw_from_the_seed_alone() -> None:
    """Stop hypothesis from mixing literals of imported modules into its examples.

    Hypothesis sometimes draws a constant found in the source of any *local* module that happens
    to be imported (``hypothesis.internal.conjecture.providers``). A grader process imports
    different modules under ``check``, ``grade``, nbgrader or a long-lived test process, and editing
    a suite's messages changes its literals, so the same seed drew different examples and a
    submission could score differently. With this, the examples depend on the seed, the strategies
    and the submission's answers only."""
    if Constants is None or not hasattr(providers, "_get_local_constants") or not hasattr(providers, "CONSTANTS_CACHE"):
        raise changed("how it draws the constants of local modules (providers._get_local_constants)")
    providers._get_local_constants = Constants  # a new, empty pool on every call
    providers.CONSTANTS_CACHE.cache.clear()


@contextlib.contextmanager
def seeded_randoms() -> Generator[None, None, None]:
    """While inside, the random generators hypothesis manages (the global ``random`` among them) are
    saved first and restored after, as hypothesis does around its examples."""
    if not hasattr(entropy, "deterministic_PRNG"):
        raise changed("how it manages random generators (entropy.deterministic_PRNG)")
    with entropy.deterministic_PRNG():
        yield


def reseed_randoms() -> None:
    """Seed every random generator hypothesis manages with 0, as it does before each example:
    numpy's once numpy is imported, and those registered with ``register_random``."""
    if not hasattr(entropy, "get_seeder_and_restorer") or not hasattr(entropy, "RANDOMS_TO_MANAGE"):
        raise changed("how it seeds random generators (entropy.get_seeder_and_restorer)")
    entropy.get_seeder_and_restorer(0)  # registers numpy's generator, once numpy is imported
    for generator in list(entropy.RANDOMS_TO_MANAGE.values()):  # those registered since included
        generator.seed(0)


def managed_randoms() -> list[Any]:
    """The random generators hypothesis manages: the ``random`` module, numpy's once numpy is
    imported and seeded, and those registered with ``register_random``."""
    if not hasattr(entropy, "RANDOMS_TO_MANAGE"):
        raise changed("which random generators it manages (entropy.RANDOMS_TO_MANAGE)")
    return list(entropy.RANDOMS_TO_MANAGE.values())


def inner_test(test: Any) -> Callable[..., Any]:
    """The function a hypothesis test (``@given``) calls with each example."""
    handle = getattr(test, "hypothesis", None)
    if not hasattr(handle, "inner_test"):
        raise changed("where a test keeps its inner function (test.hypothesis.inner_test)")
    return handle.inner_test  # type: ignore[union-attr]


@contextlib.contextmanager
def calling(test: Any, inner: Callable[..., Any]) -> Generator[None, None, None]:
    """While inside, the hypothesis test ``test`` calls ``inner`` with each example in place of
    its own inner function, which it calls again after."""
    own = inner_test(test)
    test.hypothesis.inner_test = inner
    try:
        yield
    finally:
        test.hypothesis.inner_test = own


def settings_of(test: Any) -> hypothesis.settings:
    """The settings a hypothesis test runs with, its own decorators' and the profile's."""
    found = getattr(test, "_hypothesis_internal_use_settings", None)
    if not isinstance(found, hypothesis.settings):
        raise changed("where a test keeps its settings (test._hypothesis_internal_use_settings)")
    return found
