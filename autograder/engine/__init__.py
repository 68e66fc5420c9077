"""The engine: one submission graded in one grader process."""
