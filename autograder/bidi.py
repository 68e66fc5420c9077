"""Right-to-left text with code in it, for the pages students read (docs/persian.md says why).

Persian prose reads right to left; code, calls, numbers and examples inside it must stay left
to right and intact. In Markdown (:func:`markdown`) each run of prose is a ``<div dir="rtl">``
block and fenced code blocks stay outside it; a code span whose edges the bidirectional
algorithm would move gets a ``<span dir="ltr">``. A failure's text, written at grading time as
plain lines (:func:`failure_markdown`), becomes prose where a line speaks the course's language
(its code runs in code spans) and a code block where it does not. In HTML (:func:`bdi`) code and
names inside right-to-left text are isolated with ``<bdi>``. No bidirectional control
characters are written anywhere: a student copies code from these pages.
"""

from __future__ import annotations

import html
import re

RIGHT_TO_LEFT = {"fa"}
_FENCED = re.compile(r"(^[ \t]{0,3}```[^\n]*\n.*?^[ \t]{0,3}```[ \t]*$)", flags=re.M | re.S)
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# a run of right-to-left prose: Arabic-script letters and marks, the non-joiner, and the spaces and
# punctuation between them
_PROSE = re.compile(r"[\u0600-\u06FF\u200C\uFB50-\uFDFF\uFE70-\uFEFF]+(?:[\s«»:؛،.!?()]*"
                    r"[\u0600-\u06FF\u200C\uFB50-\uFDFF\uFE70-\uFEFF]+)*[«»:؛،.!?]*")


def right_to_left(language: str) -> bool:
    """Whether ``language`` reads right to left."""
    return language in RIGHT_TO_LEFT


def direction(language: str) -> str:
    """The HTML ``dir`` of a text in ``language``."""
    return "rtl" if right_to_left(language) else "ltr"


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
    each run of lines with right-to-left prose in it as paragraphs, its code in code spans; each
    run of lines without as a ``text`` code block, as written."""
    blocks: list[list[str]] = []
    code: list[str] = []
    for line in [*text.splitlines(), None]:
        if line is not None and not _PROSE.search(line):
            code.append(line)
            continue
        code = "\n".join(code).strip("\n").split("\n")
        if any(c.strip() for c in code):
            blocks.append([f"{indent}```text", *(indent + c for c in code), f"{indent}```"])
        code = []
        if line is not None and line.strip():
            blocks.append([indent + spans(line.strip())])
    return [line for block in blocks for line in ["", *block]] + [""]


def spans(line: str) -> str:
    """``line`` with each run of text between its right-to-left prose in a Markdown code span."""
    pieces, at = [], 0
    for prose in _PROSE.finditer(line):
        pieces += [_code_span(line[at:prose.start()]), prose.group(0)]
        at = prose.end()
    pieces.append(_code_span(line[at:]))
    return "".join(pieces)


def _code_span(text: str) -> str:
    """``text`` as a Markdown code span (its spaces around it kept outside), or as it is when blank."""
    core = text.strip()
    ending = core[len(core.rstrip(".,:;")):]  # a sentence's punctuation, not the code's
    core = core[:len(core) - len(ending)]
    if not core:
        return text
    fence = "`" * (max((len(run) for run in re.findall(r"`+", core)), default=0) + 1)
    padded = f" {core} " if core.startswith("`") or core.endswith("`") else core
    lead, trail = text[:len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    return f"{lead}{fence}{padded}{fence}{ending}{trail}"


def bdi(text: str) -> str:
    """``text`` escaped for HTML and isolated from the direction around it (a name, a piece of code)."""
    return f"<bdi>{html.escape(text)}</bdi>"
