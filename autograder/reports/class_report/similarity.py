"""Code similarity: every pair of submissions compared module by module with copydetect's
winnowing, the course's stubs and provided files ignored as boilerplate. Student code is
tokenised in a limited helper per submission (:func:`fingerprinted`), never in this process,
which compares only the fingerprints' numbers."""

from __future__ import annotations

import html
import io
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ...isolation import HelperLimits, OverLimits, run_helper
from .load import Batch
from .names import Names

DEFAULT_THRESHOLD = 0.5
MAX_PAIRS = 50  # pairs shown in full; the rest above the threshold are listed by name only
CONTEXT_LINES = 3  # unhighlighted lines kept around each similar region
GROUP = 16  # submissions one helper fingerprints: they share its start (copydetect's import)
SIMILAR_CHARS = 256 << 10  # a larger module is no exercise's answer, and is not compared
SIMILARITY_LIMITS = HelperLimits(cpu_seconds=60, memory_mb=2048, file_mb=1, answer_mb=32, wall_seconds=240)



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
    reaches ``threshold``, the most similar first; a submission whose code could not be read
    within the helper's limits is left out (:func:`fingerprinted`)."""
    return pairs_of(fingerprinted(sources, boilerplate), threshold, names)


@dataclass(frozen=True)
class Fingerprint:
    """What copydetect's ``compare_files`` reads of a ``CodeFingerprint`` (its documented
    attributes), rebuilt from the plain data a helper answered, and the code it was made from."""

    raw_code: str
    filtered_code: str
    offsets: Any  # copydetect's N×2 array: characters filtering removed, by index of the filtered code
    hashes: set[int]
    hash_idx: dict[int, list[int]]
    k: int
    token_coverage: float


def fingerprinted(sources: dict[str, dict[str, str]], boilerplate: list[tuple[str, str]]
                  ) -> dict[str, dict[str, Fingerprint]]:
    """Each submission's modules fingerprinted, the boilerplate's fingerprints left out. Tokenising
    student code is parsing untrusted input: it runs in limited helpers
    (:mod:`autograder.isolation.helper`), :data:`GROUP` submissions each and a few at once. A
    module over :data:`SIMILAR_CHARS` is not compared, and a submission whose code goes past the
    helper's limits is left out (the page lists it as not compared)."""
    sources = {name: kept for name, modules in sources.items()
               if (kept := {module: code for module, code in modules.items() if len(code) <= SIMILAR_CHARS})}
    names = sorted(sources)
    groups = [names[start:start + GROUP] for start in range(0, len(names), GROUP)]
    found: dict[str, dict[str, Fingerprint]] = {}
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for part in pool.map(lambda group: _fingerprinted(group, sources, boilerplate), groups):
            found |= part
    return found


def _fingerprinted(names: list[str], sources: dict[str, dict[str, str]], boilerplate: list[tuple[str, str]]
                   ) -> dict[str, dict[str, Fingerprint]]:
    """The fingerprints of ``names``' modules from one helper; a group whose helper went past its
    limits is fingerprinted again a submission a helper, and the one to blame is left out."""
    request = {"submissions": {name: sources[name] for name in names}, "boilerplate": boilerplate}
    try:
        answer = run_helper("autograder.reports.class_report.similarity:fingerprints", request,
                            limits=SIMILARITY_LIMITS)
        return {name: {module: _rebuilt(code, answer[name][module]) for module, code in sources[name].items()}
                for name in names}
    except (OverLimits, KeyError, TypeError, ValueError):
        if len(names) == 1:
            return {}
        return {name: found for one in names for name, found in _fingerprinted([one], sources, boilerplate).items()}


def fingerprints(request: dict) -> dict[str, dict[str, dict]]:
    """The task of the limited helper: copydetect's fingerprint of each module of each of
    ``request["submissions"]`` (``name -> module -> code``), the fingerprints of
    ``request["boilerplate"]`` (``[label, code]`` pairs) left out, as plain data."""
    import sys
    import types

    import numpy as np

    # copydetect's detector imports pyplot for its own report's plots, which fingerprinting never
    # draws: stand-ins spare every helper matplotlib's import
    for name in ("matplotlib", "matplotlib.pyplot"):
        sys.modules.setdefault(name, types.ModuleType(name))
    from copydetect import CodeFingerprint, defaults

    k, window = defaults.NOISE_THRESHOLD, defaults.GUARANTEE_THRESHOLD - defaults.NOISE_THRESHOLD + 1

    def made(label: str, code: str, skip: Any = None) -> Any:
        return CodeFingerprint(label + ".py", k, window, boilerplate=skip, fp=io.StringIO(code), language="python")

    skip = np.unique(np.array([h for label, code in request["boilerplate"] for h in made(label, code).hashes],
                              dtype=np.int64)) if request["boilerplate"] else None
    return {name: {module: _plain(made(f"{name}/{module}", code, skip)) for module, code in modules.items()}
            for name, modules in request["submissions"].items()}


def _plain(made: Any) -> dict:
    """A ``CodeFingerprint`` as plain data."""
    import numpy as np

    return {"filtered": made.filtered_code, "offsets": np.asarray(made.offsets).tolist(), "k": made.k,
            "hashes": sorted(int(h) for h in made.hashes), "coverage": float(made.token_coverage),
            "index": [[int(h), [int(i) for i in at]] for h, at in made.hash_idx.items()]}


def _rebuilt(code: str, data: dict) -> Fingerprint:
    """A helper's fingerprint of ``code`` as copydetect reads one."""
    import numpy as np

    offsets = np.array(data["offsets"], dtype=np.int64).reshape(-1, 2) if data["offsets"] else np.array([])
    return Fingerprint(code, str(data["filtered"]), offsets, {int(h) for h in data["hashes"]},
                       {int(h): [int(i) for i in at] for h, at in data["index"]}, int(data["k"]),
                       float(data["coverage"]))


def pairs_of(prints: dict[str, dict[str, Fingerprint]], threshold: float, names: Names) -> list[Pair]:
    """Every pair of fingerprinted submissions compared module by module, those whose larger share
    reaches ``threshold``, the most similar first."""
    from copydetect import compare_files

    names_sorted = sorted(prints)
    pairs: list[tuple[Pair, list[Any]]] = []
    for i, first in enumerate(names_sorted):
        for second in names_sorted[i + 1:]:
            shared = sorted(set(prints[first]) & set(prints[second]))
            overlap = [0.0, 0.0]
            coverage = [0.0, 0.0]
            found = []
            for module in shared:
                one, two = prints[first][module], prints[second][module]
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
    prints = fingerprinted(sources, batch.boilerplate)
    count = len(prints)
    return Similarity(pairs_of(prints, threshold, names), count * (count - 1) // 2, count, modules,
                      sorted(set(graded) - set(prints)), threshold)
