"""The batch: many submissions graded in grader processes, here or on a cluster, and the gradebook."""
