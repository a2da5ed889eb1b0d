# tests/fuzz/fuzz.mk - libFuzzer harnesses of every decoder of untrusted
# input, built with Debian's clang (ASan + UBSan, float-cast-overflow
# included).  Included by the top-level Makefile after server/server.mk
# (which defines SRV_CFLAGS, SRV_LIBS, SRV_HDR).  docs/fuzzing.md has the
# figures of the long runs.
#
#   make fuzz                 every harness for FUZZ_SECONDS (default 600) each
#   make fuzz FUZZ=fuzz_rest  one harness
#   make test                 each harness for FUZZ_SMOKE_SECONDS (default 10)
#                             and every past reproducer replayed
#
# Declaring a harness takes one line:
#
#   $(eval $(call fuzz_harness,NAME,SOURCES[,UNGUIDED]))
#
# NAME is tests/fuzz/NAME.c (it defines LLVMFuzzerTestOneInput); SOURCES are
# the project's .c files it calls (compiled once each, instrumented, into
# $(BUILD)/fuzz/obj/); $(FUZZ_SIM) is the simulation core, instrumented.
# UNGUIDED (optional) are .c files compiled with the same sanitizers but
# without coverage instrumentation (into $(BUILD)/fuzz/obj-nocov/): hot loops
# whose coverage does not guide the fuzzer toward anything and only slows each
# execution (fuzz_snapshot steps the solvers; $(FUZZ_SIM_HOT) lists them and
# $(FUZZ_SIM_COLD) is the rest of the core).
# Optional, by convention: tests/fuzz/corpus/NAME/ (seeds, kept in the repo),
# tests/fuzz/NAME.dict (libFuzzer dictionary), tests/fuzz/NAME.options (extra
# libFuzzer flags, one line, e.g. -max_len=20000), tests/fuzz/crashes/NAME/
# (past reproducers: each is replayed by `make test` and must not crash).
# FUZZ_LIBS_NAME (optional): libraries the harness itself links besides
# $(SRV_LIBS) (fuzz_invite: OpenSSL's HMAC, to sign the tokens it builds).
# tests/fuzz/run.sh runs them; a crash fails the run and is kept in
# $(BUILD)/fuzz/crashes/NAME/.

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_SAN = -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
# -Wno-pass-failed: at -O1 under the sanitizers clang cannot honour the core's
# "omp simd" hints and says so; the hints are for speed only.
FUZZ_CFLAGS = $(WARN) $(DEFS) -g -O1 -fno-omit-frame-pointer -fopenmp-simd -Wno-pass-failed $(FUZZ_SAN) $(SRV_CFLAGS) -Itests/fuzz
FUZZ_SIM = $(SIM_SRC)
# The codecs, the command value and queue, and what they use.
FUZZ_WIRE = server/wire/wire.c server/wire/mp_reader.c server/wire/validate.c $(wildcard server/hub/*.c) server/base/msgbuf.c server/base/log.c
FUZZ_SIM_HOT = $(wildcard server/sim/clavet*.c) $(addprefix server/sim/,grid.c mps.c unified.c kernels.c sparse.c pool.c)
FUZZ_SIM_COLD = $(filter-out $(FUZZ_SIM_HOT),$(SIM_SRC))
FUZZ_NAMES =

$(BUILD)/fuzz/obj/%.o: %.c $(SRV_HDR) $(SIM_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(BUILD)/fuzz/obj-nocov/%.o: %.c $(SRV_HDR) $(SIM_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

fuzz_objs = $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(1)) $(patsubst %.c,$(BUILD)/fuzz/obj-nocov/%.o,$(2))
define fuzz_harness
FUZZ_NAMES += $(1)
$(BUILD)/fuzz/$(1): tests/fuzz/$(1).c $(wildcard tests/fuzz/$(1).h) tests/fuzz/fuzz_check.h $(call fuzz_objs,$(2),$(3))
	@mkdir -p $$(dir $$@)
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) -fsanitize=fuzzer $$< $(call fuzz_objs,$(2),$(3)) $$(SRV_LIBS) $$(LDLIBS_SIM) $$(FUZZ_LIBS_$(1)) -o $$@
endef

# ---- The harnesses ----------------------------------------------------------
$(eval $(call fuzz_harness,fuzz_ws_command,$(FUZZ_WIRE) $(FUZZ_SIM)))
$(eval $(call fuzz_harness,fuzz_rest,server/wire/rest_route.c server/wire/export.c server/wire/fmt_num.c $(FUZZ_WIRE) $(FUZZ_SIM)))
$(eval $(call fuzz_harness,fuzz_config,server/base/config.c server/base/log.c))
$(eval $(call fuzz_harness,fuzz_snapshot,server/wire/persist_doc.c $(FUZZ_WIRE) $(FUZZ_SIM_COLD),$(FUZZ_SIM_HOT)))
$(eval $(call fuzz_harness,fuzz_frame_decode,$(FC_SRC)))
$(eval $(call fuzz_harness,fuzz_bus,server/wire/bus_codec.c server/wire/bus_http.c server/wire/obstacle_mesh.c server/wire/rest_route.c server/wire/export.c server/wire/fmt_num.c $(FUZZ_WIRE) $(FUZZ_SIM)))
# the invite tokens (libjwt, linked uninstrumented through SRV_LIBS)
FUZZ_LIBS_fuzz_invite = $(CRYPTO_LIBS)
$(eval $(call fuzz_harness,fuzz_invite,server/wire/invite.c server/hub/roles.c server/hub/room_name.c))
# a fleet's directory: node records, room claims and keys read from the broker's bucket;
# its heartbeats and their acknowledgements
$(eval $(call fuzz_harness,fuzz_fleet,server/wire/fleet_doc.c server/wire/fleet_alive.c server/hub/roles.c server/hub/room_name.c))
# a room's settings kept beside its world (room.json, read at start)
$(eval $(call fuzz_harness,fuzz_room_doc,server/wire/room_doc.c server/hub/roles.c))
$(eval $(call fuzz_harness,fuzz_recording,server/wire/recfile.c $(FC_SRC) $(FUZZ_WIRE) $(FUZZ_SIM)))
# the mesh loader (its OBJ reader; Assimp, linked uninstrumented through SRV_LIBS) and the core's mesh checks
$(eval $(call fuzz_harness,fuzz_mesh,server/wire/mesh_load.c server/wire/obj_read.c server/wire/glb_check.c server/sim/mesh.c server/sim/mesh_mass.c))

FUZZ ?= $(FUZZ_NAMES)
FUZZ_BINS = $(addprefix $(BUILD)/fuzz/,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-build deps-fuzz
deps-fuzz:
	@bash scripts/deps.sh test
fuzz-build: $(FUZZ_BINS)
fuzz: deps-fuzz $(addprefix $(BUILD)/fuzz/,$(FUZZ))
	@bash tests/fuzz/run.sh fuzz $(FUZZ_SECONDS) $(BUILD) $(FUZZ)

EXTRA_TEST_DEPS += $(FUZZ_BINS)
EXTRA_TESTS += "bash tests/fuzz/run.sh smoke $(FUZZ_SMOKE_SECONDS) $(BUILD) $(FUZZ_NAMES)"
