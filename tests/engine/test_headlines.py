"""A failure's headline names the call that was made, as a student would write it.

A *recorder* submission answers every call of every exercise by raising ``RuntimeError`` whose
message is the argument list it received, written the way a student writes a call; the
headline of each public property it fails must then read ``<function>(<that list>) raised
RuntimeError: (<that list>)``. And a property whose inputs are a call's arguments shows, in its
falsifying example, the arguments of the call its headline names.
"""

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import autograder
from tests.course.catalog import MUTANTS, SOLUTIONS, STUBS, _finish, _relative_imports, build_mutant
from tests.course.nulls import EXERCISES, EXPORTS, _public

pytestmark = [pytest.mark.sandbox, pytest.mark.data, pytest.mark.slow]

# How the recorder writes what it received: repr, a function by module and name, sets sorted.
_WRITE = '''
def _w(value):
    if callable(value) and hasattr(value, "__qualname__") and not isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if type(value) is list:
        return "[" + ", ".join(map(_w, value)) + "]"
    if type(value) is tuple:
        return "(" + ", ".join(map(_w, value)) + ("," if len(value) == 1 else "") + ")"
    if type(value) is dict:
        return "{" + ", ".join(f"{_w(k)}: {_w(v)}" for k, v in value.items()) + "}"
    if type(value) in (set, frozenset) and value:
        items = "{" + ", ".join(sorted(map(_w, value))) + "}"
        return items if type(value) is set else f"frozenset({items})"
    return repr(value)


def _record(*args, **kwargs):
    raise RuntimeError("(" + ", ".join([*map(_w, args), *(f"{k}={_w(v)}" for k, v in kwargs.items())]) + ")")
'''


def recorder_source(exercise: str) -> str:
    lines = [f"from ._ref.{exercise} import {name}  # noqa: F401" for name in EXPORTS[exercise]] + [_WRITE]
    classes: dict[str, list[str]] = {}
    stub = ast.parse((STUBS / f"{exercise}.py").read_text(encoding="utf-8"))
    for name, fn, cls in _public(stub):
        if cls is None:
            lines += [f"def {name}(*args, **kwargs):", "    _record(*args, **kwargs)", ""]
        elif fn.name == "__init__":
            classes.setdefault(cls, []).append("    def __init__(self, *args, **kwargs):\n        pass")
        elif any(ast.unparse(d) == "property" for d in fn.decorator_list):  # read, not called: no arguments
            classes.setdefault(cls, []).append(f"    @property\n    def {fn.name}(self):\n"
                                               "        raise RuntimeError('')")
        else:
            classes.setdefault(cls, []).append(f"    def {fn.name}(self, *args, **kwargs):\n"
                                               "        _record(*args, **kwargs)")
    for cls, members in classes.items():
        lines += [f"class {cls}:", *members, ""]
    return "\n".join(lines) + "\n"


def build_recorder(submission: Path) -> Path:
    package = submission / "exercises"
    shutil.copytree(SOLUTIONS, package / "_ref", ignore=shutil.ignore_patterns("__pycache__"))
    for module in (package / "_ref").glob("*.py"):
        module.write_text(_relative_imports(module.read_text(encoding="utf-8")), encoding="utf-8")
    for exercise in EXERCISES:
        (package / f"{exercise}.py").write_text(recorder_source(exercise), encoding="utf-8")
    return _finish(submission)


def graded_tests(tmp_path: Path, submission: Path, *exercises: str) -> list[dict]:
    chosen = [argument for exercise in exercises for argument in ("--exercise", exercise)]
    run = autograder("grade", str(submission), "--out", str(tmp_path / "out"), *chosen)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads((tmp_path / "out" / submission.name / "results.json").read_text())["tests"]


def test_every_public_headline_is_the_call_made(tmp_path):
    tests = graded_tests(tmp_path, build_recorder(tmp_path / "recorder"))
    checked, wrong = 0, []
    for test in tests:
        if test["visibility"] != "visible" or test["status"] == "passed":
            continue
        for line in test["output"].splitlines():
            call, raised, received = line.partition(" raised RuntimeError: ")
            if not raised or "more characters]" in call or "feedback cut at" in line:
                continue  # not a call the student's code failed in, or an argument cut where a marker says so
            checked += 1
            if not call.endswith(received):
                wrong.append(f"{test['name']}:\n  shown:    {call}\n  received: {received}")
    assert checked >= 40, f"only {checked} headlines were compared"
    assert not wrong, "headlines that show another call than the one made:\n" + "\n".join(wrong)


def test_a_property_on_one_call_shows_that_calls_arguments_as_its_example(tmp_path):
    """The textbook property once drew a scale and a word but called with other tables; its
    headline's call and its falsifying example now hold the same arguments."""
    mutant = next(m for m in MUTANTS if m.name == "word_pairs_not_weighted_by_count")
    tests = graded_tests(tmp_path, build_mutant(tmp_path / "unweighted", mutant), mutant.exercise)
    output = next(t["output"] for t in tests if t["name"].endswith("test_trace_word_merges_textbook_example"))
    headline = re.search(r"trace_word_merges\((\{.*?\}), (\d+)\)", output)
    example = re.search(r"table=(\{.*?\}),\s*num_merges=(\d+),", output)
    assert headline and example, output
    assert ast.literal_eval(headline[1]) == ast.literal_eval(example[1]) and headline[2] == example[2], output
