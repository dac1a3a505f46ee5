#!/usr/bin/env bash
# Prints one closing line for every test log in a folder: go test's top-level and sub-test
# results (`--- PASS` / `--- FAIL` / `--- SKIP`) and ginkgo's spec counts from ginkgo-*.log.
set -euo pipefail
dir=${1:?usage: test-summary.sh DIR}
passed=0 failed=0 skipped=0
for log in "$dir"/*.log; do
  [ -e "$log" ] || continue
  case $(basename "$log") in ginkgo-*)
    # "Ran 4 of 4 Specs ..." then "SUCCESS! -- 4 Passed | 0 Failed | 0 Pending | 0 Skipped"
    line=$(grep -E '[0-9]+ Passed \| [0-9]+ Failed' "$log" | tail -n 1 || true)
    p=$(sed -E 's/.* ([0-9]+) Passed.*/\1/' <<<"$line"); f=$(sed -E 's/.* ([0-9]+) Failed.*/\1/' <<<"$line")
    s=$(sed -E 's/.* ([0-9]+) Skipped.*/\1/' <<<"$line")
    passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
    continue;;
  esac
  passed=$((passed + $(grep -cE '^\s*--- PASS' "$log" || true)))
  failed=$((failed + $(grep -cE '^\s*--- FAIL' "$log" || true)))
  skipped=$((skipped + $(grep -cE '^\s*--- SKIP' "$log" || true)))
done
echo "Tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
