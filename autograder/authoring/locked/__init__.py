"""Locked known-answer cases: students learn pass or fail, never the answer."""
