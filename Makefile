# make install: .venv with everything (CPU torch first, so sentence-transformers does not pull a CUDA build)
# make run:     the main job on sample_data/
# make test:    the whole test suite, on every core (pytest-xdist); its `install` tier (tests/test_light_install.py,
#               also `slow`) builds a fresh venv with the light install from the registry: about 70 s, beside the rest
# make test-fast: the fast tier (no seeded statistical tests, no real model, no hostile processes, no install): under a minute
# make install-light: .venv-light with the light install only (no torch: every command but text embeddings; docs/INSTALL.md)
# make typecheck: mypy (strict, configured in pyproject.toml) over the package
# make schema:  docs/schema/*.json, the typed documents' JSON schemas (fit, doctor, evaluate, score, judges, sample), from their types (betaconform_cli/schemas.py)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install install-light run test test-fast lint typecheck bench sample-data schema clean

install: $(STAMP)

# the first `make run` or `make test` installs first (a few minutes, mostly torch): each step says what it does
$(STAMP): pyproject.toml
	@echo "make: first run: creating $(VENV) and installing betaconform with its dependencies (a few minutes, once)"
	$(PYTHON) -m venv $(VENV)
	@echo "make: installing CPU torch 2.13.0 (the largest download, about 2 minutes)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
	@echo "make: installing betaconform and its other dependencies into $(VENV)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)
	@echo "make: installed; next time this step is skipped"

install-light:
	$(PYTHON) -m venv .venv-light
	.venv-light/bin/python -m pip install --quiet --disable-pip-version-check .
	@echo "make: .venv-light/bin/betaconform is ready (source .venv-light/bin/activate puts it on PATH)"

run: install
	$(BIN)/betaconform fit sample_data/

test: install
	$(BIN)/python -m pytest -q -n auto

test-fast: install
	$(BIN)/python -m pytest -q -n auto -m "not slow and not model and not hostile and not install"

lint: install
	$(BIN)/ruff check betaconform_cli tests benchmarks sample_data

typecheck: install
	$(BIN)/mypy betaconform_cli

bench: install
	$(BIN)/python benchmarks/accuracy.py

schema: install
	$(BIN)/python scripts/make_schema.py

sample-data: install
	$(BIN)/python sample_data/make_sample_data.py

clean:
	rm -rf $(VENV) .venv-light build *.egg-info
