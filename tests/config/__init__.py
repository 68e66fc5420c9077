"""course.yaml and what every course must hold (autograder/config.py)."""
