"""The grade cell as a page (feedback, formgrader) shows it: wrapped, and right to left where the course is."""

from __future__ import annotations

import itertools
import textwrap

from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_output
from nbgrader import utils
from traitlets import Unicode

from ... import bidi
from ...config import load_course
from .feedback import INDENT, LINES, read_line


class FeedbackPage(Preprocessor):
    """The grade cell as a page shows it (feedback, formgrader): the engine's feedback with every
    line longer than :data:`PAGE_COLUMNS` wrapped under its own indentation, and without the bare
    score that nbgrader reads from the cell's result (the page heads the cell with the score).
    In a right-to-left course the feedback is HTML that reads right to left, its code, calls,
    numbers and falsifying examples left to right (:func:`right_to_left`)."""

    course = Unicode("", help="the course.yaml of the grading copy, whose language the page speaks").tag(config=True)

    def preprocess(self, nb, resources):
        self.rtl = bool(self.course) and bidi.right_to_left(load_course(self.course).language)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if utils.is_grade(cell) and cell.cell_type == "code":
            shown = right_to_left if self.rtl else wrapped
            cell.outputs = [shown(output) for output in cell.outputs if output.get("output_type") != "execute_result"]
        return cell, resources


PAGE_COLUMNS = 100


def wrapped(output):
    """A stream output with its long lines wrapped at :data:`PAGE_COLUMNS`; any other output as it is."""
    if output.get("output_type") != "stream":
        return output
    lines = [part for line in output.get("text", "").split("\n") for part in _wrap(line)]
    return new_output("stream", name=output.get("name", "stdout"), text="\n".join(lines))


def _wrap(line: str) -> list[str]:
    """``line`` wrapped at :data:`PAGE_COLUMNS`, under its own indentation."""
    if len(line) <= PAGE_COLUMNS:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")))
    return textwrap.wrap(line, PAGE_COLUMNS, subsequent_indent=indent + INDENT, break_long_words=False,
                         break_on_hyphens=False)


def right_to_left(output):
    """A stream output as HTML that reads right to left: each line of the engine's own (the
    score, a property's result, the hidden ones' count) with its values in ``<bdi>``, each other
    line as :func:`autograder.bidi.failure_html` shows it (a line of code wrapped as
    :func:`wrapped` wraps it), each property's output in a ``<blockquote>`` under its line; any
    other output as it is."""
    if output.get("output_type") != "stream":
        return output
    parts = []
    # a paragraph of prose wraps on the page, a line of code is wrapped here
    lines = [part for line in output.get("text", "").split("\n") for part in
             ([line] if bidi.has_prose(line) else _wrap(line))]
    runs = itertools.groupby(lines, key=lambda line: line.startswith(INDENT) or not line)
    for indented, run in runs:
        text = "\n".join(line.removeprefix(INDENT) for line in run)
        if indented and text.strip():
            parts.append(f"<blockquote>{bidi.failure_html(text)}</blockquote>")
        elif not indented:
            parts += [_line_html(line) for line in text.split("\n")]
    return new_output("display_data", data={"text/html": '<div dir="rtl">' + "\n".join(parts) + "</div>"})


def _line_html(line: str) -> str:
    """A line of the feedback outside a property's output, as HTML."""
    for message in LINES:
        if found := read_line(message, line):
            return f"<p>{bidi.isolated(line, [found.span(field) for field in found.groupdict()])}</p>"
    return bidi.failure_html(line)
