# clients/python/python.mk - the Python client (clients/python/, package
# fluidclient): the project's v2 frame decoder as a shared library for its
# ctypes binding, and its tests (tests/python/, pytest against a live
# server).  Included by the top-level Makefile after server/server.mk (which
# defines FC_DEC_SRC and FC_HDR, the decoder's files).

# Debian's interpreter: it has python3-numpy and python3-pytest (a pyenv or
# venv python3 first on PATH may have neither).
PY_CLIENT_PYTHON ?= $(shell [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
FC_LIB = $(BUILD)/libfluidcodec.so
FC_FFI = server/wire/frame_ffi.c

.PHONY: python-client test-python
all: $(FC_LIB)
python-client: $(FC_LIB)

# The decoder's files and the stable entry point of frame_ffi.h, nothing
# else: the same code the wasm build, the C tests and the fuzzers take.
$(FC_LIB): $(FC_FFI) server/wire/frame_ffi.h $(FC_DEC_SRC) $(FC_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(OPT) -fPIC -shared -Iserver/wire $(FC_FFI) $(FC_DEC_SRC) -lm -o $@

PY_TEST_ENV = FLUID_SERVER=$(BUILD)/fluid-server FLUID_REC=$(BUILD)/fluid-rec FLUID_CODEC_LIB=$(CURDIR)/$(FC_LIB)
test-python: $(FC_LIB) $(BUILD)/fluid-server $(BUILD)/fluid-rec
	$(PY_TEST_ENV) $(PY_CLIENT_PYTHON) tests/python/run.py

EXTRA_TEST_DEPS += $(FC_LIB) $(BUILD)/fluid-server $(BUILD)/fluid-rec
EXTRA_TESTS += "$(PY_TEST_ENV) $(PY_CLIENT_PYTHON) tests/python/run.py"

# Its benchmark (tests/bench/bench_python.py): the stream's decode through the
# package against the C decoder alone, and particles() against paging the
# JSON view, at 100k particles on a live server (BENCHMARKS.md).
.PHONY: bench-python
bench-python: $(FC_LIB) $(BUILD)/fluid-server
	$(PY_TEST_ENV) $(PY_CLIENT_PYTHON) tests/bench/bench_python.py
EXTRA_BENCH += $(PY_TEST_ENV) $(PY_CLIENT_PYTHON) tests/bench/bench_python.py ;
EXTRA_BENCH_DEPS += $(FC_LIB) $(BUILD)/fluid-server
