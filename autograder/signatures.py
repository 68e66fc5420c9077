"""An exercise's graded functions and docstring examples, read from the course's untouched stubs.

The stubs (``stubs`` in the course file, by default the package) are the contract: each public
function, and public method of a public class, is graded (:func:`graded_functions`), its
annotations read as a :class:`Type` (scalars, containers with their item types, ``X | Y``,
``Callable``, a class the module defines, ``any`` for the rest) for the bad-input rules
(:mod:`autograder.input_rules`); each ``>>>`` example is one a property must check
(:mod:`autograder.engine.examples`). Stubs are read with ``ast`` and :mod:`doctest`'s parser,
never imported. Why: docs/authors.md, "Suites".
"""

from __future__ import annotations

import ast
import doctest
import functools
from dataclasses import dataclass
from pathlib import Path

from .config import Course

SCALARS = frozenset({"int", "float", "bool", "str", "bytes"})
CONTAINERS = frozenset({"list", "tuple", "dict", "set", "frozenset"})


@dataclass(frozen=True)
class Type:
    """What an annotation asks for: ``kind`` (a scalar's name, a container's, ``union``,
    ``callable``, ``none``, ``class`` or ``any``), its item types (a dict's key and value, a
    union's members), whether a tuple is ``tuple[X, ...]``, and a class's ``name``."""

    kind: str
    items: tuple[Type, ...] = ()
    variadic: bool = False
    name: str = ""

    def __str__(self) -> str:
        if self.kind == "union":
            return " | ".join(map(str, self.items))
        if self.kind == "class":
            return self.name
        if self.kind == "callable":
            return "Callable"
        if self.kind in CONTAINERS and self.items:
            inner = ", ".join(map(str, self.items)) + (", ..." if self.variadic else "")
            return f"{self.kind}[{inner}]"
        return self.kind

    def members(self) -> tuple[Type, ...]:
        """A union's members; any other type alone."""
        return self.items if self.kind == "union" else (self,)


ANY = Type("any")


@dataclass(frozen=True)
class Parameter:
    name: str
    type: Type
    required: bool  # no default
    keyword_only: bool


@dataclass(frozen=True)
class Graded:
    """A graded function (``owner`` None) or a method of the class ``owner``."""

    name: str
    owner: str | None
    parameters: tuple[Parameter, ...]
    constructor: tuple[Parameter, ...] = ()  # its class's ``__init__`` parameters, for a method

    @property
    def label(self) -> str:
        return f"{self.owner}.{self.name}" if self.owner else self.name


@dataclass(frozen=True)
class Example:
    """One ``>>>`` example: its source, normalized (:func:`normalized`), the output the
    docstring shows (``""`` for a statement such as an assignment), and the examples before it
    in the same docstring, which it may use."""

    source: str
    want: str
    docstring: str  # what it documents: ``__module__``, a function's or ``Class.method``'s name
    before: tuple[Example, ...]

    @property
    def checked(self) -> bool:
        """Whether the docstring shows what it gives: a worked example, not a set-up statement."""
        return bool(self.want.strip())


def stub_path(course: Course, module: str) -> Path:
    """The untouched stub of the exercise ``module``."""
    return course.path(course.stubs or course.package) / f"{module}.py"


def graded_functions(course: Course, module: str) -> list[Graded]:
    """The graded functions and methods of ``module``'s stub, in the order it defines them."""
    return read_graded(stub_path(course, module).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=32)
def read_graded(source: str) -> list[Graded]:
    """:func:`graded_functions` of a stub's source."""
    tree = ast.parse(source)
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and _public(node.name):
            found.append(Graded(node.name, None, _parameters(node, classes)))
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            methods = [item for item in node.body if isinstance(item, ast.FunctionDef)]
            init = next((m for m in methods if m.name == "__init__"), None)
            constructor = _parameters(init, classes, method=True) if init is not None else ()
            found += [Graded(m.name, node.name, _parameters(m, classes, method=True), constructor) for m in methods
                      if _public(m.name) and not any(_decorator_name(d) == "property" for d in m.decorator_list)]
    return found


def docstring_examples(course: Course, module: str) -> list[Example]:
    """Every ``>>>`` example of ``module``'s stub, docstring by docstring, in order."""
    return read_examples(stub_path(course, module).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=32)
def read_examples(source: str) -> list[Example]:
    """:func:`docstring_examples` of a stub's source."""
    tree = ast.parse(source)
    found: list[Example] = []
    for key, text in _docstrings(tree):
        session: list[Example] = []
        for part in doctest.DocTestParser().get_examples(text):
            session.append(Example(normalized(part.source), part.want, key, tuple(session)))
        found += session
    return found


def normalized(source: str) -> str:
    """Example source as ``ast`` writes it back: spacing and comments (``# doctest: +SKIP``)
    do not matter when a property names the example."""
    return ast.unparse(ast.parse(source.strip()))


def _docstrings(tree: ast.Module) -> list[tuple[str, str]]:
    found = [("__module__", ast.get_docstring(tree) or "")]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.append((node.name, ast.get_docstring(node) or ""))
        if isinstance(node, ast.ClassDef):
            found += [(f"{node.name}.{item.name}", ast.get_docstring(item) or "") for item in node.body
                      if isinstance(item, ast.FunctionDef)]
    return found


def _public(name: str) -> bool:
    return not name.startswith("_")


def _decorator_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _parameters(node: ast.FunctionDef, classes: set[str], method: bool = False) -> tuple[Parameter, ...]:
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    if method and not any(_decorator_name(d) == "staticmethod" for d in node.decorator_list):
        positional = positional[1:]  # self
    defaults = len(arguments.defaults)
    found = [Parameter(a.arg, annotation_type(a.annotation, classes), i < len(positional) - defaults, False)
             for i, a in enumerate(positional)]
    found += [Parameter(a.arg, annotation_type(a.annotation, classes), default is None, True)
              for a, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)]
    return tuple(found)


def annotation_type(node: ast.expr | None, classes: set[str] | frozenset[str] = frozenset()) -> Type:
    """The :class:`Type` an annotation names (``classes``: the classes its module defines)."""
    if node is None:
        return ANY
    if isinstance(node, ast.Constant):  # None, or a type written as a string
        if node.value is None:
            return Type("none")
        return annotation_type(ast.parse(node.value, mode="eval").body, classes) if isinstance(node.value, str) else ANY
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        members = [*annotation_type(node.left, classes).members(), *annotation_type(node.right, classes).members()]
        return Type("union", tuple(members))
    if isinstance(node, ast.Subscript):
        return _generic(_decorator_name(node.value), node.slice, classes)
    return _named(_decorator_name(node), classes)


def _named(name: str, classes: set[str] | frozenset[str]) -> Type:
    """The type a bare name annotates: a scalar, a container of anything, ``Callable``, a class of the module."""
    if name in SCALARS or name in CONTAINERS:
        return Type(name)
    if name == "Callable":
        return Type("callable")
    return Type("class", name=name) if name in classes else ANY


def _generic(name: str, index: ast.expr, classes: set[str] | frozenset[str]) -> Type:
    """``name[index]``: a container of its item types, ``Callable[...]`` or ``Optional[X]``."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if name == "Callable":
        return Type("callable")
    if name == "Optional":
        return Type("union", (annotation_type(index, classes), Type("none")))
    if name not in CONTAINERS:
        return ANY
    variadic = name == "tuple" and len(parts) == 2 and isinstance(parts[1], ast.Constant) and parts[1].value is ...
    items = tuple(annotation_type(part, classes) for part in (parts[:1] if variadic else parts))
    return Type(name, items, variadic)
