# docker/docker.mk - the container test.  Included by the top-level Makefile.
#   make test-docker   builds docker/Dockerfile with podman, runs it with
#                      podman-compose (docker/compose.yaml) and checks it from
#                      outside (tests/docker/test_docker.sh), then the
#                      fleet of docker/compose.fleet.yaml on the same image
#                      (tests/docker/test_fleet.sh).  Installs podman,
#                      podman-compose, runc and debootstrap if missing; needs
#                      root or sudo.  Logs: $(BUILD)/docker/.
#   make test-bookworm the Node.js suites (server integration, web unit, web
#                      browser) on stock Debian bookworm's Node.js 18 in a
#                      container (tests/docker/test_bookworm.sh).  Logs:
#                      $(BUILD)/bookworm/.
#   make test-fresh-bookworm  the README's `make run` and `make test` as a new
#                      user runs them, in a fresh bookworm container with only
#                      Debian's build-essential, git, curl, nodejs, npm and
#                      python3 (tests/docker/fresh_bookworm.sh; about 30
#                      minutes, not in CI).  Logs: $(BUILD)/fresh-bookworm/.
# Not part of `make test`: they need a container engine and several minutes.

.PHONY: test-docker test-bookworm test-fresh-bookworm
test-docker:
	@BUILD=$(BUILD) bash tests/docker/test_docker.sh
test-bookworm:
	@BUILD=$(BUILD) bash tests/docker/test_bookworm.sh
test-fresh-bookworm:
	@BUILD=$(BUILD) bash tests/docker/fresh_bookworm.sh
