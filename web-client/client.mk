# web-client/client.mk - the WebGL2 client: its npm dependencies (pinned in
# web-client/package-lock.json) copied into web-client/vendor/ for the server
# to serve, and its tests (tests/web/) and benchmark.  Included by the
# top-level Makefile.

WEB_DIR      = web-client
WEB_TEST_DIR = tests/web
WEB_VENDOR   = $(WEB_DIR)/vendor/msgpack/index.mjs
WEB_ENV      = FLUID_SERVER=$(BUILD)/fluid-server FLUID_ROOT=$(CURDIR)

.PHONY: web-client-build web-client-wasm web-client-clean test-web test-web-unit test-web-e2e bench-web bench-decode
all: web-client-build web-client-wasm
run: web-client-build web-client-wasm
web-client-build: $(WEB_VENDOR)

# The server's v2 frame decoder (server/wire/frame_decoder.c) as WebAssembly:
# the page's only frame decoder (web-client/src/frame_codec_wasm.js; the
# JavaScript port of its walk is the tests' oracle, tests/web/oracle/).
# Debian's clang with
# wasi-libc and lld (scripts/deps.sh build).  Its own target: the Dockerfile
# makes web-client-build before the sources are in the image.
WEB_WASM       = $(WEB_DIR)/vendor/fc/frame_codec.wasm
WASM_CC       ?= clang
WASM_FLAGS     = --target=wasm32-wasi --sysroot=/usr -isystem /usr/include/wasm32-wasi -L/usr/lib/wasm32-wasi \
                 $(WARN) -O3 -msimd128 -mexec-model=reactor -Wl,--no-entry -Wl,--strip-all
web-client-wasm: $(WEB_WASM)
$(WEB_WASM): $(WEB_DIR)/wasm/fc_wasm.c $(FC_DEC_SRC) $(FC_HDR)
	@mkdir -p $(dir $@)
	$(WASM_CC) $(WASM_FLAGS) -Iserver/wire $(WEB_DIR)/wasm/fc_wasm.c $(FC_DEC_SRC) -o $@

# npm comes with the test packages of scripts/deps.sh; a machine without it
# gets them here (the build branch of deps.sh has no Node.js).
$(WEB_DIR)/node_modules/.installed: $(WEB_DIR)/package.json $(WEB_DIR)/package-lock.json
	@command -v npm >/dev/null 2>&1 || bash scripts/deps.sh build
	cd $(WEB_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The browser loads @msgpack/msgpack's ES-module build through the import map
# in index.html; nothing comes from another host at run time.
$(WEB_VENDOR): $(WEB_DIR)/node_modules/.installed
	@rm -rf $(WEB_DIR)/vendor/msgpack
	@mkdir -p $(WEB_DIR)/vendor/msgpack
	cp -r $(WEB_DIR)/node_modules/@msgpack/msgpack/dist.esm/. $(WEB_DIR)/vendor/msgpack/
	cp $(WEB_DIR)/node_modules/@msgpack/msgpack/LICENSE $(WEB_DIR)/vendor/msgpack/
	@touch $@

$(WEB_TEST_DIR)/node_modules/.installed: $(WEB_TEST_DIR)/package.json $(WEB_TEST_DIR)/package-lock.json
	cd $(WEB_TEST_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

WEB_TEST_DEPS = $(WEB_VENDOR) $(WEB_WASM) $(WEB_TEST_DIR)/node_modules/.installed $(BUILD)/fluid-server

test-web-unit: $(WEB_TEST_DEPS)
	node $(WEB_TEST_DIR)/run.mjs unit
test-web-e2e: $(WEB_TEST_DEPS)
	$(WEB_ENV) node $(WEB_TEST_DIR)/run.mjs e2e
test-web: test-web-unit test-web-e2e

bench-web: $(WEB_TEST_DEPS)
	$(WEB_ENV) node tests/bench/bench_web.mjs

# The page's decoders timed on 90 recorded deltas of the 100k dam break: in
# node (CPU time), then in headless Chromium's Web Worker (the issue's "decode
# in Chromium"; a recording, so that no simulation shares the cores).
# dump100k: one payload a frame (no bands), dump100k_bands: the server's
# default at 100k (2 bands, which the page decodes in 2 workers).
bench-decode: $(WEB_TEST_DEPS) $(BUILD)/bench_codec $(BUILD)/rec/dam100k.bin
	@rm -rf $(BUILD)/rec/dump100k $(BUILD)/rec/dump100k_bands && mkdir -p $(BUILD)/rec/dump100k $(BUILD)/rec/dump100k_bands
	BENCH_CODEC_BANDS=1 BENCH_CODEC_ALL=0 BENCH_CODEC_FRAMES=90 BENCH_CODEC_DUMP=$(BUILD)/rec/dump100k $(BUILD)/bench_codec $(BUILD)/rec/dam100k.bin
	BENCH_CODEC_ALL=0 BENCH_CODEC_FRAMES=90 BENCH_CODEC_DUMP=$(BUILD)/rec/dump100k_bands $(BUILD)/bench_codec $(BUILD)/rec/dam100k.bin
	node tests/bench/bench_frame_decode.mjs $(BUILD)/rec/dump100k
	$(WEB_ENV) node tests/bench/bench_decode.mjs $(BUILD)/rec/dump100k $(BUILD)/rec/dump100k_bands

web-client-clean:
	rm -rf $(WEB_DIR)/vendor $(WEB_DIR)/node_modules $(WEB_TEST_DIR)/node_modules

EXTRA_TEST_DEPS += $(WEB_TEST_DEPS)
EXTRA_TESTS += "node $(WEB_TEST_DIR)/run.mjs unit" \
               "$(WEB_ENV) node $(WEB_TEST_DIR)/run.mjs e2e"
EXTRA_BENCH_DEPS += $(WEB_TEST_DEPS)
EXTRA_BENCH += $(WEB_ENV) node tests/bench/bench_web.mjs ; $(MAKE) --no-print-directory bench-decode ;
