# fluid server - top-level build.  `make` builds everything, `make test` runs
# every test, `make bench` runs the benchmarks, `make run` serves the client.
# Each target first runs scripts/deps.sh, which installs missing Debian packages.

CC      ?= cc
BUILD   ?= build
WARN     = -std=c11 -Wall -Wextra -Wpedantic -Wshadow
DEFS     = -D_POSIX_C_SOURCE=200809L
# No -ffast-math: the step checks for NaN/inf and must keep IEEE semantics.
OPT     ?= -O3 -fno-math-errno -fno-trapping-math -fopenmp-simd -g
SAN      = -O1 -g -fopenmp-simd -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
# ThreadSanitizer (gcc's libtsan): the threaded code, i.e. the server and the sim's worker pool.
TSAN     = -O1 -g -fopenmp-simd -fno-omit-frame-pointer -fsanitize=thread
CFLAGS_ALL = $(WARN) $(DEFS) $(CFLAGS)
LDLIBS_SIM = -lpthread -lm

SIM_SRC  = $(wildcard server/sim/*.c)
SIM_HDR  = $(wildcard server/sim/*.h)
TEST_SIM_SRC = $(wildcard tests/sim/*.c) tests/testlib.c
TEST_HDR = tests/testlib.h $(wildcard tests/sim/*.h)

.PHONY: all deps deps-test sim test test-sim bench run clean
all: deps sim

deps:
	@bash scripts/deps.sh build
deps-test:
	@bash scripts/deps.sh test

sim: $(BUILD)/libfluidsim.a

$(BUILD)/sim/%.o: server/sim/%.c $(SIM_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(OPT) -Iserver/sim -c $< -o $@

$(BUILD)/libfluidsim.a: $(patsubst server/sim/%.c,$(BUILD)/sim/%.o,$(SIM_SRC))
	@rm -f $@
	ar rcs $@ $^

# Test binaries: one optimised, one under AddressSanitizer + UBSan.
$(BUILD)/test_sim: $(TEST_SIM_SRC) $(TEST_HDR) $(BUILD)/libfluidsim.a
	$(CC) $(CFLAGS_ALL) $(OPT) -Iserver/sim -Itests $(TEST_SIM_SRC) $(BUILD)/libfluidsim.a $(LDLIBS_SIM) -o $@

$(BUILD)/test_sim_san: $(TEST_SIM_SRC) $(TEST_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) -Iserver/sim -Itests $(TEST_SIM_SRC) $(SIM_SRC) $(LDLIBS_SIM) -o $@

$(BUILD)/test_sim_tsan: $(TEST_SIM_SRC) $(TEST_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(TSAN) -Iserver/sim -Itests $(TEST_SIM_SRC) $(SIM_SRC) $(LDLIBS_SIM) -o $@

$(BUILD)/bench_sim: tests/bench/bench_sim.c tests/bench/bench_util.h $(BUILD)/libfluidsim.a
	$(CC) $(CFLAGS_ALL) $(OPT) -Iserver/sim $< $(BUILD)/libfluidsim.a $(LDLIBS_SIM) -o $@

# What a 100,000-triangle mesh obstacle adds to the 20k dam break's step (tests/bench/bench_meshes.c)
$(BUILD)/bench_meshes: tests/bench/bench_meshes.c tests/bench/bench_util.h $(BUILD)/libfluidsim.a
	$(CC) $(CFLAGS_ALL) $(OPT) -Iserver/sim $< $(BUILD)/libfluidsim.a $(LDLIBS_SIM) -o $@
.PHONY: bench-meshes
bench-meshes: $(BUILD)/bench_meshes
	$(BUILD)/bench_meshes
EXTRA_BENCH_DEPS += $(BUILD)/bench_meshes
EXTRA_BENCH += $(BUILD)/bench_meshes ;

# What the probes cost: spheric2 with its 12 probes against none, each solver (tests/bench/bench_probes.c)
$(BUILD)/bench_probes: tests/bench/bench_probes.c tests/bench/bench_util.h $(BUILD)/libfluidsim.a
	$(CC) $(CFLAGS_ALL) $(OPT) -Iserver/sim $< $(BUILD)/libfluidsim.a $(LDLIBS_SIM) -o $@
.PHONY: bench-probes
bench-probes: $(BUILD)/bench_probes
	$(BUILD)/bench_probes
EXTRA_BENCH_DEPS += $(BUILD)/bench_probes
EXTRA_BENCH += $(BUILD)/bench_probes ;

# SPHERIC Test 2 (the dam break on a box) against the measurements, each solver at 20k and 60k particles over 6 s
# (tests/bench/bench_spheric2.c; BENCH_N, BENCH_SECONDS, BENCH_SERIES=DIR for the series to plot).  Hours of CPU:
# not part of `make bench`.
$(BUILD)/bench_spheric2: tests/bench/bench_spheric2.c $(BUILD)/libfluidsim.a
	$(CC) $(CFLAGS_ALL) $(OPT) -Iserver/sim $< $(BUILD)/libfluidsim.a $(LDLIBS_SIM) -o $@
.PHONY: bench-spheric
bench-spheric: $(BUILD)/bench_spheric2
	nice -n 19 $(BUILD)/bench_spheric2 clavet unified mps

TEST_SUITES = $(BUILD)/test_sim
# The same tests under ASan + UBSan, but for six that run long there (70, 46,
# 24, 14, 14 and 9 s of CI's 45 minutes) and reach no code the others do not:
# every scene stepped twice on 1 to 4 threads, floating boxes settling for 5 s,
# the two relaxations compared over a dam break, and the density and momentum
# balances of the solver the other tests step.  test_sim runs them optimised.
EXTRA_TEST_DEPS += $(BUILD)/test_sim_san
EXTRA_TESTS += "$(BUILD)/test_sim_san -determinism_threads -bodies_buoyancy -sequential_vs_jacobi -density_pool \
	-angular_momentum_relaxation -linear_momentum"
# The sim core's worker pool under ThreadSanitizer: every scene (every solver's
# parallel tasks) on 2 threads, and two worlds stepping at once on one pool.
# TSan exits 66 when it reported anything.
EXTRA_TEST_DEPS += $(BUILD)/test_sim_tsan
EXTRA_TESTS += "TSAN_OPTIONS='halt_on_error=0 exitcode=66' $(BUILD)/test_sim_tsan threads_every_scene shared_pool pool_every_item_once"

# The built-in scenes' meshes (server/sim/scene_meshes.c and .h, examples/meshes/*.stl)
# are what scripts/make_scene_meshes.py writes.
EXTRA_TESTS += "python3 scripts/make_scene_meshes.py --check"

# The server (server/server.mk) and the web client add their own targets and
# extend EXTRA_TESTS / EXTRA_TEST_DEPS / EXTRA_BENCH.  Included here, before
# the rules below use those variables as prerequisites (expanded when read).
-include server/server.mk
-include tests/soak/soak.mk
-include tests/fuzz/fuzz.mk
-include web-client/client.mk
-include clients/python/python.mk
-include docker/docker.mk
-include tests/layering/layering.mk

# Each suite prints "N passed, N failed"; scripts/run-tests.sh runs them all
# and closes with the total.
test: deps-test $(TEST_SUITES) $(EXTRA_TEST_DEPS)
	@bash scripts/run-tests.sh $(TEST_SUITES) $(EXTRA_TESTS)

test-sim: $(BUILD)/test_sim
	@$(BUILD)/test_sim

bench: deps $(BUILD)/bench_sim $(EXTRA_BENCH_DEPS)
	$(BUILD)/bench_sim
	$(EXTRA_BENCH)

clean:
	rm -rf $(BUILD)
