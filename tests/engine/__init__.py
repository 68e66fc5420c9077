"""The grading engine (autograder/engine/) and the shared modules suites use."""
