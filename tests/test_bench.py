"""``bench --profile``'s split of grading time: each function's own time goes to the category
of its file, and a built-in's to that of the caller that spent the most in it."""

from types import SimpleNamespace

from autograder.authoring.bench import CATEGORIES, _categorise


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
