# The two commands of the README:
#   make run    set everything up, then grade the bundled sample submissions
#   make test   set everything up, then run the whole test suite
# Everything they need is installed by the targets below, from PyPI and Debian only.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup run test bench multilingual prompt analyze sandbox-tools fetch

setup: $(VENV)/.installed sandbox-tools fetch

# requirements-nbgrader.lock adds nbgrader and jsonschema, which the tests of the delivery
# channels (nbgrader end to end, Gradescope's results schema) need.
$(VENV)/.installed: requirements.lock requirements-nbgrader.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock -r requirements-nbgrader.lock
	touch $@

# bubblewrap gives the grader its strong sandbox; without it the grader still runs, in a
# weaker mode that every report names.
sandbox-tools:
	@if ! command -v bwrap >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >/dev/null \
	      || echo "warning: could not install bubblewrap; grading will use the weaker sandbox"; \
	  else echo "warning: bubblewrap (bwrap) is missing; install it (Debian: apt-get install bubblewrap)"; fi; \
	fi

fetch: $(VENV)/.installed
	$(BIN)/python -m tokcourse.assets fetch

run: setup
	$(BIN)/python -m autograder demo --out out/demo

test: setup
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python benchmarks/ratio_curve.py
	$(BIN)/python -m autograder bench

# The lesson's real-tokenizer tools (see the README's course notes).
multilingual: setup
	$(BIN)/python -m tokcourse.multilingual --out outputs/multilingual

prompt: setup
	$(BIN)/python -m tokcourse.analyzer --write-prompt outputs/prompt-tokenizer-analyzer.md

analyze: setup  # make analyze TEXT=my.txt BASELINE=english.txt
	$(BIN)/python -m tokcourse.analyzer $(TEXT) $(if $(BASELINE),--baseline-file $(BASELINE))
