"""The course in a language other than English: what a channel ships in place of the English
text when the course's ``language`` is another (``--lang`` on the command line).

``delivery.translations`` names a folder with one folder per language, holding ``titles.yaml``
and a ``<module>.yaml`` of each module's docstrings. The English modules stay the source of the
code: a translated module is the English one with its docstrings replaced (:func:`translate`),
and the channel stops, one line per problem, where anything else would change or a text does not
quote what the English quotes (:func:`quoted`). docs/persian.md, "Where the Persian texts
live", gives the files' layout; :func:`markdown` keeps right-to-left Markdown's code intact."""

from __future__ import annotations

import ast
import doctest
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import bidi
from .config import Course, Exercise
from .errors import GraderError
from .i18n import _, in_course_language
from .syntax import is_docstring

MODULE = "__module__"  # the key of a module's own docstring
ADDITIONS = "__additions__"  # the key of what the texts quote beyond the English


# --- what a channel asks ------------------------------------------------------------------------


def module_source(course: Course, path: Path, marked: bool = True) -> str:
    """The text of ``path`` as the course's students read it: a module of the package with its
    docstrings in the course's language, any other file as it is. A right-to-left language's
    docstrings are ``marked`` for plain text (:func:`autograder.bidi.docstring`), unless they go
    where an editor lays every line out left to right and shows the marks as dots (a notebook's
    code cell in JupyterLab)."""
    text = path.read_text(encoding="utf-8")
    found = _translated(course, path)
    if course.language == "en" or found is None:
        return text
    where, texts = found
    texts_file = _folder(course) / texts.with_suffix(".yaml")
    if not texts_file.is_file():
        raise GraderError(f"{_shown(course, texts_file)}: no such file (the {course.language} docstrings of {where})")
    return translate(text, _load(course, texts_file), where, _shown(course, texts_file),
                     marked and bidi.right_to_left(course.language))


def _translated(course: Course, path: Path) -> tuple[str, Path] | None:
    """If ``path`` is a module with texts in other languages (one of the package's, or a support
    module), the path the course names it by and where its texts are in a language's folder (a
    package module's by its path in the package, a support module's by its path in the course)."""
    resolved, package = path.resolve(), course.path(course.package)
    if path.suffix != ".py":
        return None
    if package in resolved.parents:
        relative = resolved.relative_to(package)
        return f"{course.package}/{relative.as_posix()}", relative
    return next(((module, Path(module)) for module in course.sandbox.support_modules
                 if course.path(module) == resolved), None)


def shipped_source(course: Course, path: Path) -> str:
    """``path`` (a package or support module) as the course's students have it: translated where
    the course holds its texts, else as it is (a channel's copy is in its language already)."""
    if course.delivery.translations is None:
        return path.read_text(encoding="utf-8")
    return module_source(course, path, marked=False)


def localize(course: Course, out: Path) -> None:
    """Put the course's language into the package and support modules a channel copied to ``out``
    (paths as in the course): each is rewritten with its translated docstrings."""
    if course.language == "en":
        return
    package = course.path(course.package)
    modules = [(path, out / course.package / path.relative_to(package)) for path in sorted(package.rglob("*.py"))]
    modules += [(course.path(module), out / module) for module in course.sandbox.support_modules]
    for path, target in modules:
        if target.is_file():
            target.write_text(module_source(course, path), encoding="utf-8")


def titled(course: Course, raw: dict) -> dict:
    """The course file's keys ``raw`` with the course's and each exercise's title in the course's language."""
    if course.language == "en":
        return raw
    exercises = [{**item, "title": title(course, course.exercise(item["module"]))} for item in raw["exercises"]]
    return {**raw, "title": title(course), "exercises": exercises}


def in_language(course: Course, language: str | None) -> Course:
    """``course`` in ``language`` (None: as its file says), with its titles in it too, as grading
    shows it to students."""
    return in_its_language(course.model_copy(update={"language": language}) if language else course)


def in_its_language(course: Course) -> Course:
    """``course`` with its title and its exercises' titles in its language, read from its texts as
    a channel reads them (a course file a channel shipped has them in it already, and no texts)."""
    if course.language == "en" or course.delivery.translations is None:
        return course
    exercises = [e.model_copy(update={"title": title(course, e)}) for e in course.exercises]
    return course.model_copy(update={"title": title(course), "exercises": exercises})


def title(course: Course, exercise: Exercise | None = None) -> str:
    """The course's title, or ``exercise``'s, in the course's language."""
    if course.language == "en":
        return exercise.title if exercise else course.title
    path = _folder(course) / "titles.yaml"
    titles = _load(course, path)
    exercises = titles.get("exercises")
    if not isinstance(exercises, dict):
        raise GraderError(f"{_shown(course, path)}: exercises: a mapping of each exercise module to its title")
    found = titles.get("title") if exercise is None else exercises.get(exercise.module)
    if not isinstance(found, str) or not found.strip():
        key = "title" if exercise is None else f"exercises.{exercise.module}"
        raise GraderError(f"{_shown(course, path)}: {key}: no title")
    return found


@in_course_language
def points_text(course: Course, exercise: Exercise) -> str:
    """``exercise``'s points as the course's language writes them: ``20``, or ``10 bonus`` (for a
    page or a template, so without the controls of plain text)."""
    return bidi.visible(exercise.points_text)


@in_course_language
def engine_words(course: Course, source: str) -> str:
    """A Python file the engine ships to run outside it (the check cell's module), each text it
    marks ``N_("...")`` written in the course's language: there is no catalog where it runs."""
    tree = ast.parse(source)
    data, starts = source.encode("utf-8"), _line_starts(source.encode("utf-8"))
    marked = [(node.args[0], node.args[0].value) for node in ast.walk(tree) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Name) and node.func.id == "N_" and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)]
    for text, english in sorted(marked, key=lambda found: _span(starts, found[0]), reverse=True):  # offsets stay
        if _(english) != english:
            start, end = _span(starts, text)
            data = data[:start] + repr(_(english)).encode("utf-8") + data[end:]
    return data.decode("utf-8")


def markdown(course: Course, text: str) -> str:
    """Markdown for the course's readers (:func:`autograder.bidi.markdown`)."""
    return bidi.markdown(course.language, text)


# --- translating a module -----------------------------------------------------------------------


@dataclass(frozen=True)
class Docstring:
    """Where a docstring is, and what it documents."""

    node: ast.Expr  # the docstring's statement
    parameters: tuple[str, ...]  # of the function it documents (none for a module or a class)


def translate(source: str, texts: dict, where: str = "the module", file: str = "the translation",
              right_to_left: bool = False) -> str:
    """``source`` with each docstring replaced by its text in ``texts`` (keys as in the module's
    docstring), marked for plain text if it reads ``right_to_left`` (:func:`autograder.bidi.docstring`);
    a :class:`GraderError` names every docstring without a text, every text without a
    docstring, every text that quotes other code than the English (with its ``__additions__``),
    and a result whose code differs."""
    found = documented(ast.parse(source))
    texts = dict(texts)
    additions = texts.pop(ADDITIONS, None) or {}
    if not isinstance(additions, dict):
        raise GraderError(f"{file}: {ADDITIONS}: a mapping of docstrings to what their texts add")
    problems = [f"no text for {key}, a docstring of {where}" for key in found if key not in texts]
    problems += [f"{key}: {where} has no such docstring" for key in [*texts, *additions] if key not in found]
    problems += [f"{key}: {problem}" for key, doc in found.items() if key in texts
                 for problem in drift(f"{written(source, doc.node)}\n\n{additions.get(key, '')}", texts[key],
                                      doc.parameters)]
    if problems:
        raise GraderError(f"{file}: " + "; ".join(problems))
    data = source.encode("utf-8")
    starts = _line_starts(data)
    for key, doc in sorted(found.items(), key=lambda item: item[1].node.lineno, reverse=True):
        begin, end = _span(starts, doc.node.value)
        text = bidi.docstring(texts[key]) if right_to_left else texts[key]
        literal = _literal(data[begin:end].decode("utf-8"), text, doc.node.col_offset)
        data = data[:begin] + literal.encode("utf-8") + data[end:]
    result = data.decode("utf-8")
    try:
        same = _code(result) == _code(source)
    except SyntaxError:
        same = False
    if not same:
        raise GraderError(f"{file}: a text changes the code of {where} (a quote or backslash ending its docstring?)")
    return result


def docstrings(source: str) -> dict[str, str]:
    """Each docstring of ``source`` as written (escapes included), without its lines' indentation,
    keyed as a translation keys it."""
    return {key: written(source, doc.node) for key, doc in documented(ast.parse(source)).items()}


def written(source: str, node: ast.Expr) -> str:
    """The docstring of statement ``node`` as the source writes it, without its quotes and the
    indentation of its lines."""
    starts = _line_starts(data := source.encode("utf-8"))
    begin, end = _span(starts, node.value)
    literal = data[begin:end].decode("utf-8")
    prefix, quote = _quotes(literal)
    indent = " " * node.col_offset
    lines = literal[len(prefix) + len(quote):-len(quote)].split("\n")
    lines[1:] = [line.removeprefix(indent) for line in lines[1:]]
    return "\n".join(lines).rstrip()


def documented(tree: ast.Module) -> dict[str, Docstring]:
    """Each docstring of the module ``tree``, keyed as a translation keys it."""
    found = {}
    if tree.body and is_docstring(tree.body[0]):
        found[MODULE] = Docstring(tree.body[0], ())

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{node.name}"
                if node.body and is_docstring(node.body[0]):
                    found[name] = Docstring(node.body[0], () if isinstance(node, ast.ClassDef) else _parameters(node))
                visit(node.body, f"{name}.")

    visit(tree.body, "")
    return found


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    arguments = node.args
    every = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]
    return tuple(a.arg for a in every if a is not None and a.arg != "self")


def _line_starts(data: bytes) -> list[int]:
    """The byte offset of each line's start (``ast`` counts columns in UTF-8 bytes)."""
    return [0, *(m.end() for m in re.finditer(rb"\n", data))]


def _span(starts: list[int], node: ast.expr) -> tuple[int, int]:
    if node.end_lineno is None or node.end_col_offset is None:
        raise GraderError(f"line {node.lineno}: a docstring without an end")
    return starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset


def _quotes(literal: str) -> tuple[str, str]:
    """A string literal's prefix (``r``) and quotes."""
    match = re.match(r"([A-Za-z]*)(\"\"\"|'''|\"|')", literal)
    if match is None:
        raise GraderError(f"not a string literal: {literal[:40]!r}")
    return match.group(1), match.group(2)


def _literal(original: str, text: str, column: int) -> str:
    """The docstring literal of ``text`` in place of ``original``: the same prefix and quotes
    (tripled), its lines indented as the statement, the closing quotes on a line of their own
    when it has more than one."""
    prefix, quote = _quotes(original)
    quote = quote[0] * 3
    indent = " " * column
    lines = text.strip("\n").rstrip().split("\n")
    body = "\n".join([lines[0], *(indent + line if line.strip() else "" for line in lines[1:])])
    return f"{prefix}{quote}{body}{chr(10) + indent if len(lines) > 1 else ''}{quote}"


def _code(source: str) -> str:
    """The module's syntax tree with every docstring emptied: what a translation must not change."""
    tree = ast.parse(source)
    for doc in documented(tree).values():
        doc.node.value = ast.Constant("")
    return ast.dump(tree)


# --- what a docstring quotes ----------------------------------------------------------------------


def quoted(text: str, parameters: Sequence[str] = ()) -> dict[str, list[str]]:
    """What a docstring quotes, which its translation must quote alike: the lines of its literal
    blocks (``::``) and doctest examples, in order; its code spans (in double backticks), the
    parameters of ``parameters`` they name, the exception types it names and the numbers of its
    prose, each sorted."""
    blocks, prose = _literal_blocks(text)
    parts = doctest.DocTestParser().parse(prose)
    examples = [line for part in parts if isinstance(part, doctest.Example)
                for line in [f">>> {part.source.rstrip()}", *part.want.rstrip().splitlines()]]
    prose = "".join(part for part in parts if isinstance(part, str))
    spans = [" ".join(span.split()) for span in re.findall(r"``(.+?)``", prose, flags=re.S)]
    words = {w for line in [*spans, *blocks, *examples] for w in re.findall(r"[A-Za-z_]\w*", line)}
    outside = re.sub(r"``.+?``", " ", prose, flags=re.S)
    return {
        "examples": blocks + examples,
        "code spans": sorted(spans),
        "parameters": sorted(words & set(parameters)),
        "exception types": sorted(set(re.findall(r"\b[A-Z]\w*(?:Error|Exception)\b", text))),
        "numbers": sorted(re.findall(r"(?<![\w.])\d+(?:\.\d+)*(?!\w)", outside)),
    }


def drift(english: str, translation: str, parameters: Sequence[str] = ()) -> list[str]:
    """How ``translation`` quotes otherwise than ``english`` (:func:`quoted`), and digits it
    writes other than 0-9; empty when it quotes alike."""
    if not isinstance(translation, str) or not translation.strip():
        return ["not a text, or an empty one"]
    digits = Counter(re.findall(r"[^\D0-9]", translation)) - Counter(re.findall(r"[^\D0-9]", english))
    problems = [f"digits other than 0-9 ({''.join(digits.elements())}): write 0-9, as the code does"] if digits else []
    ours, theirs = quoted(english, parameters), quoted(translation, parameters)
    for kind, expected in ours.items():
        found = theirs[kind]
        if found == expected:
            continue
        missing, extra = Counter(expected) - Counter(found), Counter(found) - Counter(expected)
        if not missing and not extra:
            problems.append(f"{kind} in another order than the English")
            continue
        said = [f"lacks {_list(missing)}" if missing else "", f"adds {_list(extra)}" if extra else ""]
        problems.append(f"{kind}: the translation " + " and ".join(s for s in said if s))
    return problems


def _list(items: Counter) -> str:
    return ", ".join(repr(item) for item in items.elements())


def _literal_blocks(text: str) -> tuple[list[str], str]:
    """The lines of the literal blocks (after a line ending in ``::``), each without the block's
    indentation, and the text without them."""
    lines, blocks, rest, index = text.split("\n"), [], [], 0
    while index < len(lines):
        line = lines[index]
        rest.append(line)
        index += 1
        if not line.rstrip().endswith("::"):
            continue
        block = []
        while index < len(lines) and (not lines[index].strip() or lines[index][:1].isspace()):
            block.append(lines[index])
            index += 1
        margin = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
        blocks += [b[margin:].rstrip() for b in block if b.strip()]
    return blocks, "\n".join(rest)


# --- the course's translation files ---------------------------------------------------------------


def _folder(course: Course) -> Path:
    if course.delivery.translations is None:
        raise GraderError(f"{course.file.name} has no texts in {course.language!r}: name the folder that holds "
                          f"them under delivery.translations ({course.language}/ in it)")
    folder = course.path(course.delivery.translations) / course.language
    if not folder.is_dir():
        raise GraderError(f"{course.file.name}: delivery.translations has no {course.language}/ folder "
                          f"(the course's texts in {course.language!r})")
    return folder


def _load(course: Course, path: Path) -> dict:
    """A translation file: a mapping of keys to texts."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GraderError(f"{_shown(course, path)}: no such file") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise GraderError(f"{_shown(course, path)}: cannot be read ({' '.join(str(error).split())})") from None
    if not isinstance(raw, dict) or not all(isinstance(key, str) for key in raw):
        raise GraderError(f"{_shown(course, path)}: not a mapping of names to texts")
    return raw


def _shown(course: Course, path: Path) -> str:
    try:
        return path.relative_to(course.root).as_posix()
    except ValueError:
        return str(path)

