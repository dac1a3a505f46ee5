#!/usr/bin/env bash
# Reduces `go test -v` output to go test's own summary lines and failures; the full log is
# kept by the caller (tee) under .local/test-results/.
exec grep --line-buffered -E '^(ok |FAIL|\?|--- FAIL|panic:|\s+.*_test\.go:[0-9]+:|# )' || true
