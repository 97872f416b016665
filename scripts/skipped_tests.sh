#!/usr/bin/env bash
# Lists the tests the last ctest run in a build directory skipped, each with
# the reason the test gave (GTEST_SKIP's message, pytest's skip reason), so
# that a skip never reads as a pass. scripts/dev.sh runs it after ctest.
#
#   scripts/skipped_tests.sh [build dir]     (default: build/release)
set -euo pipefail
log=${1:-build/release}/Testing/Temporary/LastTest.log
[[ -f $log ]] || { echo "skipped_tests: no ctest log at $log" >&2; exit 0; }
awk '
  /^[0-9]+\/[0-9]+ Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name);
                                reason = ""; take = 0; next }
  take == 1 && /^\[  SKIPPED \]/ { take = 0 }
  take == 1 { reason = reason (reason == "" ? "" : " ") $0 }
  /: Skipped$/ && reason == "" { take = 1 }
  /^SKIPPED \[[0-9]+\] / && reason == "" { r = $0; sub(/^SKIPPED \[[0-9]+\] [^ ]+: /, "", r);
                                            reason = r }
  /^Skip regular expression found in output/ { skipped[++n] = name; why[n] = reason }
  END {
    if (n == 0) exit
    printf "%d test(s) skipped, each with its reason:\n", n
    for (i = 1; i <= n; ++i)
      printf "  %s: %s\n", skipped[i], why[i] == "" ? "(the test gave no reason)" : why[i]
  }' "$log"
