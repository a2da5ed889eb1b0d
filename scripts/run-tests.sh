#!/usr/bin/env bash
# Runs each test command given, echoing its output, then prints the total of
# their "N passed, N failed" lines.  Exits non-zero if any suite failed or
# printed no summary.
set -u
tp=0; tf=0; bad=0
for t in "$@"; do
  echo "=== $t"
  out=$(mktemp)
  # shellcheck disable=SC2086
  bash -c "$t" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  line=$(grep -E '^([A-Za-z0-9_-]+: )?[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
  rm -f "$out"
  if [ -z "$line" ]; then
    echo "!!! $t printed no summary (exit $rc)"; bad=1; tf=$((tf + 1)); continue
  fi
  p=$(echo "$line" | sed -E 's/^([A-Za-z0-9_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2/')
  f=$(echo "$line" | sed -E 's/^([A-Za-z0-9_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\3/')
  tp=$((tp + p)); tf=$((tf + f))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then echo "!!! $t exited $rc"; bad=1; tf=$((tf + 1)); fi
done
echo
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ] && [ "$bad" -eq 0 ]
