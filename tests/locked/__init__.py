"""Locked cases (autograder/locked/): the attack a release must survive."""
