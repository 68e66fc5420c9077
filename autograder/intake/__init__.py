"""Taking a submission in: its untrusted bytes read, unpacked and converted in a limited helper.

Every channel that grades or reads a submission (``grade``, ``check``, nbgrader, Gradescope,
``mutate``, ``bench``, the class report) takes it in here: :mod:`.staging` runs
:mod:`.reading` (a folder, a zip, a loose file) in :mod:`autograder.isolation`'s helper and
keeps what it answers; :mod:`.notebook` and :mod:`.converting` turn a notebook into the module
that is graded. Above the engine, whose stub reading it uses, and below every channel.
"""
