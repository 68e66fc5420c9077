"""The instructor's view of a class: one self-contained HTML page made from a ``grade`` run or an nbgrader course.

``python -m autograder report GRADES_DIR --out report.html`` reads what ``grade`` left in its
output folder (:mod:`autograder.batch.gradebook`'s ``gradebook.sqlite`` for the scores and times,
each submission's ``results.json`` for the properties and their feedback), or, given an
autograded nbgrader course folder (``gradebook.db``), what nbgrader kept
(:mod:`.nbgrader`: its scores, the engine's feedback in each
autograded notebook, the submitted notebooks; hidden properties only as counts), and writes a
page with four parts:

- **scores**: histograms of the totals and of each exercise (bonus exercises apart), the
  median and quartiles, and the time each grading took;
- **what the class got wrong**: each property's failure share, sorted; for a public property
  the most common smallest counterexample (hypothesis's falsifying example, read back from the
  feedback), how many hit exactly that one and the reference's answer where the feedback
  states it (``expected X, got Y``); for a hidden property counts only; and, where the course
  names a mutant catalog (``report.mutants`` in ``course.yaml``: property → mutants, per
  exercise), links from each property to the mutants it catches;
- **code similarity**: with ``--submissions``, every pair of submissions compared module by
  module with copydetect's winnowing (the course's stubs and provided files are boilerplate
  and ignored), pairs above ``--threshold`` ranked with their similar regions side by side;
- **privacy**: the page holds student data and says so; ``--anonymise`` names every
  submission by a stable pseudonym (an HMAC of its name under a key kept in the grades folder).

The page loads nothing: no script, no font, no stylesheet from elsewhere, plots as inline
``data:`` images, and a Content-Security-Policy that forbids any other source. matplotlib and
copydetect come from the ``report`` extra and are imported only when a report is made:
grading never needs them.
"""
