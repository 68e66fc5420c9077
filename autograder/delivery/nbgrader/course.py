"""An nbgrader course made from the course: one assignment, and one notebook, per exercise.

``python -m autograder nbgrader --out DIR`` writes ``DIR/source/<module>/<module>.ipynb`` per
exercise, with the provided files and the self-check (``grader/``) beside it, the grading copy
``DIR/grading/``, and ``DIR/nbgrader_config.py``, which puts
:class:`~autograder.delivery.nbgrader.sandbox_grade.SandboxGrade` in place of nbgrader's
``Execute``, so student code runs only in the sandbox. Everything is in the course's
``language`` (:mod:`autograder.translation`). What a notebook holds: docs/nbgrader.md, "What the
course folder holds".
"""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from ...config import Course, Exercise
from ...errors import GraderError
from ...intake.converting import notebook_module
from ...syntax import binds, is_docstring
from ...translation import engine_words, localize, markdown, module_source, points_text, title
from ..release import build_release
from ..shipping import TEMPLATES, built_in_place, course_text, grading_copy, ship

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CODE_STUB = "# YOUR CODE HERE"


def build_nbgrader_course(course: Course, out: Path) -> None:
    """Write the nbgrader course folder ``out`` (new or empty), built beside it and moved into place."""
    if course.is_release:
        raise GraderError("an nbgrader course needs the solutions, which a student release lacks")
    with built_in_place(out) as partial:
        _write_course(course, partial)


def _write_course(course: Course, out: Path) -> None:
    import nbformat

    build_release(course, out / "release-check")
    check = engine_words(course, (TEMPLATES / "notebook_check.py").read_text(encoding="utf-8"))
    (out / "release-check" / "__init__.py").write_text(check, encoding="utf-8")
    for exercise in course.exercises:
        folder = out / "source" / exercise.module
        notebook = exercise_notebook(course, exercise)
        _check_module(exercise.module, notebook_module(nbformat.writes(notebook)).source)
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{exercise.module}.ipynb")
        ship(course, list(course.provided), folder)
        localize(course, folder)
        shutil.copytree(out / "release-check", folder / "grader")
    shutil.rmtree(out / "release-check")
    grading_copy(course, out / GRADING, "the grading copy that nbgrader_config.py names")
    (out / "nbgrader_config.py").write_text(_config(course), encoding="utf-8")


GRADING = "grading"


# --- the notebook ---------------------------------------------------------------------------------


def exercise_notebook(course: Course, exercise: Exercise):
    """The source notebook of one exercise (reference code inside solution regions)."""
    import nbformat.v4 as v4

    module = exercise.module
    stub = _Source(module_source(course, course.path(course.package) / f"{module}.py", marked=False))
    reference = _flatten(course.solutions_path(), module)
    how_to = _cell_text(course, "nbgrader_howto", package=course.package)
    task = markdown(course, f"# {title(course, exercise)}\n\n{_markdown(stub.docstring)}\n\n{how_to}")
    cells = [v4.new_markdown_cell(task, metadata=_meta(f"{module}_task", locked=True))]
    cells += [v4.new_markdown_cell(markdown(course, f"## `{path}`\n\n{_markdown(doc)}"),
                                   metadata=_meta(f"{module}_{Path(path).stem}_notes", locked=True))
              for path, doc in _provided_docs(course)]
    given = stub.text_of([node for node in stub.body if not _graded(node)])
    if given:
        cells.append(v4.new_code_cell(given, metadata=_meta(f"{module}_given", locked=True)))
    helpers = "\n\n\n".join(reference.extras(stub.names))
    cells.append(v4.new_code_cell(f"{HELPERS_NOTE}\n{BEGIN}\n{helpers}\n{END}",
                                  metadata=_meta(f"{module}_helpers", solution=True)))
    for node in filter(_graded, stub.body):
        if isinstance(node, ast.ClassDef):
            text = _class_cell(stub, node, reference)
        else:
            text = _function_cell(stub, node, reference.find(node.name), reference)
        cells.append(v4.new_code_cell(text, metadata=_meta(f"{module}_{node.name}", solution=True)))
    grade_cell = _cell_text(course, "nbgrader_grade_cell", points=points_text(course, exercise), module=module)
    points = 0 if exercise.bonus else exercise.points  # a bonus is extra credit: save_extra_credit.SaveExtraCredit
    cells.append(v4.new_code_cell(grade_cell,
                                  metadata=_meta(f"{module}_grade", grade=True, locked=True, points=points)))
    notebook = v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


HELPERS_NOTE = "# Helpers of your own for this exercise (imports, constants, functions), if you want any."


def _cell_text(course: Course, key: str, **fields: object) -> str:
    """A course text as a cell's source: filled in, without the file's final newline."""
    return course_text(course, key, **fields).rstrip("\n")


def _meta(grade_id: str, solution: bool = False, grade: bool = False, locked: bool = False,
          points: int | None = None) -> dict:
    fields = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
              "solution": solution, "task": False}
    return {"nbgrader": fields | ({"points": points} if grade else {})}


def _provided_docs(course: Course) -> list[tuple[str, str]]:
    """``(path, docstring)`` of each provided Python module except package ``__init__`` files."""
    docs = []
    for relative in course.provided:
        path = course.path(relative)
        if path.suffix == ".py" and path.name != "__init__.py":
            doc = ast.get_docstring(ast.parse(module_source(course, path, marked=False)))
            if doc:
                docs.append((relative, doc))
    return docs


def _markdown(docstring: str) -> str:
    """A reStructuredText-flavoured docstring as Markdown: underlined titles, ``::`` blocks, ````code````."""
    lines, out, i = docstring.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and re.fullmatch(r"[-=~]{3,}", lines[i + 1].strip()):
            out.append(f"### {line.strip()}")
            i += 2
            continue
        if line.rstrip().endswith("::"):
            out.append(_inline(line.rstrip()[:-1]))
            block, i = [], i + 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                block.append(re.sub(r"\s*# doctest:.*$", "", lines[i]))
                i += 1
            out += ["```python", *_dedent(block), "```"]
            continue
        out.append(_inline(line))
        i += 1
    return "\n".join(out).strip()


def _inline(line: str) -> str:
    return re.sub(r"``(.+?)``", r"`\1`", line)


def _dedent(block: list[str]) -> list[str]:
    while block and not block[0].strip():
        block.pop(0)
    while block and not block[-1].strip():
        block.pop()
    margin = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
    return [b[margin:] for b in block]


# --- sources: the stub and the flattened reference ------------------------------------------------


class _Source:
    """A module's source with its syntax tree, giving the exact text of its statements."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.tree = ast.parse(text)
        self.docstring = ast.get_docstring(self.tree) or ""
        self.body = [node for node in self.tree.body if not is_docstring(node)]
        self.names = {name for node in self.body for name in binds(node)}

    def text(self, node: ast.stmt, start: int | None = None, end: int | None = None) -> str:
        """Lines ``start`` to ``end`` (1-based, inclusive), by default the node's with its decorators."""
        return "\n".join(self.lines[(start or _first_line(node)) - 1:end or node.end_lineno])

    def text_of(self, nodes: list[ast.stmt]) -> str:
        """The text of some top-level statements: each run of neighbours as written, comments
        and blank lines included, runs apart by two blank lines."""
        chosen = {id(node) for node in nodes}
        runs: list[list[ast.stmt]] = []
        for previous, node in zip([None, *self.body], self.body, strict=False):  # each with the one before
            if id(node) in chosen:
                if runs and previous is runs[-1][-1]:
                    runs[-1].append(node)
                else:
                    runs.append([node])
        return "\n\n\n".join(self.text(run[0], end=run[-1].end_lineno) for run in runs)


@dataclass
class _Reference:
    """The reference module with its package-relative imports inlined."""

    source: _Source  # the exercise's reference
    helpers: list[str]  # inlined helper modules' code, in dependency order
    aliases: set[str]  # module names used as ``alias.name``, whose prefix is dropped

    def find(self, name: str, inside: str | None = None) -> ast.FunctionDef | ast.ClassDef:
        """The reference's definition of ``name`` (a method of class ``inside`` when given)."""
        body = self.source.body if inside is None else self.find(inside).body
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return node
        raise GraderError(f"the reference has no {inside + '.' if inside else ''}{name}, which the stub grades")

    def text(self, node: ast.stmt, start: int | None = None, end: int | None = None) -> str:
        return self.strip(self.source.text(node, start, end))

    def strip(self, text: str) -> str:
        """``_bpe.train`` becomes ``train`` once ``_bpe`` is inlined."""
        for alias in self.aliases:
            text = re.sub(rf"(?<![\w.]){re.escape(alias)}\.", "", text)
        return text

    def extras(self, stub_names: set[str]) -> list[str]:
        """Everything of the reference the stub lacks: inlined helpers, imports, private code."""
        own = self.source.text_of([node for node in self.source.body
                                   if not _relative_import(node) and not (binds(node) & stub_names)])
        return [self.strip(text) for text in [*self.helpers, own] if text]


def _flatten(package: Path, module: str) -> _Reference:
    source = _Source((package / f"{module}.py").read_text(encoding="utf-8"))
    helpers: dict[str, str] = {}
    aliases: set[str] = set()
    _inline_imports(package, source, helpers, aliases, [module])
    reference = _Reference(source, list(helpers.values()), aliases)
    _check_names(reference, module)
    return reference


def _inline_imports(package: Path, source: _Source, helpers: dict[str, str], aliases: set[str],
                    chain: list[str]) -> None:
    """Add, dependencies first, the code of every module ``source`` imports relatively."""
    for node in filter(_relative_import, source.body):
        if node.level != 1:
            raise GraderError(f"{chain[-1]}: only imports from its own package can be inlined: {ast.unparse(node)}")
        names = [node.module] if node.module else [a.name for a in node.names]
        if not node.module:
            aliases |= {a.asname or a.name for a in node.names}
        for name in names:
            if name in chain:
                raise GraderError(f"circular import between {' and '.join(chain)}")
            if name not in helpers:
                helper = _Source((package / f"{name}.py").read_text(encoding="utf-8"))
                _inline_imports(package, helper, helpers, aliases, [*chain, name])
                code = helper.text_of([n for n in helper.body if not _relative_import(n)])
                helpers[name] = f"# --- {name} ---\n{code}"


def _check_names(reference: _Reference, module: str) -> None:
    """Inlining must not give two top-level definitions one name, nor leave an alias in use."""
    helpers = [reference.strip(text) for text in reference.helpers]
    owner: dict[str, int] = {}
    for index, body in enumerate([*(ast.parse(text).body for text in helpers), reference.source.body]):
        for node in body:
            for name in set() if isinstance(node, (ast.Import, ast.ImportFrom)) else binds(node):
                if owner.setdefault(name, index) != index:
                    raise GraderError(f"{module}: inlining its helper modules defines {name!r} twice; rename one")
    own = reference.strip(reference.source.text_of([n for n in reference.source.body if not _relative_import(n)]))
    used = {n.id for n in ast.walk(ast.parse("\n\n".join([*helpers, own]))) if isinstance(n, ast.Name)}
    if used & reference.aliases:
        raise GraderError(f"{module}: {', '.join(sorted(used & reference.aliases))} is still used after inlining")


def _check_module(module: str, text: str) -> None:
    """The notebook's module (the reference's, here) must import."""
    try:
        exec(compile(text, f"<notebook {module}>", "exec"), {"__name__": module})
    except Exception as error:  # any failure is the generator's bug, reported as such
        raise GraderError(f"the notebook of {module} does not make a working module: "
                          f"{type(error).__name__}: {error}") from None


# --- answer cells ---------------------------------------------------------------------------------


def _graded(node: ast.AST) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """A stub function whose body raises NotImplementedError, or a class with such a method."""
    if isinstance(node, ast.ClassDef):
        return any(_graded(item) for item in node.body)
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(s, ast.Raise) and s.exc is not None and "NotImplementedError" in ast.unparse(s.exc)
        for s in node.body)


def _function_cell(stub: _Source, node: ast.FunctionDef | ast.AsyncFunctionDef, ref: ast.FunctionDef | ast.ClassDef,
                   reference: _Reference) -> str:
    """The stub's head and docstring, the reference body as the solution, then the stub's raise."""
    if not isinstance(ref, ast.FunctionDef):
        raise GraderError(f"{node.name}: the reference's is a class, the stub's a function")
    if _parameters(node) != _parameters(ref):
        raise GraderError(f"{node.name}: the reference's parameters differ from the stub's")
    head_end = _last_line(node.body[0]) if is_docstring(node.body[0]) else node.body[0].lineno - 1
    ref_start = _last_line(ref.body[0]) + 1 if is_docstring(ref.body[0]) else ref.body[0].lineno
    indent = " " * node.body[0].col_offset
    body = reference.text(ref, ref_start, ref.end_lineno).strip("\n")
    parts = [stub.text(node, end=head_end), indent + BEGIN, body, indent + END]
    if isinstance(ref.body[-1], (ast.Return, ast.Raise)) and head_end < _last_line(node):
        parts.append(stub.text(node, start=head_end + 1))
    return "\n".join(parts)


def _class_cell(stub: _Source, node: ast.ClassDef, reference: _Reference) -> str:
    """The stub's class with each graded method as in :func:`_function_cell`, and the
    reference's other members in a solution region at the end."""
    ref = reference.find(node.name)
    members = [item for item in node.body if not is_docstring(item)]
    head_end = _first_line(members[0]) - 1
    parts = [stub.text(node, end=head_end).rstrip()]
    for item in members:
        if _graded(item):
            if isinstance(item, ast.ClassDef):
                raise GraderError(f"{node.name}.{item.name}: a graded class inside a class is not supported")
            parts.append(_function_cell(stub, item, reference.find(item.name, node.name), reference))
        else:
            parts.append(stub.text(item))
    names = {name for item in members for name in binds(item)}
    extras = [reference.text(item) for item in ref.body if not is_docstring(item) and not (binds(item) & names)]
    if extras:
        indent = " " * members[0].col_offset
        parts.append("\n".join([indent + BEGIN, "\n\n".join(extras), indent + END]))
    return "\n\n".join(parts)


# --- syntax helpers -------------------------------------------------------------------------------


def _first_line(node: ast.stmt) -> int:
    """A statement's first line, its decorators included."""
    return min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])


def _last_line(node: ast.stmt) -> int:
    """A statement's last line (``ast.parse`` always sets it; the type allows None)."""
    if node.end_lineno is None:
        raise GraderError(f"line {node.lineno}: a statement without an end line")
    return node.end_lineno


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Parameter names, without a leading ``self`` (a reference may make a method static)."""
    arguments = node.args
    names = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    return names[1:] if names[:1] == ["self"] else names


def _relative_import(node: ast.AST) -> TypeGuard[ast.ImportFrom]:
    return isinstance(node, ast.ImportFrom) and node.level > 0


# --- nbgrader_config.py ---------------------------------------------------------------------------


def _config(course: Course) -> str:
    course_id = re.sub(r"[^a-z0-9]+", "-", course.title.lower()).strip("-")[:60] or "course"
    return CONFIG.format(title=course.title, grading=repr(GRADING), course_id=repr(course_id), stub=repr(CODE_STUB))


CONFIG = '''"""nbgrader settings of "{title}", written by `python -m autograder nbgrader`.

Run nbgrader from this folder with the Python that has the course's packages installed (the
course's virtual environment: `/path/to/course/.venv/bin/python -m nbgrader autograde ...`, or
activate it first); another Python stops with ModuleNotFoundError. Notebooks are graded by the
course's engine, in its sandbox: SandboxGrade takes the place of nbgrader's Execute step, so
nbgrader never runs a student's notebook. The engine and the course (suites and hidden
solutions) are the grading copy in {grading}/ beside this file, found from here, so the folder
may move; keep it private.
"""

import atexit
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GRADING = os.path.join(HERE, {grading})
sys.path.insert(0, GRADING)
# The code the engine compiles goes to the grader's cache, never into the grading copy.
sys.dont_write_bytecode = True
from autograder.isolation import keep_compiled_code  # noqa: E402 - found in GRADING

keep_compiled_code()
# nbgrader runs `alembic` by name when it makes the gradebook: find it beside this Python.
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])

c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file
c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = {course_id}

# The student's version of an answer cell keeps the stub's signature, docstring and raise.
c.ClearSolutions.code_stub = {{"python": {stub}}}

# A copied answer cell: SeparateCopies, in place of DeduplicateIds, keeps the autograde going
# (nbgrader#1083); both copies are graded, in order, and the student's feedback says so.
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "autograder.delivery.nbgrader.separate_copies.SeparateCopies",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "autograder.delivery.nbgrader.sandbox_grade.SandboxGrade",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "autograder.delivery.nbgrader.save_extra_credit.SaveExtraCredit",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.SandboxGrade.course = os.path.join(GRADING, "course.yaml")

# Student Markdown and HTML outputs lose raw HTML and scripts before any page shows them
# (feedback, formgrader); the grade cell's feedback is wrapped to the page.
c.HTMLExporter.preprocessors = ["autograder.delivery.nbgrader.sanitize_html.SanitizeHTML",
                                "autograder.delivery.nbgrader.feedback_page.FeedbackPage"]
c.HTMLExporter.sanitize_html = True
# The page's own cleaning keeps `dir`, so that right-to-left text keeps its direction, and the
# grade cell's feedback speaks the course's language.
c.HTMLExporter.filters = {{"clean_html": "autograder.delivery.nbgrader.sanitize_html.clean"}}
c.FeedbackPage.course = c.SandboxGrade.course

# nbgrader logs a line per file it copies: hundreds per notebook (the grader/ folder beside it).
c.Application.logging_config = {{
    "filters": {{"copies": {{"()": "autograder.delivery.nbgrader.quiet_copies.QuietCopies"}}}},
    "handlers": {{"console": {{"filters": ["copies"]}}}},
}}

# Kernels (nbgrader validate, the students' Validate button) without TCP on loopback, which
# may be down on an offline machine: ipc sockets in a private temporary folder, removed when
# the process ends (every nbgrader command reads this file; the folders would pile up).
KERNELS = tempfile.mkdtemp(prefix="nbgrader-kernel-")
atexit.register(shutil.rmtree, KERNELS, True)
c.KernelManager.transport = "ipc"
c.KernelManager.ip = os.path.join(KERNELS, "kernel")
'''
