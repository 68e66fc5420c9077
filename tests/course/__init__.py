"""This course's suites, exercises and solutions, against known submissions."""
