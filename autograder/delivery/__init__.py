"""The delivery channels: how a course reaches students. :mod:`.release` writes the student
release (a plain folder with the self-check), :mod:`.nbgrader.course` an nbgrader course
whose notebooks :mod:`.nbgrader.sandbox_grade` grades in the sandbox, and :mod:`.gradescope` a
Gradescope autograder zip; :mod:`.shipping` is what they share (copying the course and the
engine, the course file rewritten, course text from the templates in ``templates/``)."""
