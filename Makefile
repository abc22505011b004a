# Commands that do all the set-up on a fresh machine with only Python:
#   make study     creates .venv, installs mc, runs the main job
#   make test      creates .venv, installs mc with its test extra, runs the fast tests
#   make test-all  the same, every test (multi-process, device-count, statistical): what CI runs
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
N      ?= 200000

.PHONY: study test test-all install install-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# The seed stories, every study at its default size (the calibration and the mix study
# included) and every figure
# (figures/*.pdf, *.png; data under results/). `make study N=200000` sizes the seed stories.
study: install
	$(BIN)/python experiments/run_all.py $(if $(filter command line,$(origin N)),--presets-n $(N))

# Both tiers run on two processes, a test file each at a time. Compiling is most of a
# test's time, so the tests compile with XLA options that shorten it and keep every
# result's bits as users compile them (tests/compile_flags.py says which and what they cost).
test: install-test
	XLA_FLAGS="$$($(BIN)/python tests/compile_flags.py)" $(BIN)/python -m pytest -m "not slow" -n 2 --dist loadfile

# Every test (multi-process, device-count, statistical, end-to-end): what CI runs.
test-all: install-test
	XLA_FLAGS="$$($(BIN)/python tests/compile_flags.py)" $(BIN)/python -m pytest -n 2 --dist loadfile

clean:
	rm -rf $(VENV) build *.egg-info
