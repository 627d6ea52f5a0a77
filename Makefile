# Two commands do everything: `make train` and `make test`. Each creates .venv when it is missing.
# While editing: `make test-fast` (ruff + the tests not marked slow, under 2 minutes on 2 cores), or
# `make test-core ARGS="tests/envs -k g20"` (ruff + pytest, no Isaac Lab venv, no docs build).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: train test test-core test-fast docs lint format assets benchmark clean isaaclab-venv isaaclab-test isaaclab-assets

# The Isaac Lab 3 backend lives in its own Python 3.12 venv (requirements-isaaclab.txt says why).
# The first Python 3.12 that runs (a pyenv shim named python3.12 may exist and refuse to).
ISAACLAB_PYTHON ?= $(firstword $(foreach p,python3.12 $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12),\
	$(shell $(p) -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null && echo $(p))))
ISAACLAB_VENV := .venv-isaaclab
ISAACLAB_BIN := $(ISAACLAB_VENV)/bin
ISAACLAB_STAMP := $(ISAACLAB_VENV)/.installed
# Warp compiles its kernels on first use (about 2 minutes on 2 cores); a cache kept between runs skips that.
export WARP_CACHE_PATH ?= $(HOME)/.cache/dexwheel/warp

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU build of torch first (it lies on this kind of machine's disk); a plain `torch`
	# requirement would otherwise pull a multi-GB CUDA build.
	$(BIN)/pip install --quiet "torch==2.13.0" || $(BIN)/pip install --quiet torch --index-url https://download.pytorch.org/whl/cpu
	$(BIN)/pip install --quiet -e ".[dev,video,slurm,bridge,docs]"
	touch $(STAMP)

# dexwheel reaches the Isaac Lab venv as source through a .pth file: a package install would pull the
# core dependencies (mujoco 4) into it.
$(ISAACLAB_STAMP): requirements-isaaclab.txt
	@echo "isaaclab-venv: building $(ISAACLAB_VENV) from requirements-isaaclab.txt (Isaac Lab 3: about 7.8 GB, 2-3 minutes; make test-core and test-fast never build it)"
	@test -n "$(ISAACLAB_PYTHON)" || { echo "isaaclab-venv: no Python 3.12 found; set ISAACLAB_PYTHON=/path/to/python3.12"; exit 1; }
	test -d $(ISAACLAB_VENV) || $(ISAACLAB_PYTHON) -m venv $(ISAACLAB_VENV)
	# without the source .pth while pip checks: through it pip would see the core package's metadata
	# (dexwheel.egg-info, written by the core venv's editable install) and its core requirements
	rm -f "$$($(ISAACLAB_BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/dexwheel_source.pth"
	$(ISAACLAB_BIN)/pip install --quiet --upgrade pip
	$(ISAACLAB_BIN)/pip install --quiet -r requirements-isaaclab.txt
	$(ISAACLAB_BIN)/pip check
	echo "$(CURDIR)" > "$$($(ISAACLAB_BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/dexwheel_source.pth"
	touch $(ISAACLAB_STAMP)

isaaclab-venv: $(ISAACLAB_STAMP)

train: $(STAMP)
	$(BIN)/python scripts/train.py $(ARGS)

# What CI runs: the core suite, the docs build, then the Isaac Lab tests (building .venv-isaaclab first when it is
# missing or older than requirements-isaaclab.txt: about 7.8 GB, 2-3 minutes).
test: test-core
	$(MAKE) docs
	$(MAKE) isaaclab-test

# The fast edit loop: ruff + pytest in .venv only (never builds or runs the Isaac Lab venv).
test-core: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	tests/loopback_only.sh $(BIN)/pytest -n 2 --dist loadfile $(ARGS)

# The fast tier a contributor runs while editing: every core test but those marked slow (docs/how-to/contribute.md).
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	tests/loopback_only.sh $(BIN)/pytest -n 2 --dist loadfile -m "not slow" $(ARGS)

# The documentation site (mkdocs.yml, docs/) into site/; --strict makes broken links and anchors errors.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Isaac Lab tests on the CPU (the cross-backend test also runs the MuJoCo half in .venv).
isaaclab-test: $(STAMP) $(ISAACLAB_STAMP)
	mkdir -p $(WARP_CACHE_PATH)
	tests/loopback_only.sh $(ISAACLAB_BIN)/pytest tests/isaaclab -q -p no:dash -n 2 --dist loadfile $(ISAACLAB_ARGS)  # dash: a pytest plugin isaaclab brings

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

assets: $(STAMP)
	$(BIN)/python scripts/build_assets.py

# The USD files under assets/ from the committed URDFs (after `make assets` changed a URDF).
isaaclab-assets: $(ISAACLAB_STAMP)
	$(ISAACLAB_BIN)/python scripts/build_usd.py

benchmark: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(ISAACLAB_VENV) outputs multirun site .pytest_cache .ruff_cache
