"""What a grader process is asked: a :class:`Request` goes to it as JSON and comes back the same."""

import json
from pathlib import Path

import pytest

from autograder.batch.grader import WHOLE, Part, Request
from autograder.batch.serve import scope


@pytest.mark.parametrize("part", [WHOLE, Part(["ex1"], 12.5, public_only=True), Part(after=Path("/tmp/public")),
                                  Part(["ex2"], first_failure=True)])
def test_a_request_is_the_same_after_its_json_line(part):
    request = Request(Path("/tmp/staged"), Path("/tmp/out"), "alice", ("a note",), part)
    assert Request.from_plain(json.loads(json.dumps(request.to_plain()))) == request


def test_a_part_that_stops_at_the_first_failure_is_graded_so():
    assert scope(Part(["ex2"], first_failure=True)).first_failure
    assert not scope(WHOLE).first_failure
