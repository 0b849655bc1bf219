# Two commands on a fresh machine with Python 3 and pip: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Where tests/cpu_opencl.py registered Intel's OpenCL CPU runtime (PoCL's compiler does not know every
# processor), the programs must find it: expanded when a recipe runs, after the environment is made.
OPENCL_ENV = $(if $(wildcard $(VENV)/etc/OpenCL/vendors/*.icd),OCL_ICD_VENDORS=$(abspath $(VENV))/etc/OpenCL/vendors)

.PHONY: demo test data clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[pocl,test]'
	$(BIN)/python tests/cpu_opencl.py
	touch $(STAMP)

data: $(STAMP)
	$(BIN)/python futhark_examples/gen_matmul_data.py

demo: data
	$(OPENCL_ENV) $(BIN)/incflat autotune futhark_examples/matmul.fut

test: $(STAMP)
	$(OPENCL_ENV) $(BIN)/python -m pytest -q -n auto tests

clean:
	rm -rf $(VENV) futhark_examples/data futhark_examples/matmul futhark_examples/*.tuning
