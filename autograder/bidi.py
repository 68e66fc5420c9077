"""Right-to-left text with code in it, for the pages students read (docs/persian.md says why).

Persian prose reads right to left; code, calls, numbers and examples inside it must stay left
to right and intact. In Markdown (:func:`markdown`) each run of prose is a ``<div dir="rtl">``
block and fenced code blocks stay outside it; a code span whose edges the bidirectional
algorithm would move gets a ``<span dir="ltr">``. A failure's text, written at grading time as
plain lines (:func:`failure_markdown`), becomes prose where a line speaks the course's language
(its code runs in code spans) and a code block where it does not; in HTML
(:func:`failure_html`, nbgrader's feedback page) a ``<p>`` whose code is in ``<code dir="ltr">``,
and a ``<pre dir="ltr">``. In HTML of either direction a name or a value is isolated with
``<bdi>`` (:func:`bdi`, :func:`isolated`), and a line of prose with its own direction
(:func:`inline`, the class report). No bidirectional control characters are written anywhere:
a student copies code from these pages.
"""

from __future__ import annotations

import html
import re

RIGHT_TO_LEFT = {"fa"}
_FENCED = re.compile(r"(^[ \t]{0,3}```[^\n]*\n.*?^[ \t]{0,3}```[ \t]*$)", flags=re.M | re.S)
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# a run of right-to-left prose: Arabic-script letters and marks, the non-joiner, and the spaces and
# punctuation between them (a dash too: a hidden property's line is "description — reason"), and
# after them (a closing parenthesis too: a sentence may end inside one)
_PROSE = re.compile(r"[\u0600-\u06FF\u200C\uFB50-\uFDFF\uFE70-\uFEFF]+(?:[\s«»:؛،.!?()—]*"
                    r"[\u0600-\u06FF\u200C\uFB50-\uFDFF\uFE70-\uFEFF]+)*[«»:؛،.!?)]*")


def right_to_left(language: str) -> bool:
    """Whether ``language`` reads right to left."""
    return language in RIGHT_TO_LEFT


def direction(language: str) -> str:
    """The HTML ``dir`` of a text in ``language``."""
    return "rtl" if right_to_left(language) else "ltr"


def has_prose(text: str) -> bool:
    """Whether ``text`` has right-to-left prose in it."""
    return _PROSE.search(text) is not None


def quoted(language: str, name: str) -> str:
    """``name`` quoted in a sentence of ``language``: in guillemets in a right-to-left language
    (its prose runs on through them, so a page keeps the sentence whole), else as Python writes it."""
    return f"«{name}»" if right_to_left(language) else repr(name)


def markdown(language: str, text: str) -> str:
    """Markdown in ``language``: in a right-to-left language each run of prose a ``<div dir="rtl">``
    block, and each code span in it that starts or ends with anything but a Latin letter (or ends
    with a digit) a ``<span dir="ltr">`` (``exercises/`` would show as ``/exercises``). Fenced code
    blocks stay outside, left to right."""
    if not right_to_left(language):
        return text
    parts = _FENCED.split(text)
    shown = []
    for index, part in enumerate(parts):
        if index % 2:  # a fenced code block
            shown.append(part)
        elif part.strip():
            prose = _SPAN.sub(_isolated, part.strip("\n"))
            shown.append(f'<div dir="rtl">\n\n{prose}\n\n</div>')
    return "\n\n".join(shown) + ("\n" if text.endswith("\n") else "")


def _isolated(span: re.Match) -> str:
    """A Markdown code span, kept left to right inside right-to-left prose."""
    if re.fullmatch(r"[A-Za-z](.*[A-Za-z0-9])?", span.group(2)):  # strong at both edges: nothing moves
        return span.group(0)
    return f'<span dir="ltr">{span.group(0)}</span>'


def failure_markdown(text: str, indent: str = "") -> list[str]:
    """The lines of Markdown that show a failure's plain ``text`` in a right-to-left language:
    each line with right-to-left prose in it a paragraph, its code in code spans; each run of
    lines without a ``text`` code block, as written."""
    blocks = [[indent + spans(said[0])] if prose else [f"{indent}```text", *(indent + c for c in said), f"{indent}```"]
              for prose, said in _blocks(text)]
    return [line for block in blocks for line in ["", *block]] + [""]


def failure_html(text: str) -> str:
    """A failure's plain ``text`` as HTML in a right-to-left language: each line with
    right-to-left prose in it a ``<p>``, its code in ``<code dir="ltr">``; each run of lines
    without a ``<pre dir="ltr">``, as written."""
    return "\n".join(f"<p>{_html_line(said[0])}</p>" if prose else _html_block(said) for prose, said in _blocks(text))


def _html_block(lines: list[str]) -> str:
    joined = "\n".join(lines)
    return f'<pre dir="ltr">{html.escape(joined)}</pre>'


def _blocks(text: str) -> list[tuple[bool, list[str]]]:
    """``text`` as blocks: ``(True, [line])`` for a line with right-to-left prose in it
    (stripped), ``(False, lines)`` for a run of lines without (their blank edges dropped)."""
    blocks: list[tuple[bool, list[str]]] = []
    code: list[str] = []
    for line in [*text.splitlines(), None]:
        if line is not None and not has_prose(line):
            code.append(line)
            continue
        code = "\n".join(code).strip("\n").split("\n")
        if any(c.strip() for c in code):
            blocks.append((False, code))
        code = []
        if line is not None and line.strip():
            blocks.append((True, [line.strip()]))
    return blocks


def spans(line: str) -> str:
    """``line`` with each run of text between its right-to-left prose in a Markdown code span."""
    return "".join(piece if prose else _code_span(piece) for prose, piece in _pieces(line))


def _html_line(line: str) -> str:
    """``line`` as HTML, each run of text between its right-to-left prose in ``<code dir="ltr">``."""
    return "".join(html.escape(piece) if prose else _html_code(piece) for prose, piece in _pieces(line))


def _pieces(line: str) -> list[tuple[bool, str]]:
    """``line`` cut into runs of right-to-left prose (``True``) and the text between them."""
    pieces, at = [], 0
    for prose in _PROSE.finditer(line):
        pieces += [(False, line[at:prose.start()]), (True, prose.group(0))]
        at = prose.end()
    return [*pieces, (False, line[at:])]


def _code_span(text: str) -> str:
    """``text`` as a Markdown code span (its spaces around it kept outside), or as it is when blank."""
    lead, core, ending, trail = _edges(text)
    if not core:
        return text
    fence = "`" * (max((len(run) for run in re.findall(r"`+", core)), default=0) + 1)
    padded = f" {core} " if core.startswith("`") or core.endswith("`") else core
    return f"{lead}{fence}{padded}{fence}{ending}{trail}"


def _html_code(text: str) -> str:
    """``text`` as HTML code kept left to right (its spaces around it kept outside), or escaped when blank."""
    lead, core, ending, trail = _edges(text)
    if not core:
        return html.escape(text)
    return f'{lead}<code dir="ltr">{html.escape(core)}</code>{ending}{trail}'


def _edges(text: str) -> tuple[str, str, str, str]:
    """``text`` as its leading spaces, its code, the sentence's punctuation after it (not the
    code's) and its trailing spaces."""
    core = text.strip()
    ending = core[len(core.rstrip(".,:;")):]
    core = core[:len(core) - len(ending)]
    return text[:len(text) - len(text.lstrip())], core, ending, text[len(text.rstrip()):]


def isolated(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` as HTML with each of its ``spans`` (start, end; in order, apart) in ``<bdi>``: the
    values in a sentence of the engine's (a name, a score), which keep their own direction."""
    pieces, at = [], 0
    for start, end in spans:
        pieces += [html.escape(text[at:start]), bdi(text[start:end])]
        at = end
    return "".join(pieces) + html.escape(text[at:])


def inline(text: str) -> str:
    """``text`` as HTML inside text of either direction: where it has right-to-left prose, a
    ``<bdi dir="rtl">`` whose code runs in ``<code dir="ltr">``; else escaped."""
    return f'<bdi dir="rtl">{_html_line(text)}</bdi>' if has_prose(text) else html.escape(text)


def bdi(text: str) -> str:
    """``text`` escaped for HTML and isolated from the direction around it (a name, a piece of code)."""
    return f"<bdi>{html.escape(text)}</bdi>"
