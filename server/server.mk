# server/server.mk - fluid-server, its C unit tests, integration tests and
# benchmark.  Included by the top-level Makefile (which defines CC, BUILD,
# CFLAGS_ALL, OPT, SAN, LDLIBS_SIM and $(BUILD)/libfluidsim.a).

SRV_PKGS    = libwebsockets msgpack libcjson libnats libjwt assimp libcrypto
# The layers (STYLE.md): base, hub, wire, loop, rooms, net, bus, fleet, and main.c; sim/ is the
# core library (the top-level Makefile builds it).  Every layer's folder is
# on the include path: a file includes another's header by its bare name.
SRV_DIRS    = server/base server/hub server/wire server/loop server/rooms server/net server/bus server/fleet
SRV_INC     = -Iserver $(addprefix -I,$(SRV_DIRS)) -Iserver/sim
SRV_CFLAGS  = $(shell pkg-config --cflags $(SRV_PKGS)) $(SRV_INC)
SRV_LIBS    = $(shell pkg-config --libs $(SRV_PKGS))
SRV_SRC     = server/main.c $(foreach d,$(SRV_DIRS),$(wildcard $(d)/*.c))
SRV_HDR     = $(foreach d,$(SRV_DIRS),$(wildcard $(d)/*.h)) server/sim/fluid_sim.h
SRV_OBJ     = $(patsubst server/%.c,$(BUILD)/server/%.o,$(SRV_SRC))
# The protocol core the C unit tests exercise (no sockets, no world).
SRV_WIRE_SRC = $(wildcard server/wire/*.c server/hub/*.c) server/base/msgbuf.c server/base/log.c
SRV_PORT   ?= 8080
# The v2 frame codec (frame_codec.h): its decoder's files (the WebAssembly
# build takes these), and the encoder's with them.
FC_DEC_SRC = server/wire/frame_header.c server/wire/frame_walk.c server/wire/frame_history.c \
             server/wire/frame_decoder.c server/wire/frame_bands.c server/wire/table_coder.c
FC_SRC     = $(FC_DEC_SRC) server/wire/frame_encoder.c server/wire/frame_tier.c
FC_HDR     = server/wire/frame_codec.h server/wire/frame_header.h server/wire/frame_walk.h \
             server/wire/frame_history.h server/wire/frame_bands.h server/wire/range_coder.h server/wire/table_coder.h \
             server/wire/frame_tier.h

# The recording tool (server/tools/fluid_rec.c): replays, checks and
# exports recordings without a server.
FLUID_REC_SRC = server/tools/fluid_rec.c server/wire/recfile.c $(FC_SRC) server/wire/wire.c server/wire/mp_reader.c server/wire/validate.c server/hub/command.c server/hub/reply.c server/hub/reply_code.c server/hub/snapshots.c server/base/msgbuf.c
$(BUILD)/fluid-rec: $(FLUID_REC_SRC) $(SRV_HDR) $(BUILD)/libfluidsim.a
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(OPT) $(SRV_CFLAGS) $(FLUID_REC_SRC) $(BUILD)/libfluidsim.a $(SRV_LIBS) $(LDLIBS_SIM) -o $@
all: $(BUILD)/fluid-rec

.PHONY: server server-san run test-server test-server-unit test-server-integration bench-server test-server-tls
all: $(BUILD)/fluid-server
server: $(BUILD)/fluid-server
server-san: $(BUILD)/fluid-server-san

$(BUILD)/server/%.o: server/%.c $(SRV_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(OPT) $(SRV_CFLAGS) -c $< -o $@

$(BUILD)/fluid-server: $(SRV_OBJ) $(BUILD)/libfluidsim.a
	$(CC) $(CFLAGS_ALL) $(OPT) $(SRV_OBJ) $(BUILD)/libfluidsim.a $(SRV_LIBS) $(LDLIBS_SIM) -o $@

run: deps $(BUILD)/fluid-server
	@echo "fluid-server: open http://localhost:$(SRV_PORT)/ in a browser (Ctrl-C stops)"
	$(BUILD)/fluid-server --port $(SRV_PORT) --web-root web-client

# C unit tests of the protocol (decoder bounds, encoders, golden vectors),
# under AddressSanitizer + UBSan.
# (the sim library only for its static tables: solver names)
$(BUILD)/test_server_wire_san: tests/server/test_wire.c $(SRV_WIRE_SRC) $(SRV_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) tests/server/test_wire.c $(SRV_WIRE_SRC) $(SIM_SRC) $(SRV_LIBS) $(LDLIBS_SIM) -o $@

# The role table, room names and the PROTOCOL.md copy of the table
# (tests/server/test_roles.c; rest_route.c's routes, so the protocol core).
$(BUILD)/test_roles_san: tests/server/test_roles.c tests/testlib.c $(SRV_WIRE_SRC) $(SRV_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) -Itests tests/server/test_roles.c tests/testlib.c $(SRV_WIRE_SRC) $(SIM_SRC) $(SRV_LIBS) $(LDLIBS_SIM) -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_roles_san
EXTRA_TESTS += "$(BUILD)/test_roles_san"

# The mesh loader (server/wire/mesh_load.c: Assimp, and obj_read.c for OBJ) on meshes the test makes
# in every format it reads, and on broken and hostile files.
MESH_LOAD_SRC = server/wire/mesh_load.c server/wire/obj_read.c server/wire/glb_check.c server/sim/mesh.c server/sim/mesh_mass.c
$(BUILD)/test_mesh_load_san: tests/server/test_mesh_load.c tests/testlib.c $(MESH_LOAD_SRC) $(SRV_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) -Itests tests/server/test_mesh_load.c tests/testlib.c $(MESH_LOAD_SRC) $(SRV_LIBS) $(LDLIBS_SIM) -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_mesh_load_san
EXTRA_TESTS += "$(BUILD)/test_mesh_load_san"

# Invite tokens and the signing secret (tests/server/test_invite.c): hand-made
# tokens signed with OpenSSL's HMAC, and PyJWT (python3-jwt) both ways.
CRYPTO_LIBS = $(shell pkg-config --libs libcrypto)
INVITE_SRC = server/wire/invite.c server/hub/roles.c server/hub/room_name.c server/hub/command.c server/base/secret.c
$(BUILD)/test_invite_san: tests/server/test_invite.c tests/testlib.c $(INVITE_SRC) $(SRV_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) -Itests tests/server/test_invite.c tests/testlib.c $(INVITE_SRC) $(SRV_LIBS) $(CRYPTO_LIBS) -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_invite_san
EXTRA_TESTS += "$(BUILD)/test_invite_san"

# The whole server (and the sim sources) under ASan + UBSan + LSan, for the
# leak and undefined-behaviour check in the integration tests.
$(BUILD)/fluid-server-san: $(SRV_SRC) $(SRV_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) $(SRV_SRC) $(SIM_SRC) $(SRV_LIBS) $(LDLIBS_SIM) -o $@

# The whole server under ThreadSanitizer: the integration tests run it too
# (tests/server/tsan.test.mjs) and fail on any report.
$(BUILD)/fluid-server-tsan: $(SRV_SRC) $(SRV_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(TSAN) $(SRV_CFLAGS) $(SRV_SRC) $(SIM_SRC) $(SRV_LIBS) $(LDLIBS_SIM) -o $@

# Every integration test against the TSan server, its pool on 2 threads (not
# part of `make test`: the TSan server is 5-15x slower, so tests with a timing
# bar such as frames per second fail here; this target fails on TSan reports
# only and prints them, the functional summary is for information).
.PHONY: test-server-tsan-all
test-server-tsan-all: $(BUILD)/fluid-server-tsan tests/server/node_modules/.installed
	@d=$$(mktemp -d /tmp/fluid-tsan-all-XXXXXX); \
	FLUID_SERVER=$(BUILD)/fluid-server-tsan FLUID_SERVER_TSAN=$(BUILD)/fluid-server-tsan FLUID_THREADS=2 \
	  TSAN_OPTIONS="log_path=$$d/tsan halt_on_error=0 exitcode=66" node tests/server/run.mjs; \
	n=$$(cat $$d/tsan.* 2>/dev/null | grep -c 'WARNING: ThreadSanitizer'); \
	cat $$d/tsan.* 2>/dev/null; echo "tsan-all: $$n ThreadSanitizer reports (logs in $$d)"; [ "$$n" -eq 0 ]

# Integration tests: node --test against the real binary on loopback ports.
tests/server/node_modules/.installed: tests/server/package.json tests/server/package-lock.json
	cd tests/server && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

test-server-unit: $(BUILD)/test_server_wire_san
	$(BUILD)/test_server_wire_san protocol/golden

test-server-integration: $(BUILD)/fluid-server $(BUILD)/fluid-server-san $(BUILD)/fluid-rec tests/server/node_modules/.installed
	$(SRV_IT_ENV) node tests/server/run.mjs

test-server: test-server-unit test-server-integration

# The whole integration suite again over TLS (FLUID_TEST_TLS=1: https and wss
# with a CA and certificate the tests make; every client verifies).  Not part
# of `make test`, where tests/server/tls.test.mjs covers TLS: it would double
# the suite's time.
test-server-tls: $(BUILD)/fluid-server $(BUILD)/fluid-server-san $(BUILD)/fluid-server-tsan tests/server/node_modules/.installed
	$(SRV_IT_ENV) FLUID_TEST_TLS=1 node tests/server/run.mjs

SRV_IT_ENV = FLUID_SERVER=$(BUILD)/fluid-server FLUID_SERVER_SAN=$(BUILD)/fluid-server-san FLUID_REC=$(BUILD)/fluid-rec
# tests/server/tsan.test.mjs drives the TSan server.
SRV_IT_ENV += FLUID_SERVER_TSAN=$(BUILD)/fluid-server-tsan
test-server-integration: $(BUILD)/fluid-server-tsan
EXTRA_TEST_DEPS += $(BUILD)/fluid-server-tsan

EXTRA_TEST_DEPS += $(BUILD)/fluid-server $(BUILD)/fluid-server-san $(BUILD)/test_server_wire_san $(BUILD)/fluid-rec \
                   tests/server/node_modules/.installed
EXTRA_TESTS += "$(BUILD)/test_server_wire_san protocol/golden" \
               "$(SRV_IT_ENV) node tests/server/run.mjs"

bench-server: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/bench_server.mjs

EXTRA_BENCH_DEPS += $(BUILD)/fluid-server tests/server/node_modules/.installed
EXTRA_BENCH += FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/bench_server.mjs ; FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/bench_record.mjs ;

# One viewer of the 20k dam break on loopback shaped to 10 and 3 Mbit/s in a
# private network namespace (needs root for unshare -n and tc): frames/s and
# push-to-frame latency against their bars (BENCHMARKS.md).
.PHONY: bench-shaped
bench-shaped: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/shaped.mjs
EXTRA_BENCH += FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/shaped.mjs ;

.PHONY: bench-record bench-relays
bench-relays: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/bench_relays.mjs
EXTRA_BENCH += FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/bench_relays.mjs ;

.PHONY: bench-mps
bench-mps: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/bench_mps.mjs
EXTRA_BENCH += FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/bench_mps.mjs ;

bench-record: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/bench_record.mjs

# One party against everyone else (PROTOCOL.md, "Fair shares"): a viewer's
# frames/s and the world's realtime ratio while one client or relay attacks.
# Rooms sharing the machine (tests/bench/rooms.mjs): up to six rooms admitted
# under --step-budget, each with a viewer; every room's realtime ratio.
.PHONY: bench-rooms
bench-rooms: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/rooms.mjs
EXTRA_BENCH += FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/rooms.mjs ;

# The memory of 6 awake rooms against 6 awake and 94 evicted (tests/bench/rooms_memory.mjs).
.PHONY: bench-rooms-memory
bench-rooms-memory: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/rooms_memory.mjs
EXTRA_BENCH += FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/rooms_memory.mjs ;

# Rooms spread over a fleet of three sim nodes on a loopback nats-server -js (tests/bench/fleet.mjs).
.PHONY: bench-fleet
bench-fleet: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/fleet.mjs
EXTRA_BENCH += FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/fleet.mjs ;

.PHONY: bench-isolation
bench-isolation: $(BUILD)/fluid-server tests/server/node_modules/.installed
	FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/isolation.mjs
EXTRA_BENCH += FLUID_SERVER=$(BUILD)/fluid-server node tests/bench/isolation.mjs ;

# The v2 frame codec (server/wire/frame_codec.h): C unit tests under ASan + UBSan
# (a running world included), and its measurement on recorded frames
# (tests/bench/record_frames.c, tests/bench/bench_codec.c, zstd for the
# comparison; docs/wire-v2.md has the figures).
$(BUILD)/test_frame_codec_san: tests/server/test_frame_codec.c $(FC_SRC) $(FC_HDR) tests/testlib.c $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) -Iserver/wire -Iserver/sim -Itests tests/server/test_frame_codec.c $(FC_SRC) tests/testlib.c $(SIM_SRC) $(LDLIBS_SIM) -o $@

EXTRA_TEST_DEPS += $(BUILD)/test_frame_codec_san

# Protocol v2 end to end without sockets: the core, the stream encoder, the
# hub, the decoder and the server's mirror of each client's decoder.
$(BUILD)/test_stream_san: tests/server/test_stream.c server/loop/stream.c $(SRV_WIRE_SRC) server/base/clock.c $(SRV_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) tests/server/test_stream.c server/loop/stream.c $(SRV_WIRE_SRC) server/base/clock.c $(SIM_SRC) $(SRV_LIBS) $(LDLIBS_SIM) -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_stream_san
EXTRA_TESTS += $(BUILD)/test_stream_san
EXTRA_TESTS += "$(BUILD)/test_frame_codec_san protocol/golden"

# The tiers of detail: each tier's subset and grid, and the rule that moves a
# client between tiers and strides, on a virtual clock.
$(BUILD)/test_tiers_san: tests/server/test_tiers.c server/wire/frame_tier.c server/wire/link_rule.c $(FC_SRC) $(FC_HDR) server/wire/link_rule.h tests/testlib.c tests/testlib.h
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) -Iserver/wire -Itests tests/server/test_tiers.c server/wire/link_rule.c $(FC_SRC) tests/testlib.c -lm -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_tiers_san
EXTRA_TESTS += $(BUILD)/test_tiers_san

# The sim thread's fixed-rate schedule on a virtual clock.
$(BUILD)/test_clock_san: tests/server/test_clock.c server/base/clock.c server/base/clock.h tests/testlib.c tests/testlib.h
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) -Iserver/base -Itests tests/server/test_clock.c server/base/clock.c tests/testlib.c -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_clock_san
EXTRA_TESTS += $(BUILD)/test_clock_san

# The REST parties' budgets (exports and snapshots) on explicit times.
$(BUILD)/test_budget_san: tests/server/test_budget.c server/net/rest_budget.c server/net/rest_budget.h tests/testlib.c tests/testlib.h
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) -Iserver/net -Itests tests/server/test_budget.c server/net/rest_budget.c tests/testlib.c -lm -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_budget_san
EXTRA_TESTS += $(BUILD)/test_budget_san

# The choice between the shared pool and one thread, on given step means and times.
$(BUILD)/test_pool_choice_san: tests/server/test_pool_choice.c server/loop/pool_choice.c server/loop/pool_choice.h tests/testlib.c tests/testlib.h
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) -Iserver/loop -Itests tests/server/test_pool_choice.c server/loop/pool_choice.c tests/testlib.c -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_pool_choice_san
EXTRA_TESTS += $(BUILD)/test_pool_choice_san

# The rate limits (a bucket, the costs, the bounded table, a relay's limits) on explicit timestamps.
TEST_RATE_SRC = server/hub/rate.c server/hub/rate_table.c server/hub/relay_rate.c server/hub/command.c
$(BUILD)/test_rate_san: tests/server/test_rate.c $(TEST_RATE_SRC) $(SRV_HDR) tests/testlib.c tests/testlib.h
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) -Iserver/hub -Iserver/base -Iserver/sim -Itests tests/server/test_rate.c $(TEST_RATE_SRC) tests/testlib.c -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_rate_san
EXTRA_TESTS += $(BUILD)/test_rate_san

$(BUILD)/record_frames: tests/bench/record_frames.c $(BUILD)/libfluidsim.a
	$(CC) $(CFLAGS_ALL) $(OPT) -Iserver/sim $< $(BUILD)/libfluidsim.a $(LDLIBS_SIM) -o $@
$(BUILD)/bench_codec: tests/bench/bench_codec.c $(FC_SRC) $(FC_HDR)
	$(CC) $(CFLAGS_ALL) $(OPT) -Iserver/wire tests/bench/bench_codec.c $(FC_SRC) -lzstd -lm -o $@

CODEC_RECS = $(BUILD)/rec/dam20k.bin $(BUILD)/rec/pool20k.bin $(BUILD)/rec/fountain15k.bin $(BUILD)/rec/dam100k.bin
$(BUILD)/rec/dam20k.bin: | $(BUILD)/record_frames
	@mkdir -p $(dir $@) && $(BUILD)/record_frames $@ dam_break 20000 10
$(BUILD)/rec/pool20k.bin: | $(BUILD)/record_frames
	@mkdir -p $(dir $@) && $(BUILD)/record_frames $@ dam_break 20000 5 30
$(BUILD)/rec/fountain15k.bin: | $(BUILD)/record_frames
	@mkdir -p $(dir $@) && $(BUILD)/record_frames $@ fountain 15000 5 3
$(BUILD)/rec/dam100k.bin: | $(BUILD)/record_frames
	@mkdir -p $(dir $@) && $(BUILD)/record_frames $@ dam_break 100000 10

.PHONY: bench-codec
bench-codec: deps-test $(BUILD)/bench_codec $(CODEC_RECS)
	$(BUILD)/bench_codec $(CODEC_RECS)
	BENCH_CODEC_TIERS=1 $(BUILD)/bench_codec $(BUILD)/rec/dam20k.bin $(BUILD)/rec/pool20k.bin
	@rm -rf $(BUILD)/rec/dump100k && mkdir -p $(BUILD)/rec/dump100k
	BENCH_CODEC_ALL=0 BENCH_CODEC_FRAMES=90 BENCH_CODEC_DUMP=$(BUILD)/rec/dump100k $(BUILD)/bench_codec $(BUILD)/rec/dam100k.bin
	node tests/bench/bench_frame_decode.mjs $(BUILD)/rec/dump100k

# The directory of rooms (tests/server/test_rooms.c): rooms with real sim
# threads, so every layer below rooms/ but the network edge.  Under ASan +
# UBSan, and under ThreadSanitizer (two threads looking rooms up while a third
# opens and closes one).
ROOMS_TEST_SRC = $(wildcard server/base/*.c server/hub/*.c server/wire/*.c server/loop/*.c server/rooms/*.c)
$(BUILD)/test_rooms_san: tests/server/test_rooms.c tests/testlib.c $(ROOMS_TEST_SRC) $(SRV_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) -Itests tests/server/test_rooms.c tests/testlib.c $(ROOMS_TEST_SRC) $(SIM_SRC) $(SRV_LIBS) $(CRYPTO_LIBS) $(LDLIBS_SIM) -o $@
$(BUILD)/test_rooms_tsan: tests/server/test_rooms.c tests/testlib.c $(ROOMS_TEST_SRC) $(SRV_HDR) $(SIM_SRC) $(SIM_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(TSAN) $(SRV_CFLAGS) -Itests tests/server/test_rooms.c tests/testlib.c $(ROOMS_TEST_SRC) $(SIM_SRC) $(SRV_LIBS) $(CRYPTO_LIBS) $(LDLIBS_SIM) -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_rooms_san $(BUILD)/test_rooms_tsan
EXTRA_TESTS += "$(BUILD)/test_rooms_san" "TSAN_OPTIONS='halt_on_error=0 exitcode=66' $(BUILD)/test_rooms_tsan"

# The job thread the fleet's maker and saver run on (tests/server/test_job_thread.c),
# under ASan+UBSan and under TSan.
JOB_TEST_SRC = server/base/job_thread.c server/base/log.c server/base/thread_name.c
$(BUILD)/test_job_thread_san: tests/server/test_job_thread.c tests/testlib.c $(JOB_TEST_SRC) $(SRV_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) -Itests tests/server/test_job_thread.c tests/testlib.c $(JOB_TEST_SRC) $(SRV_LIBS) -o $@
$(BUILD)/test_job_thread_tsan: tests/server/test_job_thread.c tests/testlib.c $(JOB_TEST_SRC) $(SRV_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(TSAN) $(SRV_CFLAGS) -Itests tests/server/test_job_thread.c tests/testlib.c $(JOB_TEST_SRC) $(SRV_LIBS) -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_job_thread_san $(BUILD)/test_job_thread_tsan
EXTRA_TESTS += "$(BUILD)/test_job_thread_san" "TSAN_OPTIONS='halt_on_error=0 exitcode=66' $(BUILD)/test_job_thread_tsan"

# A fleet's pure parts (tests/server/test_fleet.c): the lease rule and the
# directory's values.
FLEET_TEST_SRC = server/fleet/lease.c server/wire/fleet_doc.c server/wire/fleet_alive.c server/hub/roles.c server/hub/room_name.c server/hub/command.c
$(BUILD)/test_fleet_san: tests/server/test_fleet.c tests/testlib.c $(FLEET_TEST_SRC) $(SRV_HDR)
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_ALL) $(SAN) $(SRV_CFLAGS) -Itests tests/server/test_fleet.c tests/testlib.c $(FLEET_TEST_SRC) $(SRV_LIBS) -o $@
EXTRA_TEST_DEPS += $(BUILD)/test_fleet_san
EXTRA_TESTS += "$(BUILD)/test_fleet_san"
