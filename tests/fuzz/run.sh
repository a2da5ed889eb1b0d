#!/usr/bin/env bash
# tests/fuzz/run.sh - runs libFuzzer harnesses built by tests/fuzz/fuzz.mk.
#
#   run.sh smoke SECONDS BUILD NAME...   (make test) for each harness: replay
#        every past reproducer in tests/fuzz/crashes/NAME/, then fuzz for
#        SECONDS from the repo's seeds; new inputs go to a scratch directory
#        that is deleted afterwards, so the repo's corpus is never written.
#   run.sh fuzz SECONDS BUILD NAME...    (make fuzz) the same, but the corpus
#        grows in BUILD/fuzz/corpus/NAME/ and is kept between runs (merge
#        the useful part into the repo with: BIN -merge=1 tests/fuzz/corpus/NAME
#        BUILD/fuzz/corpus/NAME).
#
# One process per harness, one at a time (in-process: one job, one worker).  A crash, leak, timeout
# or broken promise fails the harness; libFuzzer writes the reproducer into
# BUILD/fuzz/crashes/NAME/ and this script prints where.  Each harness counts
# twice (replay, fuzz); a harness with no past reproducer counts its replay
# as skipped, saying so.  Closes with "fuzz: N passed, N failed, N skipped".
set -u
mode=${1:?usage: run.sh smoke|fuzz SECONDS BUILD NAME...}
secs=${2:?seconds}
build=${3:?build dir}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
pass=0
fail=0
skip=0
for name in "$@"; do
  bin=$build/fuzz/$name
  if [ ! -x "$bin" ]; then
    echo "fuzz: $name: $bin is missing (make $bin)"; fail=$((fail + 2)); continue
  fi
  crashes=$build/fuzz/crashes/$name
  mkdir -p "$crashes"
  opts=()
  [ -f "$here/$name.dict" ] && opts+=("-dict=$here/$name.dict")
  # shellcheck disable=SC2207
  [ -f "$here/$name.options" ] && opts+=($(cat "$here/$name.options"))
  common=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$crashes/" "${opts[@]}")

  # 1. Past reproducers: each must now run clean.
  repro=()
  if [ -d "$here/crashes/$name" ]; then
    while IFS= read -r -d '' f; do repro+=("$f"); done < <(find "$here/crashes/$name" -type f ! -name '*.md' -print0 | sort -z)
  fi
  if [ ${#repro[@]} -eq 0 ]; then
    echo "fuzz: $name: replay skipped: no past reproducers in tests/fuzz/crashes/$name/"; skip=$((skip + 1))
  elif "$bin" "${common[@]}" "${repro[@]}" >"$build/fuzz/$name.replay.log" 2>&1; then
    echo "fuzz: $name: ${#repro[@]} past reproducers replayed, none crashes"; pass=$((pass + 1))
  else
    echo "fuzz: $name: a past reproducer crashes again (log: $build/fuzz/$name.replay.log)"
    grep -E 'ERROR|SUMMARY|runtime error|broken promise|Running:' "$build/fuzz/$name.replay.log" | tail -n 8
    fail=$((fail + 1))
  fi

  # 2. Fuzzing for the budget.
  if [ "$mode" = smoke ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$name.XXXXXX")
  else
    work=$build/fuzz/corpus/$name
    mkdir -p "$work"
  fi
  seeds=()
  [ -d "$here/corpus/$name" ] && seeds+=("$here/corpus/$name")
  log=$build/fuzz/$name.$mode.log
  mark=$build/fuzz/.$name.start
  touch "$mark"
  "$bin" "${common[@]}" -max_total_time="$secs" -print_final_stats=1 "$work" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  [ "$mode" = smoke ] && rm -rf "$work"
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+$')
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
  new=$(find "$crashes" -type f -newer "$mark")
  # A run that executed nothing (a harness that exits at once) fuzzed nothing.
  if [ "$rc" -eq 0 ] && [ -z "$new" ] && [ "${execs:-0}" -gt 0 ]; then
    echo "fuzz: $name: ${secs}s, ${execs:-?} executions, ${cov:-no coverage line}, no crash"
    pass=$((pass + 1))
  else
    echo "fuzz: $name: FAILED (exit $rc) after ${execs:-?} executions; log: $log"
    grep -E 'ERROR|SUMMARY|runtime error|broken promise' "$log" | head -n 8
    echo "$new" | grep -v '^$' | head -n 5 |
      while read -r f; do echo "fuzz: $name: reproducer kept at $f (replay: $bin $f; once fixed, copy it to tests/fuzz/crashes/$name/)"; done
    fail=$((fail + 1))
  fi
done
[ $((pass + fail)) -gt 0 ] || { echo "fuzz: no harness ran"; fail=1; }
echo "fuzz: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
