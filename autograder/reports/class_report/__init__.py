"""The instructor's view of a class: one self-contained HTML page made from a ``grade`` run or an nbgrader course.

``python -m autograder report GRADES_DIR --out report.html`` reads a ``grade`` output folder
(``gradebook.sqlite`` and each ``results.json``) or an autograded nbgrader course
(:mod:`.nbgrader`), and writes a page of scores, what the class got wrong, code similarity
(``--submissions``) and a privacy note (``--anonymise``). The page loads nothing from elsewhere.
matplotlib and copydetect (the ``report`` extra) are imported only when a report is made. What
the page says: docs/class-report.md.
"""
