# docker/docker.mk - the container test.  Included by the top-level Makefile.
#   make test-docker   builds docker/Dockerfile with podman, runs it with
#                      podman-compose (docker/compose.yaml) and checks it from
#                      outside (tests/docker/test_docker.sh).  Installs podman,
#                      podman-compose, runc and debootstrap if missing; needs
#                      root or sudo.  Logs: $(BUILD)/docker/.
# Not part of `make test`: it needs a container engine and several minutes.

.PHONY: test-docker
test-docker:
	@BUILD=$(BUILD) bash tests/docker/test_docker.sh
