"""The grading plugin's hypothesis set-up: examples depend on the seed alone, not on which
modules the grader process happens to have imported."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

PROBE = """
import json, sys
from hypothesis import given, seed, settings, strategies as st

seen = []

@seed(20261130)
@settings(max_examples=300, database=None)
@given(st.text(max_size=4))
def probe(text):
    seen.append(text)

def draw():
    seen.clear()
    probe()
    return list(seen)

import autograder.plugin
if sys.argv[1] == "seed-alone":
    autograder.plugin.draw_from_the_seed_alone()
before = draw()
sys.path.insert(0, sys.argv[2])
import lure  # a local module with a hundred short string literals
after = draw()
print(json.dumps({"same": before == after, "lured": sorted({t for t in after if t.startswith("Qz")})}))
"""


def _probe(mode: str, folder) -> dict:
    (folder / "lure.py").write_text(f"LURES = {tuple(f'Qz{i}' for i in range(100))!r}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PROBE, mode, str(folder)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("mode", ["hypothesis-default", "seed-alone"])
def test_examples_ignore_literals_of_imported_modules(tmp_path, mode):
    outcome = _probe(mode, tmp_path)
    if mode == "hypothesis-default":
        # the probe is sensitive: unpatched hypothesis does pick up the new module's literals
        assert outcome["lured"] and not outcome["same"], outcome
    else:
        assert outcome == {"same": True, "lured": []}
