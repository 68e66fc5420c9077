"""A sandboxed, property-based grading engine for course exercises (it knows no course)."""

__version__ = "0.1.0"

# How a student release runs the engine, from its folder, without activating the venv its README
# makes: the README's commands and the self-check's tips are written with these.
VENV_PYTHON = ".venv/bin/python"
STUDENT_COMMAND = f"{VENV_PYTHON} -m autograder"
