"""What grading ships whole: the sandbox's support encoders and the suites' shared strategies."""
