"""The tests, one folder per package or concern (tests/README.md says which)."""
