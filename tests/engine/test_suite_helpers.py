"""The assertions suites import (``autograder.suite``): which student errors ``expect_error`` takes."""

import pytest

from autograder.errors import StudentError
from autograder.suite import expect_error

BASE = ["Exception", "BaseException", "object"]


def raising(*mro: str):
    """A call that fails in the student's code with an exception of class chain ``mro``."""
    def call():
        raise StudentError("f(-1)", {"type": mro[0], "mro": [*mro, *BASE], "message": "n must be >= 0, got -1"})
    return call


@pytest.mark.parametrize("mro, names", [
    (("ValueError",), ("ValueError",)),
    (("VocabError", "ValueError"), ("ValueError",)),  # the student's own class, derived from the one named
    (("UnicodeDecodeError", "UnicodeError", "ValueError"), ("ValueError",)),
    (("Both", "ValueError", "TypeError"), ("TypeError", "ValueError")),  # a property that takes either
    (("VocabError", "ValueError"), ("VocabError",)),  # a course's own class: its bases are not judged
])
def test_the_error_the_rule_names_passes(mro, names):
    expect_error(raising(*mro), names, "f(-1)", naming=("n",))


@pytest.mark.parametrize("mro, names", [
    (("TypeError",), ("ValueError",)),
    (("Every", "ValueError", "TypeError", "KeyError", "IndexError", "LookupError"), ("ValueError",)),
    (("Every", "ValueError", "TypeError", "KeyError", "IndexError", "LookupError"), ("TypeError",)),
    (("Every", "ValueError", "TypeError", "KeyError", "IndexError", "LookupError"), ("TypeError", "ValueError")),
    (("Both", "ValueError", "TypeError"), ("ValueError",)),
    (("ValueError", "KeyError", "LookupError"), ("ValueError",)),
])
def test_an_error_that_is_also_another_builtin_error_fails(mro, names):
    with pytest.raises(AssertionError, match="expected"):
        expect_error(raising(*mro), names, "f(-1)")
