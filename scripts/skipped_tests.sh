#!/usr/bin/env bash
# Lists the tests the last ctest run of a test preset skipped, each with the
# reason the test gave (GTEST_SKIP's message, pytest's skip reason), so that
# a skip never reads as a pass: ctest itself prints only "Skipped". Reads the
# JUnit report the test presets write (CMakePresets.json, outputJUnitFile).
# scripts/dev.sh runs it after ctest.
#
#   scripts/skipped_tests.sh [build dir]     (default: build/release)
set -euo pipefail
report=${1:-build/release}/Testing/ctest-junit.xml
[[ -f $report ]] || { echo "skipped_tests: no ctest report at $report" >&2; exit 0; }
python3 - "$report" <<'PY'
import re
import sys
import xml.etree.ElementTree as ET

skipped = []
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    if case.find("skipped") is None:
        continue
    out = case.findtext("system-out") or ""
    reason = ""
    gtest = re.search(r": Skipped\n(.*?)(?:\n\[  SKIPPED \]|\nGoogle Test trace:)", out, re.S)
    pytest = re.findall(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", out, re.M)
    if gtest:
        reason = " ".join(gtest.group(1).split())
    elif pytest:
        reason = "; ".join(pytest)
    skipped.append((case.get("name"), reason or "(the test gave no reason)"))
if skipped:
    print(f"{len(skipped)} test(s) skipped, each with its reason:")
    for name, reason in skipped:
        print(f"  {name}: {reason}")
PY
