# tests/soak/soak.mk - the soak test: the ASan + UBSan + LSan server
# under churn, non-reading clients, garbage, REST load and slowloris at once.
# Included by the top-level Makefile after server/server.mk (which builds
# $(BUILD)/fluid-server-san and installs tests/server/node_modules).
#   make soak    the benchmark: 5 minutes (SOAK_DURATION=seconds to change),
#                the test's checks and the rate bars (--bench,
#                tests/soak/bench_bars.mjs)
#   make test    runs the test mode for 60 seconds: only what does not depend
#                on the machine's speed (no rate or latency is checked)
# Logs (server stderr, RSS samples): $(BUILD)/soak/, $(BUILD)/soak-short/.

SOAK_DURATION ?= 300
SOAK_RUN = node tests/soak/soak.mjs --binary $(BUILD)/fluid-server-san

.PHONY: soak
soak: deps-test $(BUILD)/fluid-server-san tests/server/node_modules/.installed
	$(SOAK_RUN) --bench --duration $(SOAK_DURATION) --log $(BUILD)/soak

EXTRA_TEST_DEPS += $(BUILD)/fluid-server-san tests/server/node_modules/.installed
EXTRA_TESTS += "$(SOAK_RUN) --duration 60 --log $(BUILD)/soak-short"
