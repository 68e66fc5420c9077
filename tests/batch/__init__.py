"""A batch (autograder/batch/): the command line's grading, its names, the cluster."""
