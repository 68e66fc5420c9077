"""What is copied into every worker: standard library only, never importing the autograder package."""
