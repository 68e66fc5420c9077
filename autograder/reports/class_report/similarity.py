"""Code similarity: every pair of submissions compared module by module with copydetect's
winnowing, the course's stubs and provided files ignored as boilerplate."""

from __future__ import annotations

import html
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from .load import Batch
from .names import Names

DEFAULT_THRESHOLD = 0.5
MAX_PAIRS = 50  # pairs shown in full; the rest above the threshold are listed by name only
CONTEXT_LINES = 3  # unhighlighted lines kept around each similar region



@dataclass
class Region:
    module: str
    left: Markup  # the first submission's module, similar regions marked
    right: Markup
    left_share: float
    right_share: float


@dataclass
class Pair:
    first: str
    second: str
    first_share: float  # of the first's code (its winnowed tokens), the share found in the second
    second_share: float
    regions: list[Region]

    @property
    def score(self) -> float:
        return max(self.first_share, self.second_share)


@dataclass
class Similarity:
    pairs: list[Pair]  # above the threshold, the most similar first
    compared: int  # pairs compared
    submissions: int
    modules: list[str]
    missing: list[str]  # graded submissions whose code was not found among --submissions
    threshold: float


def compare(sources: dict[str, dict[str, str]], boilerplate: list[tuple[str, str]], threshold: float,
            names: Names) -> list[Pair]:
    """Every pair of ``sources`` compared module by module (copydetect), those whose larger share
    reaches ``threshold``, the most similar first."""
    import numpy as np
    from copydetect import CodeFingerprint, compare_files, defaults

    k, window = defaults.NOISE_THRESHOLD, defaults.GUARANTEE_THRESHOLD - defaults.NOISE_THRESHOLD + 1

    def fingerprint(label: str, code: str, skip: Any = None) -> Any:
        return CodeFingerprint(label + ".py", k, window, boilerplate=skip, fp=io.StringIO(code), language="python")

    skip = np.unique(np.array([h for label, code in boilerplate for h in fingerprint(label, code).hashes],
                              dtype=np.int64)) if boilerplate else None
    prints = {(name, module): fingerprint(f"{name}/{module}", code, skip)
              for name, modules in sources.items() for module, code in modules.items()}
    names_sorted = sorted(sources)
    pairs: list[tuple[Pair, list[Any]]] = []
    for i, first in enumerate(names_sorted):
        for second in names_sorted[i + 1:]:
            shared = sorted(set(sources[first]) & set(sources[second]))
            overlap = [0.0, 0.0]
            coverage = [0.0, 0.0]
            found = []
            for module in shared:
                one, two = prints[(first, module)], prints[(second, module)]
                coverage[0] += one.token_coverage
                coverage[1] += two.token_coverage
                tokens, (share1, share2), slices = compare_files(one, two)
                if tokens:
                    overlap[0] += share1 * one.token_coverage
                    overlap[1] += share2 * two.token_coverage
                    found.append((module, one, two, float(share1), float(share2), slices))
            shares = [o / c if c else 0.0 for o, c in zip(overlap, coverage, strict=True)]
            if max(shares) >= threshold:
                pairs.append((Pair(first, second, shares[0], shares[1], []), found))
    pairs.sort(key=lambda p: (-p[0].score, -min(p[0].first_share, p[0].second_share), p[0].first, p[0].second))
    for pair, found in pairs[:MAX_PAIRS]:  # the regions of the pairs the page shows in full
        pair.regions = [Region(module, _marked(one.raw_code, slices[0], names),
                               _marked(two.raw_code, slices[1], names), share1, share2)
                        for module, one, two, share1, share2, slices in found]
    return [pair for pair, _ in pairs]


def _marked(code: str, slices: Any, names: Names) -> Markup:
    """``code`` as HTML with the similar ``slices`` marked, far-off unmarked lines elided."""
    spans = sorted((int(a), int(b)) for a, b in zip(slices[0], slices[1], strict=True)) if len(slices) else []
    parts: list[str] = []
    at = 0
    for start, end in spans:
        start = max(start, at)
        if end <= start:
            continue
        parts.append(_elide(names.scrub(code[at:start]), first=not parts, last=False))
        parts.append(f"<mark>{html.escape(names.scrub(code[start:end]))}</mark>")
        at = end
    parts.append(_elide(names.scrub(code[at:]), first=not parts, last=True))
    return Markup("".join(parts))  # every piece escaped above


def _elide(text: str, first: bool, last: bool) -> str:
    """Unmarked code kept to a few lines at each side of the marked regions around it."""
    lines = text.split("\n")
    keep = CONTEXT_LINES + 1
    if first and not last and len(lines) > keep:
        lines = ["…"] + lines[-keep:]
    elif last and not first and len(lines) > keep:
        lines = lines[:keep] + ["…"]
    elif not first and not last and len(lines) > 2 * keep + 1:
        lines = lines[:keep] + ["…"] + lines[-keep:]
    return html.escape("\n".join(lines))


def similarity(batch: Batch, paths: list[Path] | None, modules: list[str], threshold: float,
               names: Names) -> Similarity | None:
    """The code-similarity section's data, or None without ``--submissions``."""
    if paths is None:
        return None
    sources = batch.sources(paths, modules)
    graded = [e.name for e in batch.entries if e.graded]
    sources = {name: modules for name, modules in sources.items() if name in graded and modules}
    pairs = compare(sources, batch.boilerplate, threshold, names)
    count = len(sources)
    return Similarity(pairs, count * (count - 1) // 2, count, modules,
                      sorted(set(graded) - set(sources)), threshold)
