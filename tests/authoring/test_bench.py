"""``bench --profile``'s split of grading time: each function's own time goes to the category
of its file, and a built-in's to that of the caller that spent the most in it."""

from types import SimpleNamespace

import pytest

from autograder.authoring.bench import CATEGORIES, _categorise
from tests.conftest import ROOT


def test_own_time_goes_by_file_and_builtins_follow_their_biggest_caller():
    sandbox = ("/x/autograder/isolation/channel.py", 240, "request")
    start = ("/x/autograder/isolation/process.py", 208, "__init__")
    hypothesis = ("/v/site-packages/hypothesis/core.py", 10, "run")
    poll = ("~", 0, "<method 'poll' of 'select.epoll' objects>")
    fork = ("~", 0, "<built-in method _posixsubprocess.fork_exec>")
    stats = SimpleNamespace(stats={
        sandbox: (1, 1, 0.5, 9.0, {}),
        start: (1, 1, 0.25, 1.0, {}),
        hypothesis: (1, 1, 2.0, 2.0, {}),
        ("/course/solutions/ex1.py", 5, "train"): (1, 1, 1.5, 1.5, {}),
        ("/course/suites/ex1.py", 5, "test_x"): (1, 1, 0.125, 4.0, {}),
        poll: (3, 3, 6.0, 6.0, {sandbox: (2, 2, 5.0, 5.0), hypothesis: (1, 1, 1.0, 1.0)}),
        fork: (1, 1, 0.75, 0.75, {start: (1, 1, 0.75, 0.75)}),
        ("/usr/lib/python3.11/json/decoder.py", 1, "decode"): (1, 1, 0.0625, 0.0625, {}),
    })
    names = [name for name, _ in CATEGORIES]
    split = _categorise(stats)
    assert split == {names[0]: 1.0, names[1]: 6.5, names[2]: 1.5, names[3]: 2.0, names[4]: 0.0, names[5]: 0.12,
                     "other": 0.06}


def test_the_results_page_lists_every_figure_with_its_unit_and_where_it_was_measured():
    from autograder.authoring.bench import KEYS, results_page

    figures = {"reference_seconds": 2.5, "reference_seconds_jobs1": 4.0, "overhead_ratio": 3.25,
               "batch_per_minute_jobs2": 40.0, "first_grading_seconds": None}
    page = results_page(figures, "autograder bench --json --copies 6", "a 2-core machine", "2026-12-04", "abc1234")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(KEYS)
    assert "| `reference_seconds` | 2.5 s |" in page and "| `reference_seconds_jobs1` | 4 s |" in page
    assert "| `overhead_ratio` | 3.25× |" in page
    assert "| `batch_per_minute_jobs2` | 40 |" in page and "| `first_grading_seconds` | (not in this run) |" in page
    assert " ".join(page.split()).count("Measured on 2026-12-04 with `autograder bench --json --copies 6`, engine at "
                                        "commit `abc1234`, on a 2-core machine.") == 1


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("figure", ["requests_per_grading", "overhead_ratio"])
def test_the_figures_measured_apart_are_measured(figure):
    """The figures ``bench --json`` measures in a process of their own come back as numbers, on a
    course that is not this one: what they patch in the engine still fits what it patches."""
    from autograder.authoring.bench import _apart
    from autograder.config import load_course

    measured = _apart(load_course(ROOT / "tests" / "fixtures" / "toy_course" / "course.yaml"), figure)
    assert measured > 0


def test_a_second_bench_starts_its_cluster_in_the_folder_the_first_left(tmp_path, monkeypatch):
    """The Dask figure's cluster makes its certificates afresh in the same folder every run, with
    the processes and the client stood in for (the real ones: ``tests/batch/test_cluster.py``)."""
    from autograder.authoring import bench

    started = []

    class Process:
        pid = 0

        def wait(self, timeout: float) -> None:
            pass

    class Client:
        def __init__(self, address: str, security: object, timeout: str):
            started.append(address)

        def __enter__(self) -> "Client":
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def wait_for_workers(self, workers: int, timeout: float) -> None:
            pass

    monkeypatch.setattr(bench.subprocess, "Popen", lambda *args, **kwargs: Process())
    monkeypatch.setattr(bench.os, "killpg", lambda pid, number: None)
    monkeypatch.setattr("distributed.Client", Client)
    for _ in range(2):
        with bench._local_cluster(1, tmp_path / "cluster1") as (_, certificates):
            assert sorted(path.name for path in certificates.iterdir()) == sorted([bench.CA, bench.CERTIFICATE,
                                                                                   bench.KEY])
    assert len(started) == 2
