# tests/layering/layering.mk - the layering and shape checks of server/ and
# web-client/src/ (STYLE.md "Layers" and "Checks"), their tests, and the C
# format.  Included by the top-level Makefile after server/server.mk
# (which defines SRV_OBJ, the server's object files).
#
#   make check-layers   the checks on this tree: includes (layers, libwebsockets
#                       only in server/net/, no include circles), calls between
#                       the object files (no circles), function lengths and
#                       first-line comments
#   make test           the same, and test_checks.py (the checks on small trees
#                       broken on purpose)
#   make check-timing   no test under tests/ asserts a duration, a rate or a
#                       latency (benchmarks are exempt; check_timing.py)
#   make check-history  no session or issue number in source comments, tests
#                       and the reference docs, and no date outside the
#                       measurement records (history is docs/history/;
#                       check_history.py)
#   make format         applies .clang-format to server/, tests/ and web-client/wasm/ (C)
#   make check-format   fails if any of those files is not formatted

LAYER_OBJ = $(patsubst server/sim/%.c,$(BUILD)/sim/%.o,$(SIM_SRC)) $(SRV_OBJ)
CHECK_LAYERS = python3 tests/layering/check_layers.py . --objects $(LAYER_OBJ)
CHECK_SHAPE = python3 tests/layering/check_shape.py .
CHECK_TIMING = python3 tests/layering/check_timing.py .
CHECK_HISTORY = python3 tests/layering/check_history.py .

.PHONY: check-layers check-timing check-history format check-format
check-timing:
	@$(CHECK_TIMING)
check-history:
	@$(CHECK_HISTORY)
check-layers: $(LAYER_OBJ)
	@$(CHECK_LAYERS); a=$$?; $(CHECK_SHAPE); b=$$?; [ $$a -eq 0 ] && [ $$b -eq 0 ]

EXTRA_TEST_DEPS += $(LAYER_OBJ)
EXTRA_TESTS += "python3 tests/layering/test_checks.py" "$(CHECK_LAYERS)" "$(CHECK_SHAPE)" "$(CHECK_TIMING)" "$(CHECK_HISTORY)"

# clang-format 14 (Debian bookworm's); other versions may lay out a few
# constructs differently.  node_modules (npm packages) is not ours.
FORMAT_SRC = $(shell find server tests web-client/wasm -name node_modules -prune -o \( -name '*.c' -o -name '*.h' \) -print)
format:
	clang-format -i $(FORMAT_SRC)
check-format:
	@n=0; for f in $(FORMAT_SRC); do clang-format --dry-run -Werror "$$f" >/dev/null 2>&1 || { echo "not formatted: $$f (make format)"; n=$$((n + 1)); }; done; \
	echo "check-format: $$(( $(words $(FORMAT_SRC)) - n )) passed, $$n failed"; [ $$n -eq 0 ]

# make test: every C file laid out by .clang-format.
EXTRA_TESTS += "$(MAKE) -s --no-print-directory check-format"
