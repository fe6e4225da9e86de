# make install: .venv with everything (CPU torch first, so sentence-transformers does not pull a CUDA build)
# make run:     the main job on sample_data/
# make test:    the whole test suite, on every core (pytest-xdist; --dist worksteal: a worker that runs out takes half
#               of the other's queue, so neither finishes alone), longest tests first; its `install` tier
#               (tests/test_light_install.py, also `slow`) builds a fresh venv with the light install from the
#               registry with uv (seconds; pip without uv). Budget: 4 minutes on 2 quiet cores; measured 2 min 59 s (docs/TESTING.md)
# make test-fast: the fast tier (no seeded statistical tests, no real model, no hostile processes, no install, no Spark,
#               no browser, no fresh-interpreter import checks):
#               budget one minute on 2 quiet cores; measured 46 s (docs/TESTING.md)
# make install-light: .venv-light with the light install only (no torch: every command but text embeddings; docs/INSTALL.md)
# make test-spark: the Spark tier alone (the published vote-pattern SQL on pyspark in local mode; Java 17+)
# make typecheck: mypy (strict, configured in pyproject.toml) over the package
# make schema:  docs/schema/*.json, the typed documents' JSON schemas (fit, doctor, evaluate, score, judges, sample), from their types (betaconform_cli/schemas.py)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install install-light run test test-fast test-spark lint typecheck bench sample-data schema clean

install: $(STAMP)

# the first `make run` or `make test` installs first; each step says what it does and how long it took when measured
# (these steps timed one by one into a fresh venv, no pip cache, wheels from a local mirror, on a 2-core machine under
# a load of ~16: venv 16 s, torch 1.7 min, the rest 13.7 min; 1.9 GB installed); downloads add to it at your speed
$(STAMP): pyproject.toml
	@echo "make: first run: creating $(VENV) and installing betaconform with its dependencies (once: measured 16 minutes on a busy 2-core machine; a quiet one is faster)"
	$(PYTHON) -m venv $(VENV)
	@echo "make: installing CPU torch 2.13.0 (a 190 MB wheel, 750 MB installed: measured 1.7 minutes, plus its download)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
	@echo "make: installing betaconform and its other dependencies into $(VENV) (the longest step: measured 14 minutes on a busy 2-core machine)"
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
	$(BIN)/python -m pytest -q -n auto --dist worksteal

test-fast: install
	$(BIN)/python -m pytest -q -n auto --dist worksteal -m "not slow and not model and not hostile and not install and not spark and not browser and not process"

test-spark: install
	$(BIN)/python -m pytest -q -m spark

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
