# tests/soak/soak.mk - the soak test (issue 13): the ASan + UBSan + LSan server
# under churn, non-reading clients, garbage, REST load and slowloris at once.
# Included by the top-level Makefile after server/server.mk (which builds
# $(BUILD)/fluid-server-san and installs tests/server/node_modules).
#   make soak                      5 minutes (SOAK_DURATION=seconds to change)
#   make test                      runs the 60-second version
# Logs (server stderr, RSS samples): $(BUILD)/soak/, $(BUILD)/soak-short/.

SOAK_DURATION ?= 300
SOAK_RUN = node tests/soak/soak.mjs --binary $(BUILD)/fluid-server-san

.PHONY: soak
soak: deps-test $(BUILD)/fluid-server-san tests/server/node_modules/.installed
	$(SOAK_RUN) --duration $(SOAK_DURATION) --log $(BUILD)/soak

EXTRA_TEST_DEPS += $(BUILD)/fluid-server-san tests/server/node_modules/.installed
EXTRA_TESTS += "$(SOAK_RUN) --duration 60 --log $(BUILD)/soak-short"
