# The README's two commands: `make reports` and `make test`.
# Both build the environment when it is missing (so does `make docs`, the documentation site): an active conda environment that
# already has dpstats installed is reused; otherwise a local .venv is created with
# `python3 -m venv` and reused afterwards (rebuilt when pyproject.toml changes).

SHELL := /bin/bash
PYTHON3 ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

CONDA_READY := $(shell [ -n "$$CONDA_PREFIX" ] && python -c "import dpstats, papermill, nbval, pytest, sphinx" 2>/dev/null && echo yes)
ifeq ($(CONDA_READY),yes)
PY := python
ENV_TARGET :=
else
PY := $(VENV)/bin/python
ENV_TARGET := $(STAMP)
endif

.PHONY: env test docs reports bench lint clean

env: $(ENV_TARGET)

$(STAMP): pyproject.toml
	$(PYTHON3) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[notebooks,test,docs,tables,dask]'
	touch $@

# The site first (tests/test_docs_site.py opens every page of it in headless Chromium), then the unit,
# statistical, audit and CLI tests, then nbval executes every notebook with its quick defaults. Both run on every
# core (pytest-xdist: -n auto); a module whose module-scoped fixture is expensive is kept on one worker
# (xdist_group, --dist loadgroup), a notebook's cells on one worker in order (--dist loadfile).
test: env docs
	MPLBACKEND=Agg $(PY) -m pytest -q -n auto --dist loadgroup tests
	MPLBACKEND=Agg $(PY) -m pytest -q -p no:cacheprovider -n auto --dist loadfile --nbval-lax notebooks

# The documentation site from the committed report (never executes a notebook); -W: any warning, e.g. a broken
# cross-reference, fails the build. Generated pages go to docs/generated/, the site to docs/_build/html.
docs: env
	$(PY) -m sphinx -q -W --keep-going -b html docs docs/_build/html

reports: env
	MPLBACKEND=Agg $(PY) -m dpstats report --profile full

# Benchmarks run in their own environment: the peers (diffprivlib 0.6.6 needs scikit-learn < 1.8 and
# scipy < 1.18) must not pin the runtime back.
BENCH_VENV := .venv-bench
$(BENCH_VENV)/.installed: pyproject.toml
	$(PYTHON3) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -e '.[bench,dask]'
	touch $@

bench: $(BENCH_VENV)/.installed
	$(BENCH_VENV)/bin/python -m benchmarks

lint: env
	$(PY) -m ruff check dpstats tests benchmarks notebooks docs
	$(PY) -m ruff format --check dpstats tests benchmarks notebooks docs

clean:
	rm -rf $(VENV) $(BENCH_VENV) build *.egg-info .pytest_cache docs/_build docs/generated
