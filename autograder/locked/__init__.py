"""Locked known-answer cases: students learn pass or fail, never the answer.

A course lists fixed calls per exercise (:mod:`.cases`). When the instructor builds a release,
:mod:`.seal` runs the reference on each and ships only a salted hash of its answers
(:mod:`.hashing`), refusing a case whose hash :mod:`.attack`'s structured search can invert. A
student's ``check`` runs the same calls on their code in the sandbox and compares the hashes
(:mod:`.run`), learning which call's answer differs, never what it should be.
"""
