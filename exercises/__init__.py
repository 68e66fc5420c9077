"""The student's package: the lesson's worked code (``lesson``) and the five graded exercises.

Edit ``ex1_merge_tracing`` … ``ex5_parity``; the autograder imports them by these names.
"""
