"""The page's plots: matplotlib figures as inline SVG images, so the page fetches nothing.
matplotlib comes from the ``report`` extra and is imported only when a report is made."""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from ...config import Course
from ...errors import GraderError
from .load import Entry


def figure_html(figure: Any, alt: str) -> str:
    """A matplotlib figure as an inline SVG image (a data: URI, so the page fetches nothing)."""
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    data = base64.b64encode(buffer.getvalue().encode("utf-8")).decode("ascii")
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/svg+xml;base64,{data}">'


def pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise GraderError("the report needs matplotlib and copydetect (the `report` extra: "
                          "pip install -e '.[report]', or make setup, which installs requirements-nbgrader.lock)"
                          ) from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "class-report"  # the same data draws the same bytes
    import matplotlib.pyplot as plt

    return plt


def histogram(plt: Any, axis: Any, values: list[float], maximum: float, title: str, xlabel: str) -> None:
    top = max([maximum, *values]) if values else maximum
    bins = min(20, max(int(top), 1))
    axis.hist(values, bins=bins, range=(0, top if top > 0 else 1), color="#4a78b0", edgecolor="white")
    axis.set_title(title, fontsize=10)
    axis.set_xlabel(xlabel, fontsize=9)
    axis.set_ylabel("submissions", fontsize=9)
    axis.yaxis.get_major_locator().set_params(integer=True)


def exercise_plots(plt: Any, course: Course, entries: list[Entry], modules: list[str]) -> str:
    if not modules:
        return ""
    columns = min(3, len(modules))
    rows = (len(modules) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 2.6 * rows), squeeze=False)
    for index, module in enumerate(modules):
        exercise = course.exercise(module)
        values = [e.scores(course)[module] for e in entries if module in e.scores(course)]
        histogram(plt, axes[index // columns][index % columns], values, exercise.points, module,
                   f"points of {exercise.points_text}")
    for index in range(len(modules), rows * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    return figure_html(figure, "histograms of the points per exercise: " + ", ".join(modules))
