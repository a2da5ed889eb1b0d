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
# summary_exit: the counts, then the status: 0 when every check passed (and
# one ran), else 1.  Explicit: a bare `exit` inside an EXIT trap exits with
# the status from before the trap (0 at the end of the script), which hid
# failed checks from CI.
summary_exit() {
  echo "$passed passed, $failed failed"
  if [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; then exit 0; fi
  exit 1
}
# abort WHAT: a failed check that stops the test here (the remaining checks
# need what just failed).
abort() {
  not_ok "$*"
  exit 1
}
