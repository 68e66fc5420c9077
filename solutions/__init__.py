"""Hidden reference solutions of the five graded exercises (never shown to students)."""
