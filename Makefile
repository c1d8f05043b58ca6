# t10-xdsl developer targets.  Everything runs from the project venv in .venv, which is
# (re)built only when pyproject.toml changes (stamp file .venv/.installed).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BUILD  := build

.PHONY: venv demo test lint typecheck bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(STAMP)

# End-to-end: generate the example MLP, compile it for the IPU MK2, simulate, check numerics.
demo: venv
	mkdir -p $(BUILD)
	$(BIN)/python -m t10.examples mlp -o $(BUILD)/mlp.onnx
	$(BIN)/t10 run $(BUILD)/mlp.onnx --chip ipu-mk2 --check

test: venv
	$(BIN)/lit -v tests/filecheck
	$(BIN)/pytest -q tests/unit

lint: venv
	$(BIN)/ruff check .

# pyright as configured in pyproject.toml (standard for the package, strict for the core layer and
# the dialects); the first run fetches pyright itself from the npm registry.
typecheck: venv
	$(BIN)/pyright --project .

bench: venv
	$(BIN)/t10 bench --quick --out $(BUILD)/bench
	$(BIN)/python benchmarks/matmul_plans.py
	$(BIN)/python benchmarks/plan_quality.py
	$(BIN)/python benchmarks/simulator_speed.py
	$(BIN)/python benchmarks/model_plans.py bert-base --batch 8 --seq 128

clean:
	rm -rf $(BUILD)
