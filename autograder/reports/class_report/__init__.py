"""The class report: one self-contained HTML page on a graded batch, for the instructor."""
