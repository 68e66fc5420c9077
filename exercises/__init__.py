"""The student's package: the lesson's worked code (``lesson``) and the five graded exercises.

Edit ``ex1_merge_tracing`` … ``ex5_parity`` (and the bonus ``ex6_unigram``); the autograder imports
them by these names.

Bad input
---------
Every graded function of every exercise checks its arguments by the same rules:

- An argument of the wrong type is a ``TypeError``. The type is the one in the signature:
  ``list[int]`` is a list of ints (one item of another type is a ``TypeError`` too),
  ``dict[str, int]`` a dict of str to int, ``float`` an int or a float, ``Callable``
  anything callable.
- A value of the right type that is not allowed (a negative count, an empty list, an
  unknown language, ...) is a ``ValueError``. Each function's "Raises" sentence says which
  values it allows.
- The message of either contains the argument's name: ``"num_merges must be >= 0, got -1"``.
- Arguments are checked in signature order, and the first bad one is reported.
"""
