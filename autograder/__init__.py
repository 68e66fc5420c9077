"""A sandboxed, property-based grading engine for course exercises (it knows no course)."""

__version__ = "0.1.0"
