"""Untouched stubs, found by reading a submission's source (it is never run, nor parsed, in the grader).

:func:`sure_stubs` returns the signatures of a module's *sure stubs* (functions, and classes
without ``self``, that calling can only make raise ``NotImplementedError``), so that a call
whose arguments bind is answered "not implemented yet" without a worker
(:class:`~autograder.engine.session.FreshAnswers`). Staging reads them in the limited helper
(:mod:`autograder.intake.reading`) and keeps them in :data:`STUBS` (:func:`stubs_to_json`), where
a grading finds them (:func:`staged_stubs`). What makes a sure stub: docs/architecture.md,
"Calls that need no worker".
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from collections import Counter
from pathlib import Path

from ..syntax import bound_by, is_docstring

STUBS = ".stubs.json"  # staged beside the package: the sure stubs of each exercise module, as plain data

# names through which code can rebind a module's functions, or change one's code, without an
# assignment we can see (``getattr`` with a name built at run time; ``get_ipython``: a notebook's
# ``%%time`` cell runs its body, definitions included, from a string)
DYNAMIC = frozenset({"globals", "locals", "vars", "setattr", "delattr", "exec", "eval", "compile", "__import__",
                     "__dict__", "__builtins__", "builtins", "modules", "importlib", "__setattr__", "__getattr__",
                     "__globals__", "__code__", "__closure__", "__set__", "__delete__", "f_globals", "f_locals",
                     "_getframe", "currentframe", "get_referrers", "ctypes", "getattr", "get_ipython"})


def sure_stubs(source: str, package_init: str = "") -> dict[str, inspect.Signature]:
    """The sure stubs of a module's source, by name, with their signatures (``package_init``:
    the source of its package's ``__init__.py``).

    >>> sorted(sure_stubs('def f(x):\\n    "Do it."\\n    raise NotImplementedError("f")\\n'))
    ['f']
    >>> sure_stubs('def f(x):\\n    raise NotImplementedError\\nf = print\\n')
    {}
    >>> sure_stubs('class Tok:\\n    def __init__(self, size):\\n        raise NotImplementedError\\n')
    {'Tok': <Signature (size)>}
    """
    try:
        tree, init = ast.parse(source), ast.parse(package_init)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    nodes = list(ast.walk(tree))
    used = {n.id for n in nodes if isinstance(n, ast.Name)} | {n.attr for n in nodes if isinstance(n, ast.Attribute)}
    assigned = {n.attr for n in nodes if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)}
    if used & DYNAMIC or any(name.startswith("__") for name in assigned) or not _only_stdlib(nodes) \
            or init.body[1 if init.body and is_docstring(init.body[0]) else 0:]:
        return {}
    bound = Counter(name for node in nodes for name in bound_by(node))
    if bound["NotImplementedError"]:
        return {}
    stubs = {node.name: _signature(node.args) for node in tree.body
             if isinstance(node, ast.FunctionDef) and not node.decorator_list and _only_raises(node)}
    stubs |= {node.name: signature for node in tree.body
              if isinstance(node, ast.ClassDef) and (signature := _construction_stub(node)) is not None}
    return {name: signature for name, signature in stubs.items() if bound[name] == 1 and name not in assigned}


def _only_stdlib(nodes: list[ast.AST]) -> bool:
    """Every import is of the standard library (a star import counts as not: it binds unseen names)."""
    for node in nodes:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] not in sys.stdlib_module_names
                                                for a in node.names):
            return False
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0]
                                                 not in sys.stdlib_module_names or
                                                 any(a.name == "*" for a in node.names)):
            return False
    return True


def _construction_stub(node: ast.ClassDef) -> inspect.Signature | None:
    """The signature of creating an instance of the class, if that can only raise (see the module's docstring)."""
    if node.bases or node.keywords or node.decorator_list:
        return None
    body = node.body[1:] if is_docstring(node.body[0]) else node.body
    methods = [statement for statement in body if isinstance(statement, ast.FunctionDef)]
    inits = [method for method in methods if method.name == "__init__"]
    if len(methods) < len(body) or any(method.name == "__new__" for method in methods) or len(inits) != 1 \
            or inits[0].decorator_list or not _only_raises(inits[0]):
        return None
    signature = _signature(inits[0].args)
    parameters = list(signature.parameters.values())
    if not parameters or parameters[0].kind not in (inspect.Parameter.POSITIONAL_ONLY,
                                                    inspect.Parameter.POSITIONAL_OR_KEYWORD):
        return None
    return signature.replace(parameters=parameters[1:])


def _only_raises(node: ast.FunctionDef) -> bool:
    """The body is a docstring at most, then ``raise NotImplementedError`` or ``raise NotImplementedError("...")``."""
    body = node.body[1:] if is_docstring(node.body[0]) else node.body
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].cause is not None:
        return False
    raised = body[0].exc
    if isinstance(raised, ast.Call):
        constant = all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in raised.args)
        if raised.keywords or len(raised.args) > 1 or not constant:
            return False
        raised = raised.func
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def _signature(arguments: ast.arguments) -> inspect.Signature:
    """A signature with the parameters' names and kinds, and placeholder defaults (for binding only)."""
    kind = inspect.Parameter
    positional = ([(a, kind.POSITIONAL_ONLY) for a in arguments.posonlyargs]
                  + [(a, kind.POSITIONAL_OR_KEYWORD) for a in arguments.args])
    first_default = len(positional) - len(arguments.defaults)
    parameters = [kind(a.arg, k, default=None if i >= first_default else kind.empty)
                  for i, (a, k) in enumerate(positional)]
    if arguments.vararg:
        parameters.append(kind(arguments.vararg.arg, kind.VAR_POSITIONAL))
    parameters += [kind(a.arg, kind.KEYWORD_ONLY, default=kind.empty if d is None else None)
                   for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)]
    if arguments.kwarg:
        parameters.append(kind(arguments.kwarg.arg, kind.VAR_KEYWORD))
    return inspect.Signature(parameters)


def stubs_to_json(stubs: dict[str, inspect.Signature]) -> dict[str, list[list]]:
    """Signatures as plain data: ``name -> [[parameter, kind, has a default], ...]``."""
    return {name: [[p.name, int(p.kind), p.default is not inspect.Parameter.empty]
                   for p in signature.parameters.values()] for name, signature in stubs.items()}


def stubs_from_json(data: object) -> dict[str, inspect.Signature]:
    """:func:`stubs_to_json`'s signatures back; anything else raises ValueError."""
    if not isinstance(data, dict):
        raise ValueError("the sure stubs are not a mapping")
    try:
        return {str(name): inspect.Signature([
            inspect.Parameter(str(p), _KINDS[kind], default=None if has_default is True else inspect.Parameter.empty)
            for p, kind, has_default in parameters]) for name, parameters in data.items()}
    except (TypeError, ValueError, KeyError) as error:
        raise ValueError(f"the sure stubs are not signatures ({error})") from None


_KINDS = {int(kind): kind for kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                      inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.KEYWORD_ONLY,
                                      inspect.Parameter.VAR_KEYWORD)}


def staged_stubs(root: Path, module: str) -> dict[str, inspect.Signature]:
    """The sure stubs of ``module`` in the submission staged at ``root`` (none if staging kept none)."""
    path = root / STUBS
    if not path.is_file():
        return {}
    return stubs_from_json(json.loads(path.read_text(encoding="utf-8")).get(module, {}))
