"""The engine's layout holds: imports go one way, between layers and inside them, with nothing hidden.

The layers, lowest first: ``isolation`` (start, confine and talk to a worker; its ``inside/`` is
copied into every worker), ``engine`` (one submission in one grader process), ``intake`` (taking
a submission in) and ``locked`` (the known-answer cases) side by side, ``batch`` (many
submissions), then ``reports``, ``authoring`` and ``delivery`` side by side, then the command
line (``cli`` and ``commands``). Every layer may use the shared modules (``config``, ``errors``,
``results``, ``suite``, ``equality``, ``internals``, ``i18n``, ``bidi``, ``suite_texts``,
``signatures``, ``input_rules``, ``translation`` and the package's ``__version__``), which use
nothing else. Read from the source (nothing is imported), so a circle hidden in a function
shows too.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "autograder"
INSIDE = PACKAGE / "isolation" / "inside"
SHARED = {"autograder", "autograder.config", "autograder.errors", "autograder.results", "autograder.suite",
          "autograder.syntax", "autograder.equality", "autograder.internals", "autograder.i18n", "autograder.bidi",
          "autograder.suite_texts", "autograder.signatures", "autograder.input_rules", "autograder.translation"}
LAYERS = [("autograder.isolation",), ("autograder.engine",), ("autograder.intake", "autograder.locked"),
          ("autograder.batch",),
          ("autograder.reports", "autograder.authoring", "autograder.delivery"),
          ("autograder.cli", "autograder.commands", "autograder.__main__")]
PRIVATE_HOMES = {"autograder.internals": "hypothesis", "autograder.isolation.inside.cpython": "CPython"}
DOCUMENTED = {("os", "_exit"), ("autograder.i18n", "_")}  # public names that start with an underscore (gettext's _)


@dataclass
class Module:
    name: str
    path: Path
    imports: dict[str, int] = field(default_factory=dict)  # autograder module -> line
    privates: list[str] = field(default_factory=list)  # "line: what", a private name of another module
    outside: list[tuple[str, int]] = field(default_factory=list)  # (module, line), not autograder's
    in_functions: list[str] = field(default_factory=list)  # "line: module", autograder's, imported in a function


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def read(path: Path, known: set[str]) -> Module:
    """What the module at ``path`` imports, of the engine's modules (``known``) and others."""
    module = Module(module_name(path), path)
    nodes = list(_walk(ast.parse(path.read_text(encoding="utf-8"))))
    aliases: dict[str, str] = {}  # a name bound to a module: which module
    for node, in_function in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                _found(module, alias.name, node.lineno, in_function, known)
                bound = alias.asname or alias.name.split(".")[0]
                aliases[bound] = alias.name if alias.asname else bound
        elif isinstance(node, ast.ImportFrom):
            aliases |= _imported_from(module, node, in_function, known)
    for node, _ in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            owner, name = aliases[node.value.id], node.attr
            if name.startswith("_") and not name.startswith("__") and (owner, name) not in DOCUMENTED:
                module.privates.append(f"{node.lineno}: {owner}.{name}")
    return module


def _imported_from(module: Module, node: ast.ImportFrom, in_function: bool, known: set[str]) -> dict[str, str]:
    """Note what ``from ... import ...`` imports; the names it binds to the package's modules."""
    package = module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]
    base = _absolute(package, node.level, node.module)
    bound = {}
    for alias in node.names:
        if f"{base}.{alias.name}" in known:  # a module of the package
            _found(module, f"{base}.{alias.name}", node.lineno, in_function, known)
            bound[alias.asname or alias.name] = f"{base}.{alias.name}"
            continue
        _found(module, base, node.lineno, in_function, known)
        if alias.name.startswith("_") and not alias.name.startswith("__") and base != module.name \
                and (base, alias.name) not in DOCUMENTED:
            module.privates.append(f"{node.lineno}: from {base} import {alias.name}")
    return bound


def _walk(tree: ast.AST):
    """Every node with whether it is inside a function, leaving out ``if TYPE_CHECKING:`` blocks."""
    todo = [(tree, False)]
    while todo:
        node, in_function = todo.pop()
        yield node, in_function
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                todo += [(grandchild, in_function) for grandchild in child.orelse]
                continue
            todo.append((child, in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))))


def _absolute(package: str, level: int, name: str | None) -> str:
    if not level:
        return name or ""
    parts = package.split(".")
    base = parts[:len(parts) - level + 1]
    return ".".join([*base, *([name] if name else [])])


def _found(module: Module, target: str, line: int, in_function: bool, known: set[str]) -> None:
    if target.startswith("autograder"):
        while target not in known and "." in target:  # a name in a module: the module
            target = target.rpartition(".")[0]
        if target != module.name:
            module.imports.setdefault(target, line)
            if in_function:
                module.in_functions.append(f"{line}: {target}")
    else:
        module.outside.append((target, line))


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    paths = sorted(PACKAGE.rglob("*.py"))
    known = {module_name(path) for path in paths}
    return {module.name: module for module in (read(path, known) for path in paths)}


def layer(name: str) -> int | None:
    """The layer of a module (None: a shared module)."""
    if name in SHARED:
        return None
    return next(index for index, owners in enumerate(LAYERS)
                if any(name == owner or name.startswith(owner + ".") for owner in owners))


def test_there_is_no_import_circle(modules):
    circles = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in modules[name].imports:
            if state.get(target) == 1:
                circles.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(modules):
        if name not in state:
            visit(name, [name])
    assert circles == []


def test_no_module_imports_another_s_private_names(modules):
    found = [f"{m.name}:{line}" for m in modules.values() if m.name not in PRIVATE_HOMES for line in m.privates]
    assert found == [], "a name that starts with _ is its module's own"


def test_a_layer_imports_only_layers_below_it_and_the_shared_modules(modules):
    upward = []
    for module in modules.values():
        mine = layer(module.name)
        for target, line in module.imports.items():
            theirs = layer(target)
            if (mine is None and theirs is not None) or (mine is not None and theirs is not None and theirs > mine):
                upward.append(f"{module.name}:{line} imports {target}")
    assert upward == []


def test_only_the_command_line_imports_the_engine_s_modules_inside_functions(modules):
    """An import inside a function hides what a module needs (and could hide a circle); the one
    place that imports on demand is ``cli.COMMANDS``, through importlib. ``__main__`` imports the
    command line itself inside its guard, so that a Ctrl-C during that import is quiet."""
    found = [f"{m.name}:{entry}" for m in modules.values() for entry in m.in_functions
             if (m.name, entry.split(": ")[-1]) != ("autograder.__main__", "autograder.cli")]
    assert found == []


def test_the_worker_s_files_import_the_standard_library_and_each_other_only(modules):
    siblings = {path.stem for path in INSIDE.glob("*.py")}
    found = []
    for module in modules.values():
        if module.path.parent != INSIDE:
            continue
        package = module.path.name == "__init__.py"  # copied into no worker: it imports its siblings as modules
        found += [f"{module.name}:{line} imports {target}" for target, line in module.imports.items()
                  if not (package and target.rpartition(".")[0] == module.name)]
        found += [f"{module.name}:{line} imports {target}" for target, line in module.outside
                  if target.split(".")[0] not in sys.stdlib_module_names | siblings]
    assert found == []


def test_private_internals_are_used_in_their_one_module_only(modules):
    """hypothesis's in ``internals``, CPython's in ``isolation/inside/cpython``: a private module
    (``_json``), ``hypothesis.internal`` or a private attribute of a module (``zipfile._EndRecData``)."""
    found = []
    for module in modules.values():
        if module.name in PRIVATE_HOMES:
            continue
        found += [f"{module.name}:{line} imports {target}" for target, line in module.outside
                  if target.startswith("hypothesis.internal") or any(
                      part.startswith("_") and part != "__future__" for part in target.split("."))]
        found += [f"{module.name}:{line}" for line in module.privates if not line.split(": ", 1)[1].startswith(
            "autograder")]
        source = module.path.read_text(encoding="utf-8")
        found += [f"{module.name}: {mark}" for mark in ("_hypothesis_internal", "hypothesis.inner_test",
                                                        "_hypothesis_pytestplugin") if mark in source]
    assert found == []


def test_the_rules_see_what_they_forbid(tmp_path):
    """The reader finds each kind of breach in a module written to commit them all."""
    (tmp_path / "autograder" / "engine").mkdir(parents=True)
    bad = tmp_path / "autograder" / "engine" / "bad.py"
    bad.write_text("import zipfile\nfrom hypothesis.internal import entropy\nfrom ..batch.grader import _private\n"
                   "def f():\n    from ..cli import main\n    return zipfile._EndRecData\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        module = read(bad, {"autograder.engine.bad", "autograder.batch.grader", "autograder.cli"})
    finally:
        ROOT = saved
    assert module.imports == {"autograder.batch.grader": 3, "autograder.cli": 5}
    assert module.privates == ["3: from autograder.batch.grader import _private", "6: zipfile._EndRecData"]
    assert module.in_functions == ["5: autograder.cli"]
    assert ("hypothesis.internal", 2) in module.outside
    assert layer("autograder.engine.bad") < layer("autograder.batch.grader") < layer("autograder.cli")


def test_every_file_the_engine_reads_ships_with_it():
    """An installed engine has only its modules and the package data pyproject.toml names: a
    template or catalog left out of that list is missing from every install, not from this checkout."""
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["autograder"]
    shipped = {path for pattern in globs for path in PACKAGE.glob(pattern)}
    data = {path for path in PACKAGE.rglob("*") if path.is_file() and path.suffix not in (".py", ".pyc")}
    assert data - shipped == set()


def test_outside_the_sandbox_only_what_its_package_exports_is_imported(modules):
    """``autograder/isolation/__init__.py`` is the sandbox's contract with the layers above it:
    they import its names, never one of its modules (``from ..isolation import detect`` included)."""
    found = [f"{m.name}:{line} imports {target}" for m in modules.values()
             if not m.name.startswith("autograder.isolation")
             for target, line in m.imports.items() if target.startswith("autograder.isolation.")]
    assert found == []


def test_what_students_and_channels_run_imports_no_authoring_tool(modules):
    """``authoring`` is the course author's (mutation testing, bench, a new exercise): the student's
    ``check`` and the delivery channels use none of it."""
    found = [f"{m.name}:{line} imports {target}" for m in modules.values()
             if m.name == "autograder.commands.check" or m.name.startswith("autograder.delivery")
             for target, line in m.imports.items() if target.startswith("autograder.authoring")]
    assert found == []


def test_authoring_and_delivery_import_nothing_of_each_other(modules):
    """The course author's tools and the channels share a floor and stand apart: bench measures a
    channel through its commands, as an instructor runs them, and no channel uses an author's tool."""
    apart = ("autograder.authoring", "autograder.delivery")
    found = [f"{m.name}:{line} imports {target}" for m in modules.values() for target, line in m.imports.items()
             for mine, theirs in (apart, apart[::-1]) if m.name.startswith(mine) and target.startswith(theirs)]
    assert found == []
