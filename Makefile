# `make lab`: set up and open the workbench.  `make demo`: the teaching dashboard
# (Voilà).  `make test`: set up, lint and run every
# law and component (the fast tier).  `make audit`: the long random-candidate audits.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: lab demo test audit bench gpu clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.lab: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[lab,test]'
	touch $@

# Debian's chromium for the browser test (root with apt only; the test skips
# cleanly without it).
$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@[ -x /usr/bin/chromium ] || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
		apt-get install -y -qq chromium >/dev/null 2>&1 || \
		(apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1) || \
		echo "chromium not installed: the browser test will be skipped"
	touch $@

lab: $(VENV)/.lab
	$(BIN)/jupyter lab --ip=127.0.0.1 $(ROOT_FLAG) --ServerApp.root_dir=. \
		--LabApp.default_url=/lab/tree/notebooks/00_explorer.ipynb

# The teaching dashboard: the explorer without code cells (Voilà), a kernel and
# sizes picker and a guided walk-through, on http://127.0.0.1:8866/ (docs/demo.md).
demo: $(VENV)/.lab
	$(BIN)/voila notebooks/demo.ipynb --no-browser --Voila.ip=127.0.0.1 --port=8866 \
		--show_tracebacks=True

# --timeout: a test stuck past 15 minutes fails with its stack instead of
# holding the run to CI's limit.
test: $(VENV)/.test
	$(BIN)/ruff check workbench widgets tests benchmarks
	$(BIN)/python -m pytest -n 2 --dist loadfile --durations=15 --timeout 900

# 200 random fixed candidates per thesis kernel: numpy checks, bounds along
# the descents, CPU runs; the statistical tests; ten times the hypothesis
# examples of every law.
audit: $(VENV)/.test
	$(BIN)/python -m pytest -n 2 --dist loadfile --audit -m "audit or drawn or law" --durations=15

# The GPU campaign (issue 21), the first thing to run on a machine with an NVIDIA
# GPU: CuPy for the CUDA that nvcc reports, then `campaign --backend cuda` within
# MINUTES; its data lands in data/gpu/<device>/ (commit it).
MINUTES ?= 25
CUDA_MAJOR = $(shell nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
gpu: $(VENV)/.test
	@$(BIN)/python -c "import cupy" 2>/dev/null || $(BIN)/python -m pip install --quiet \
		cupy-cuda$(or $(CUDA_MAJOR),12)x || echo "CuPy not installed: the campaign will say no device"
	$(BIN)/python -m workbench campaign --backend cuda --minutes $(MINUTES)

bench: $(VENV)/.test
	$(BIN)/python benchmarks/bench_propagation.py
	$(BIN)/python benchmarks/bench_bound.py
	$(BIN)/python benchmarks/bench_volume.py

clean:
	rm -rf $(VENV) *.egg-info
