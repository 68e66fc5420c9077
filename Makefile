# The two commands of the README:
#   make run    set everything up, then grade the bundled sample submissions
#   make test   set everything up, lint (make lint: ruff, mypy), then run the whole test suite
# The edit loop, which needs only the venv (no apt, no download, no root):
#   make test-unit   the quick tests that need nothing but the venv
#   make test-fast   those, and the quick sandbox tests
#   make lint        ruff and mypy
#   make docs        the documentation site, warnings as errors, into site/
# Everything they need is installed by the targets below, from PyPI and Debian only.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup lock lint run test test-unit test-fast docs screenshots messages messages-extract messages-update messages-compile mutation bench multilingual compare prompt analyze sandbox-tools report-tools fetch

setup: $(VENV)/.installed sandbox-tools report-tools fetch

# requirements-nbgrader.lock is requirements.lock plus the extras: nbgrader (nbgrader, jsonschema and
# nh3, which the delivery channels' tests need), tools (the instructor's), report (the class report's:
# matplotlib, copydetect), cluster (dask), dev (ruff, mypy, pre-commit, cosmic-ray) and
# docs (mkdocs, mkdocs-material); both pin every package with its
# sha256, and pip checks them (the lock is its own constraints file too: without it pip 23 tries
# an unpinned jsonschema for jupyter-events' jsonschema[format-nongpl] and stops). Then the engine
# and the course helpers install as a package.
$(VENV)/.installed: requirements-nbgrader.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11, 5) else "make setup needs Python 3.11.5 or newer (nbgrader needs it; this is %s): make setup PYTHON=/path/to/python3.11" % sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements-nbgrader.lock \
	  -c requirements-nbgrader.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# Recompile the locks from pyproject.toml (uv keeps the versions already locked unless told
# to upgrade one, e.g. make lock UPGRADE="--upgrade-package hypothesis").
lock:
	$(PYTHON) -m venv .tools && .tools/bin/python -m pip install --quiet uv==0.13.9
	.tools/bin/uv pip compile pyproject.toml -o requirements.lock --generate-hashes --python-version 3.11 \
	  --custom-compile-command "make lock" $(UPGRADE)
	.tools/bin/uv pip compile pyproject.toml --extra nbgrader --extra tools --extra report --extra cluster --extra dev --extra docs -o requirements-nbgrader.lock \
	  --generate-hashes --python-version 3.11.5 --custom-compile-command "make lock" $(UPGRADE)

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

# Debian's chromium: tests/reports/test_class_report.py renders the class report in it (headless) to check
# that the page loads; without it that test is skipped, saying why.
report-tools:
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
	      || echo "warning: could not install chromium; the class report's browser test is skipped"; \
	  else echo "warning: missing chromium (Debian: apt-get install chromium); the class report's browser test is skipped"; fi; \
	fi

fetch: $(VENV)/.installed
	$(BIN)/python -m tokcourse.assets fetch

run: setup
	$(BIN)/python -m autograder demo --out out/demo

# ruff on the whole repository (pyproject's [tool.ruff]) and mypy on the engine (pyproject's
# [tool.mypy]); both are pinned in the dev extra.
lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/mypy

# The whole suite. --require-data: a test whose fetched data is missing fails here (set-up
# fetched it), where elsewhere it is skipped with the command that fetches it. Three processes
# (pytest-xdist) on a 2-core machine: many tests wait (on a call's time limit, a hang, a process
# starting), and the third keeps the cores busy meanwhile. --dist loadgroup keeps the tests of a
# module marked xdist_group on one of them, one after another: those that share a long
# module-scoped fixture, and those that add a user.
test: setup lint
	$(BIN)/python -m pytest --require-data -n 3 --dist loadgroup

# The edit loop. The marks (pyproject's [tool.pytest.ini_options]) say what a test needs beyond
# the venv: sandbox (real workers), data (the fetched files), root, browser; slow marks the long
# runs. Neither target runs the set-up's apt-get or download steps. test-unit is every quick test
# the venv alone can run; test-fast those and the quick sandbox tests.
# Both spread the tests over two processes (pytest-xdist, in the dev extra), and keep the
# compiled tests and engine between runs even where the environment sets PYTHONDONTWRITEBYTECODE:
# compiling them again is a good part of a loop's start.
LOOP := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n 2

test-unit: $(VENV)/.installed
	$(LOOP) -m "not (slow or sandbox or data or root or browser)"

test-fast: $(VENV)/.installed
	$(LOOP) -m "not (slow or data or root or browser)"

# The engine's message catalogs (autograder/i18n.py; Babel is in the dev extra). messages-extract
# writes autograder.pot from the source's marked texts (no line numbers, so that moving code does
# not change it); messages-update merges it into each language's .po, where the new texts wait for
# a translator; messages-compile writes the .mo files grading reads, which are committed (the
# student release and the Gradescope image ship them without Babel). tests/persian/test_message_catalogs.py checks
# all three are done. LOCALES names the languages (make messages-update LOCALES="fa de" starts a de).
LOCALE_DIR := autograder/locale
# the course's own words (the data fetcher's, tokcourse/assets.py), domain tokcourse
COURSE_LOCALE := tokcourse/locale
LOCALES ?= fa
messages: messages-extract messages-update messages-compile

messages-extract: $(VENV)/.installed
	$(BIN)/pybabel extract --no-location --sort-output --omit-header --width 100 -o $(LOCALE_DIR)/autograder.pot autograder
	$(BIN)/pybabel extract --no-location --sort-output --omit-header --width 100 -o $(COURSE_LOCALE)/tokcourse.pot \
	  tokcourse/assets.py

messages-update: $(VENV)/.installed
	for locale in $(LOCALES); do $(BIN)/pybabel update --width 100 --ignore-obsolete --ignore-pot-creation-date \
	  --init-missing -i $(LOCALE_DIR)/autograder.pot -d $(LOCALE_DIR) -D autograder -l $$locale || exit 1; \
	  $(BIN)/pybabel update --width 100 --ignore-obsolete --ignore-pot-creation-date \
	  --init-missing -i $(COURSE_LOCALE)/tokcourse.pot -d $(COURSE_LOCALE) -D tokcourse -l $$locale || exit 1; done

messages-compile: $(VENV)/.installed
	$(BIN)/pybabel compile --statistics -d $(LOCALE_DIR) -D autograder
	$(BIN)/pybabel compile --statistics -d $(COURSE_LOCALE) -D tokcourse

# The Persian pages' screenshots in outputs/persian/, as the browser tests take them.
screenshots: setup
	$(BIN)/python -m pytest -m browser -k "persian" --keep-screenshots=outputs/persian

# The documentation site (mkdocs.yml, docs/), built with warnings as errors into site/.
# NO_MKDOCS_2_WARNING quiets the theme's notice about its successor, which is no build problem.
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Every mutant cosmic-ray's default operators make of the reference solutions, graded by its
# exercise's suite (python -m autograder mutate; `make test` grades a fixed sample of 20). It
# fails on a survivor that suites/equivalent-mutants.yaml does not list. EXERCISES= narrows it.
mutation: setup
	$(BIN)/python -m autograder mutate $(or $(EXERCISES),--all) --jobs $(or $(JOBS),2)

bench: setup
	$(BIN)/python benchmarks/ratio_curve.py
	$(BIN)/python benchmarks/unigram.py
	$(BIN)/python -m autograder bench

# The lesson's real-tokenizer tools (see docs/course-notes.md).
multilingual: setup
	$(BIN)/python -m tokcourse.tools.multilingual --out outputs/multilingual

# BPE, WordPiece and Unigram (ours and sentencepiece's) on the course corpus, measured on the
# rest of Botchan, which --fetch downloads once (pinned by sha256) if it is missing.
compare: setup
	$(BIN)/python -m tokcourse.tools.compare --fetch --out outputs/compare

prompt: setup
	$(BIN)/python -m tokcourse.tools.analyzer --write-prompt outputs/prompt-tokenizer-analyzer.md

analyze: setup  # make analyze TEXT=my.txt BASELINE=english.txt
	$(BIN)/python -m tokcourse.tools.analyzer $(TEXT) $(if $(BASELINE),--baseline-file $(BASELINE))
