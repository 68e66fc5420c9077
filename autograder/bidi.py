"""Right-to-left text with code in it, for the pages students read.

In Markdown and HTML the markup keeps the direction (:func:`markdown`, :func:`failure_markdown`,
:func:`failure_html`, :func:`bdi`, :func:`inline`), and no bidirectional control is written
where a student copies code. In plain text the controls do it, outside the code: each value of
an engine message is isolated by its catalog, each physical line of the self-check's table once
rich has wrapped it (:func:`balanced`), and a docstring's code spans get marks a linter accepts
(:func:`docstring`). docs/persian.md, "Right to left", says why each page does what it does."""

from __future__ import annotations

import html
import re
import unicodedata

RIGHT_TO_LEFT = {"fa"}
LRI, FSI, PDI = "\u2066", "\u2068", "\u2069"  # isolates: a value laid out by itself in plain text
LRM, ALM = "\u200e", "\u061c"  # marks: a strong left-to-right letter, and a strong Arabic one, unseen
CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # every bidirectional control
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


_COMMENT = re.compile(r"  # .*$")  # a Python comment at the end of a line of code


def has_prose(text: str) -> bool:
    """Whether ``text`` has right-to-left prose in it."""
    return _PROSE.search(text) is not None


def quoted(language: str, name: str) -> str:
    """``name`` quoted in a sentence of ``language``: in guillemets in a right-to-left language
    (its prose runs on through them, so a page keeps the sentence whole), else as Python writes it."""
    return f"«{name}»" if right_to_left(language) else repr(name)


def markdown(language: str, text: str) -> str:
    """Markdown in ``language``: in a right-to-left language each run of prose a ``<div dir="rtl">``
    block, and each code span in it a ``<span dir="ltr">`` (``exercises/`` would show as
    ``/exercises``, and ``1 / (3 * 1)`` as ``(1 * 3) / 1``), without the controls of plain text.
    Fenced code blocks stay outside, left to right."""
    if not right_to_left(language):
        return text
    parts = _FENCED.split(text)
    shown = []
    for index, part in enumerate(parts):
        if index % 2:  # a fenced code block
            shown.append(part)
        elif part.strip():
            prose = _SPAN.sub(_isolated, visible(part).strip("\n"))
            shown.append(f'<div dir="rtl">\n\n{prose}\n\n</div>')
    return "\n\n".join(shown) + ("\n" if text.endswith("\n") else "")


def _isolated(span: re.Match) -> str:
    """A Markdown code span, kept left to right and whole inside right-to-left prose."""
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
        if line is not None and not has_prose(_COMMENT.sub("", line)):  # a line of code, its comment Persian or not
            code.append(line)
            continue
        code = visible("\n".join(code)).strip("\n").split("\n")
        if any(c.strip() for c in code):
            blocks.append((False, code))
        code = []
        if line is not None and line.strip():
            blocks.append((True, [line.strip()]))
    return blocks


def spans(line: str) -> str:
    """``line`` with each run of code between its right-to-left prose in a Markdown code span."""
    return "".join(piece if prose else _code_span(piece) for prose, piece in _pieces(line))


def _html_line(line: str) -> str:
    """``line`` as HTML, each run of code between its right-to-left prose in ``<code dir="ltr">``."""
    return "".join(html.escape(piece) if prose else _html_code(piece) for prose, piece in _pieces(line))


def _pieces(line: str) -> list[tuple[bool, str]]:
    """``line`` cut into runs of right-to-left prose (``True``) and the code between them (no
    controls left): what an LRI isolates is code, what an FSI isolates is cut in turn, and the
    rest is cut by its letters."""
    pieces: list[tuple[bool, str]] = []
    for kind, text in _segments(line):
        pieces += [(False, visible(text))] if kind == LRI else _pieces(text) if kind == FSI else _by_letters(text)
    merged: list[tuple[bool, str]] = []
    for prose, text in pieces:
        if merged and merged[-1][0] == prose:
            merged[-1] = (prose, merged[-1][1] + text)
        elif text:
            merged.append((prose, text))
    return merged or [(False, "")]


def _by_letters(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into runs of right-to-left prose and what is between them; punctuation alone
    between them (no letter or digit) stays with the prose."""
    pieces, at = [], 0
    for prose in _PROSE.finditer(text):
        pieces += [(False, text[at:prose.start()]), (True, prose.group(0))]
        at = prose.end()
    pieces.append((False, text[at:]))
    return [(prose or not re.search(r"[^\W_]", piece, flags=re.A), visible(piece)) for prose, piece in pieces]


def _segments(line: str) -> list[tuple[str, str]]:
    """``line`` as its runs outside isolates (kind ``""``) and the runs its outermost isolates hold
    (kind: the isolate's first character; an isolate a cut left open runs to the end)."""
    found, depth, start, kind = [], 0, 0, ""
    for at, char in enumerate(line):
        if char in (LRI, FSI, "\u2067"):
            if not depth:
                found.append(("", line[start:at]))
                start, kind = at + 1, char
            depth += 1
        elif char == PDI and depth:
            depth -= 1
            if not depth:
                found.append((kind, line[start:at]))
                start = at + 1
    found.append((kind if depth else "", line[start:]))
    return [(kind, text) for kind, text in found if text]


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
        pieces += [html.escape(visible(text[at:start])), bdi(text[start:end])]
        at = end
    return "".join(pieces) + html.escape(visible(text[at:]))


def inline(text: str) -> str:
    """``text`` as HTML inside text of either direction: where it has right-to-left prose, a
    ``<bdi dir="rtl">`` whose code runs in ``<code dir="ltr">``; else escaped."""
    return f'<bdi dir="rtl">{_html_line(text)}</bdi>' if has_prose(text) else html.escape(text)


def bdi(text: str) -> str:
    """``text`` escaped for HTML and isolated from the direction around it (a name, a piece of code)."""
    return f"<bdi>{html.escape(visible(text))}</bdi>"


def visible(text: str) -> str:
    """``text`` without bidirectional controls: for a page whose markup keeps the direction."""
    return CONTROLS.sub("", text)


def cell(language: str, text: str) -> str:
    """A table cell's ``text`` isolated in plain text of a right-to-left ``language`` (FSI ... PDI),
    so that the bidirectional algorithm keeps it in its column."""
    return f"{FSI}{text}{PDI}" if right_to_left(language) and text else text


def balanced(text: str, depth: int = 0) -> tuple[str, int]:
    """``text``, a piece of a line that a wrap may have cut out of a longer one, without the PDIs
    that close an isolate opened before it (``depth`` of them are open at its start, opened in
    the same piece of the line); and how many are open at its end, for the caller to close."""
    kept = []
    for char in text:
        if char in (LRI, FSI, "\u2067"):
            depth += 1
        elif char == PDI:
            if not depth:
                continue
            depth -= 1
        kept.append(char)
    return "".join(kept), depth


def code(language: str, text: str) -> str:
    """Code (a name, a call) isolated left to right in plain text of a right-to-left ``language``."""
    return f"{LRI}{text}{PDI}" if right_to_left(language) and text else text


_DOCTEST = re.compile(r"\s*(>>>|\.\.\.)( |$)")
_ITEM = re.compile(r"\s*(?:[-*]\s+|\d+\.\s+)?")  # a line's indentation and list marker


def docstring(text: str) -> str:
    """A docstring's right-to-left ``text`` as plain text shows it whole: in each line of prose
    (not a doctest, not a ``::`` block), an LRM on each side of each code span, and an ALM first
    (after a list's marker) where the line's first strong letter would otherwise be Latin, which
    would lay the whole line out left to right."""
    shown: list[str] = []
    in_span, block = False, None  # block: "doctest", or the indentation of a line ending in ``::``
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip())
        if block == "doctest" or (isinstance(block, int) and (not line.strip() or indent > block)):
            block = None if block == "doctest" and not line.strip() else block
            shown.append(line)
            continue
        block = "doctest" if _DOCTEST.match(line) else (indent if line.rstrip().endswith("::") else None)
        if block == "doctest" or not has_prose(line):
            in_span = in_span != (block != "doctest" and line.count("``") % 2 == 1)
            shown.append(line)
            continue
        line, in_span = _marked_spans(line, in_span)
        shown.append(_right_to_left_first(line))
    return "\n".join(shown)


def _marked_spans(line: str, in_span: bool) -> tuple[str, bool]:
    """``line`` with an LRM before each code span's opening and after its closing, and on each
    side of each formula or signed number of its prose (:func:`_marked_values`); whether a span
    is still open at its end (``in_span``: one was at its start)."""
    parts = line.split("``")
    marked = parts[0] if in_span else _marked_values(parts[0])
    for part in parts[1:]:
        marked += f"``{LRM}{_marked_values(part)}" if in_span else f"{LRM}``{part}"
        in_span = not in_span
    return _LISTED.sub(f"\\g<0>{ALM}", marked), in_span


# the end of a code span or a value that only punctuation sets apart from the next one: an ALM
# after it, or the two and the comma between them would be one left-to-right run, read last first
_LISTED = re.compile(f"(?:``|[\\d)]){LRM}(?=[\\s،؛:(]*{LRM}(?:``|-\\d))")


# a formula of numbers (``1 / (3 * 1)``, ``(5 + 3) / 27``), or a signed number (``-4``), in prose
_VALUE = re.compile(r"(?<![\w.\-])(?:\(?\d[\d.]*(?:\s*[-+*/]\s*\(?\d[\d.]*\)?)+|-\d[\d.]*)(?![\w.])")


def _marked_values(prose: str) -> str:
    """``prose`` (outside code spans) with an LRM on each side of each formula and signed number:
    after Persian text the minus of ``-4`` would be shown right of its digits, and ``1 / (3 * 1)``
    as ``(1 * 3) / 1`` in a paragraph laid out right to left."""
    return _VALUE.sub(lambda value: f"{LRM}{value.group(0)}{LRM}", prose)


def _right_to_left_first(line: str) -> str:
    """``line`` with an ALM after its indentation and list marker if its first strong letter is
    left to right."""
    first = next((kind for kind in map(unicodedata.bidirectional, line) if kind in ("L", "R", "AL")), None)
    if first != "L":
        return line
    start = _ITEM.match(line).end()  # type: ignore[union-attr]
    return f"{line[:start]}{ALM}{line[start:]}"
