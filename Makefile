# Everything runs inside .venv, created on first use from nothing but python3.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed
PY_SRC  = src tests $(wildcard benchmarks) $(wildcard tools)

.PHONY: demo check test lint clean book

$(STAMP): pyproject.toml constraints.txt
	@echo "installing attnlab, torch (CPU) and the developers' tools into $(VENV): about a minute, once"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)  ## the main job: lesson 1 of the attention course, every number computed live
	$(BIN)/attnlab lesson 1

check: $(STAMP)  ## verify every reference function against PyTorch
	$(BIN)/attnlab check

test: $(STAMP)  ## lint, format check, then the whole test suite on every core (pytest-xdist)
	$(BIN)/ruff check $(PY_SRC)
	$(BIN)/ruff format --check $(PY_SRC)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n auto --dist loadgroup  # bytecode cached: see README

book: $(STAMP)  ## the course as a static web book: every lesson in en/ja/zh, into build/book
	$(BIN)/attnlab book build/book --lang all

lint: $(STAMP)
	$(BIN)/ruff check --fix $(PY_SRC)
	$(BIN)/ruff format $(PY_SRC)

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .ruff_cache .hypothesis
