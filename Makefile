# make install: .venv with everything (CPU torch first, so sentence-transformers does not pull a CUDA build)
# make run:     the main job on sample_data/
# make test:    the whole test suite, on every core (pytest-xdist)
# make test-fast: the fast tier (no seeded statistical tests, no real model, no hostile processes): under a minute
# make typecheck: mypy (strict, configured in pyproject.toml) over the package
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test test-fast lint typecheck bench sample-data clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

run: install
	$(BIN)/betaconform fit sample_data/

test: install
	$(BIN)/python -m pytest -q -n auto

test-fast: install
	$(BIN)/python -m pytest -q -n auto -m "not slow and not model and not hostile"

lint: install
	$(BIN)/ruff check betaconform_cli tests benchmarks sample_data

typecheck: install
	$(BIN)/mypy betaconform_cli

bench: install
	$(BIN)/python benchmarks/accuracy.py

sample-data: install
	$(BIN)/python sample_data/make_sample_data.py

clean:
	rm -rf $(VENV) build *.egg-info
