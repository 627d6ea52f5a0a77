# Two commands do everything: `make train` and `make test`. Each creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: train test lint format assets benchmark clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU build of torch first (it lies on this kind of machine's disk); a plain `torch`
	# requirement would otherwise pull a multi-GB CUDA build.
	$(BIN)/pip install --quiet "torch==2.13.0" || $(BIN)/pip install --quiet torch --index-url https://download.pytorch.org/whl/cpu
	$(BIN)/pip install --quiet -e ".[dev,video,slurm]"
	touch $(STAMP)

train: $(STAMP)
	$(BIN)/python scripts/train.py $(ARGS)

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -n 2 --dist loadfile $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

assets: $(STAMP)
	$(BIN)/python scripts/build_assets.py

benchmark: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) outputs multirun .pytest_cache .ruff_cache
