#!/usr/bin/env bash
# Runs each test command given, echoing its output, then prints how long each
# suite took and the total of their "N passed, N failed[, N skipped]" lines as
# "N passed, N failed, N skipped".
# A suite fails the run when it fails a test, exits non-zero, prints no
# summary, or ran no test at all (0 passed and 0 failed: a runner that ran
# nothing proves nothing, whatever it skipped).
set -u
tp=0; tf=0; ts=0; bad=0
summary='^([A-Za-z0-9_-]+: )?([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?'
times=()
for t in "$@"; do
  echo "=== $t"
  out=$(mktemp)
  t0=$(date +%s)
  # shellcheck disable=SC2086
  bash -c "$t" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  times+=("$(( $(date +%s) - t0 )) s  ${t:0:110}")
  line=$(grep -E "$summary" "$out" | tail -n 1)
  rm -f "$out"
  if [ -z "$line" ]; then
    echo "!!! $t printed no summary (exit $rc)"; bad=1; tf=$((tf + 1)); continue
  fi
  [[ $line =~ $summary ]]
  p=${BASH_REMATCH[2]} f=${BASH_REMATCH[3]} s=${BASH_REMATCH[5]:-0}
  tp=$((tp + p)); tf=$((tf + f)); ts=$((ts + s))
  if [ $((p + f)) -eq 0 ]; then echo "!!! $t ran no test ($s skipped)"; bad=1; tf=$((tf + 1)); continue; fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then echo "!!! $t exited $rc"; bad=1; tf=$((tf + 1)); fi
done
echo
echo "wall time of each suite (for CI's budget; no test asserts a time):"
printf '  %s\n' "${times[@]}"
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" -eq 0 ] && [ "$bad" -eq 0 ]
