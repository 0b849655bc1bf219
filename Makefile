# Two commands on a fresh machine with Python 3 and pip: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test data clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[pocl,test]'
	touch $(STAMP)

data: $(STAMP)
	$(BIN)/python futhark_examples/gen_matmul_data.py

demo: data
	$(BIN)/incflat autotune futhark_examples/matmul.fut

test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto tests

clean:
	rm -rf $(VENV) futhark_examples/data futhark_examples/matmul futhark_examples/*.tuning
