# tests/docker/checks.sh - the container tests' check lines, sourced by
# test_docker.sh and test_fleet.sh: one line per check, "ok - ..." or
# "not ok - ...", counted in passed and failed; "# ..." for a note.
passed=0 failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }
note() { echo "# $*"; }
# check DESCRIPTION COMMAND...: one line for the outcome of COMMAND.
check() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else not_ok "$what"; fi
}
