"""The delivery channels (autograder/delivery/): release, Gradescope, nbgrader."""
