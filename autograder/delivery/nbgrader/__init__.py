"""nbgrader: the course as an nbgrader course, and its autograde step, shaped as nbgrader is.

:mod:`.course` builds the course folder and its ``nbgrader_config.py``, which declares the
pipelines as nbgrader does, as lists of preprocessors, one class a file here:
:mod:`.separate_copies`, :mod:`.sandbox_grade` (the engine grades each notebook in its
sandbox), :mod:`.save_extra_credit`, and for the pages :mod:`.sanitize_html` and
:mod:`.feedback_page`; :mod:`.quiet_copies` filters the log. :mod:`.feedback` writes the grade
cell's text and reads it back; :mod:`.autograde` runs a class's autograde in parallel
(:mod:`.autograde_worker`). docs/nbgrader.md is the instructor's guide.
"""
