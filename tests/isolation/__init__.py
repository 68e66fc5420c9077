"""The sandbox (autograder/isolation/): what a worker can reach, in every isolation mode."""
