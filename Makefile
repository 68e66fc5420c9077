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

# The sandbox's tools: bubblewrap (namespaces), setpriv (util-linux: a private uid) and capsh
# (libcap2-bin: the tests simulate containers with it). Landlock needs only the kernel. Without
# them the grader still runs with the layers it has; official grading refuses (exit 3) where
# none keeps student code from the grader's files.
sandbox-tools:
	@missing=""; for tool in bwrap:bubblewrap setpriv:util-linux capsh:libcap2-bin; do \
	  command -v $${tool%%:*} >/dev/null || missing="$$missing $${tool#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null \
	      || echo "warning: could not install$$missing; grading uses the layers it has"; \
	  else echo "warning: missing$$missing (Debian: apt-get install$$missing)"; fi; \
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
