#!/usr/bin/env bash
# Each test file run alone (two at a time, as `npm test` runs them), one line per file:
#   wall_s user_s sys_s tests_s exit file
# tests_s is the sum of the file's top-level test durations: a file whose wall time is far above
# it spends its time outside its tests (start-up, or something left open at the end).
# Usage: bin/test-file-times.sh [test files...]   (default: every test/**/*.test.ts, from source)
set -uo pipefail
cd "$(dirname "$0")/.."
files=("$@")
[ ${#files[@]} -eq 0 ] && mapfile -t files < <(find test -name '*.test.ts' | sort)
printf '%s\n' "${files[@]}" | xargs -P2 -I{} bash -c '
  times=$(mktemp); out=$(mktemp)
  /usr/bin/time -f "%e %U %S" -o "$times" node --import tsx --test --test-reporter=tap --test-timeout=600000 "$1" > "$out" 2>&1
  status=$?
  tests=$(awk "/^(not )?ok [0-9]+ - /{top=1; next} top && /^  duration_ms:/{s+=\$2; top=0} END{printf \"%.2f\", s/1000}" "$out")
  echo "$(tail -n 1 "$times") $tests $status $1"
  rm -f "$times" "$out"' _ {}
