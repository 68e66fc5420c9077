"""Student Markdown and HTML outputs cleaned before nbconvert renders a page, by nh3."""

from __future__ import annotations

import nh3
from nbconvert.filters import markdown2html
from nbconvert.preprocessors import Preprocessor


class SanitizeHTML(Preprocessor):
    """Student Markdown rendered and cleaned by nh3 (no raw HTML, no scripts, no ``javascript:``
    links); HTML outputs cleaned the same way, and scripts among the outputs dropped."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            cell.source = clean(markdown2html(cell.source))
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for kind in [k for k in data if "javascript" in k or k == "text/markdown"]:
                del data[kind]
            if "text/html" in data:
                data["text/html"] = clean(data["text/html"])
        return cell, resources


def clean(page: str) -> str:
    """HTML as a page may show it: nh3's safe tags and attributes, and ``dir`` on any tag, so that
    right-to-left text keeps its direction and the code in it its own. It is the page's
    ``clean_html`` filter too (nbgrader_config.py), in place of nbconvert's, which drops ``dir``.
    An image keeps only a ``data:`` source: one fetched from elsewhere would tell its server that,
    and when, the instructor read the student's page."""
    return nh3.clean(page, attributes={**nh3.ALLOWED_ATTRIBUTES, "*": {"dir"}},
                     url_schemes={*nh3.ALLOWED_URL_SCHEMES, "data"}, attribute_filter=_embedded_images_only)


def _embedded_images_only(tag: str, attribute: str, value: str) -> str | None:
    """A source only as an embedded image; a ``data:`` URL nowhere else."""
    embedded = value.startswith("data:image/")
    if attribute in ("src", "srcset"):
        return value if embedded else None
    return None if value.startswith("data:") else value
