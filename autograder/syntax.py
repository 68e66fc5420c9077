"""What the engine reads from Python source's syntax tree (:mod:`ast`): whether a statement is a
docstring, and which names a statement or a node binds."""

from __future__ import annotations

import ast
from typing import TypeGuard


def is_docstring(node: ast.AST) -> TypeGuard[ast.Expr]:
    """Whether ``node`` is a string on its own line (a module's, class's or function's docstring
    where it comes first)."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def binds(statement: ast.AST) -> set[str]:
    """The module-level names a statement binds: functions, classes, assignments (every name in
    their targets, ``table[key] = value``'s ``table`` too: it changes what that name holds) and
    imports (``from __future__`` binds none: it changes how the module compiles).

    >>> sorted(binds(ast.parse("a, b[i] = f(x)").body[0]))
    ['a', 'b', 'i']
    """
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
        return set()
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {imported_as(alias) for alias in statement.names}
    return set()


def imported_as(alias: ast.alias) -> str:
    """The name an import's ``alias`` binds: ``import a.b`` binds ``a``, ``import a.b as c`` ``c``."""
    return alias.asname or alias.name.split(".")[0]


def bound_by(node: ast.AST) -> list[str]:
    """The names ``node`` itself binds, wherever it is, nested nodes aside: walk a tree with it to
    find every binding, local ones included (a definition's name, a stored or deleted name, an
    import's, ``global``/``nonlocal``, an ``except ... as`` name and a ``match`` capture).

    >>> [name for node in ast.walk(ast.parse("def f(): global g; g = 1")) for name in bound_by(node)]
    ['f', 'g', 'g']
    """
    match node:
        case ast.FunctionDef() | ast.AsyncFunctionDef() | ast.ClassDef():
            names = [node.name]
        case ast.Name(ctx=ast.Store() | ast.Del()):
            names = [node.id]
        case ast.Import() | ast.ImportFrom():
            names = [imported_as(alias) for alias in node.names]
        case ast.Global() | ast.Nonlocal():
            names = list(node.names)
        case ast.ExceptHandler(name=str(name)) | ast.MatchAs(name=str(name)) | ast.MatchStar(name=str(name)) \
                | ast.MatchMapping(rest=str(name)) if name:
            names = [name]
        case _:
            names = []
    return names
