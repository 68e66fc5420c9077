"""The student's package: the lesson's worked code (``lesson``, one ``lesson_*`` module per step)
and the five graded exercises.

Edit ``ex1_merge_tracing`` … ``ex5_parity`` (and the bonus ``ex6_unigram``); the autograder imports
them by these names.

Bad input
---------
Every graded function of every exercise checks its arguments by the same rules:

- An argument of the wrong type is a ``TypeError``. The type is the one in the signature:
  ``list[int]`` is a list of ints (one item of another type is a ``TypeError`` too, and so
  is a tuple in place of the list), ``dict[str, int]`` a dict of str to int, ``float`` an
  int or a float, ``Callable`` anything callable.
- A ``bool`` is not a number: ``True`` or ``False`` where an int or a float is expected is a
  ``TypeError`` (Python says ``isinstance(True, int)``, so test ``isinstance(x, bool)``
  first, or ``type(x) is int``). Where a ``bool`` is expected, ``0`` and ``1`` are not one.
- Where a set is accepted, a ``frozenset`` is one too.
- A value of the right type that is not allowed (a negative count, an empty list, an
  unknown language, an id outside the vocabulary, ...) is a ``ValueError``, also when
  looking it up fails: not a ``KeyError`` or an ``IndexError``. Each function's "Raises"
  sentence says which values it allows.
- Each bad input is one error: raise ``TypeError`` or ``ValueError`` (or a class of your own
  derived from the one the rule names, such as ``class VocabError(ValueError)``). A class
  derived from both, or from ``KeyError`` or ``IndexError`` as well, is neither.
- The message of either contains the argument's name: ``"num_merges must be >= 0, got -1"``.
- Arguments are checked in signature order, and the first bad one is reported. Within one
  argument, its type and the types of all its items come before its values: an argument that
  holds an item of the wrong type is a ``TypeError`` even when another of its items has a bad
  value. A rule between two arguments (``length`` shorter than a sequence of ``batch``, a
  ``baseline`` that is no key of ``parallel``) is checked once both have passed their own
  checks, and its error names the argument the function's docstring says.
"""
