"""The limited helper (``autograder/isolation/helper.py``): its answer, and its wall-clock limit."""

from __future__ import annotations

import pytest

from autograder.isolation import HelperLimits, OverLimits, run_helper


def read_submission(path: str, root, limits: HelperLimits | None = None) -> dict:
    request = {"path": path, "root": str(root), "package": "exercises", "language": "en", "modules": ["m"]}
    return run_helper("autograder.intake.reading:read_submission", request, read=[root], write=[root],
                      limits=limits or HelperLimits())


def test_a_helper_answers_its_task(tmp_path):
    (tmp_path / "m.py").write_text("def f(x):\n    return x\n")
    assert read_submission(str(tmp_path), tmp_path)["notes"] == []
    assert (tmp_path / "exercises" / "m.py").is_file()


def test_a_helper_past_its_wall_time_is_killed_and_gives_no_answer(tmp_path):
    with pytest.raises(OverLimits, match="went past the limits"):
        read_submission(str(tmp_path), tmp_path, HelperLimits(wall_seconds=0.001))
