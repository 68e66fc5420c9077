"""How many properties each mutant of the catalog fails: ``python -m tests.course.failure_spread``.

One bug should be reported once, by the property whose description names the rule it breaks;
this grades every mutant of ``tests/course/catalog.py`` on its own exercise (two worker processes)
and prints, per mutant, the properties it failed, then the distribution of their number.
``--json FILE`` also writes ``{exercise:name: [failed properties]}``.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tests.course.catalog import MUTANTS, build_mutant, grade


def failed_properties(workers: int = 2) -> dict[str, list[str]]:
    """``exercise:name -> the properties it failed`` for every mutant of the catalog."""
    folder = Path(tempfile.mkdtemp(prefix="spread-"))
    folder.chmod(0o755)
    try:
        paths = {f"{m.exercise}:{m.name}": (str(build_mutant(folder / f"m{i}", m)), m.exercise)
                 for i, m in enumerate(MUTANTS)}
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = {key: pool.submit(grade, path, [exercise]) for key, (path, exercise) in paths.items()}
            return {key: sorted(r["name"] for r in future.result()[0] if not r["passed"])
                    for key, future in futures.items()}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", type=Path, help="also write the failed properties per mutant here")
    failed = failed_properties()
    for key, names in failed.items():
        print(f"{len(names)}  {key}: {', '.join(names) or '-'}")
    spread = collections.Counter(len(names) for names in failed.values())
    print("properties failed: mutants", ", ".join(f"{n}: {spread[n]}" for n in sorted(spread)))
    if parser.parse_args().json:
        parser.parse_args().json.write_text(json.dumps(failed, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
