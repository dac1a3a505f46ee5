#!/usr/bin/env bash
# scorecard.sh BUNDLE_DIR: run the bundle's scorecard tests (the six built-in ones, which are
# static checks of the bundle) with operator-sdk's scorecard-test program, the way scorecard's
# test pods run it: the bundle at /bundle, here in a chroot instead of a pod. Needs root (chroot).
# Environment: SCORECARD_TEST, the static scorecard-test binary.
set -euo pipefail
: "${SCORECARD_TEST:?}"
bundle=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bundle" "$root/tmp"
cp -r "$bundle"/. "$root/bundle/"
cp "$SCORECARD_TEST" "$root/scorecard-test"
# The test names follow the scorecard-test entry in tests/scorecard/config.yaml.
tests=$(awk '/- scorecard-test$/ { getline; sub(/^ *- /, ""); print }' "$bundle/tests/scorecard/config.yaml")
[ -n "$tests" ] || { echo "no scorecard-test tests in $bundle/tests/scorecard/config.yaml"; exit 1; }
failed=0
for t in $tests; do
  out=$(chroot "$root" /scorecard-test "$t")
  state=$(grep -o '"state": "[a-z]*"' <<<"$out" | head -n1 | cut -d'"' -f4)
  printf '%s: scorecard %-26s %s\n' "$bundle" "$t" "${state:-no result}"
  [ "$state" = pass ] || { echo "$out"; failed=1; }
done
exit "$failed"
