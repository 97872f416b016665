#!/usr/bin/env python3
"""Lists what the last ctest run in a build directory skipped, each with the
reason the test gave, so that a skip never reads as a pass: ctest itself
prints only "Skipped" (and nothing for the cases a passing pytest file
skipped).

ctest runs it at the end of every run (CTEST_CUSTOM_POST_TEST, written into
the build directory by cmake/ctest_custom.cmake), so its lines follow
ctest's summary; it can also be run by hand on a build directory:

    scripts/skipped_tests.py [build dir]        (default: build/release)

It reads ctest's log (Testing/Temporary/LastTest.log, or LastTest.log.tmp
while ctest is still writing it, which is when ctest runs this; other
versions of ctest add a date, LastTest_<date>.log: the newest such file is
read) and reports:
- each test that ctest skipped through its SKIP_REGULAR_EXPRESSION, with
  GTEST_SKIP's message or pytest's skip reasons (pytest runs with -rs);
- each pytest file that ran (passed or failed) with skipped cases, with
  their reasons;
- each GoogleTest case that a whole program skipped (the sanitizer builds
  run one ctest per program, ACCEL_TESTS_PER_PROGRAM, without a skip
  expression: the program passes or fails by its other cases), with
  GTEST_SKIP's message.
A test skipped through SKIP_RETURN_CODE alone cannot be told from a pass in
the log, so this project's skipping tests also match a skip expression.
Always exits 0: ctest counts a failing post-test command as an error.
"""

import re
import sys
from pathlib import Path
from typing import NamedTuple, Optional

_BLOCK = re.compile(r"^\d+/\d+ Testing: (?P<name>.*?)\n(?P<body>.*?)(?=^\d+/\d+ Testing: |\Z)",
                    re.S | re.M)
_OUTPUT = re.compile(r"\nOutput:\n-+\n(?P<output>.*?)<end of output>\n", re.S)
_GTEST_SKIP = re.compile(r": Skipped\n(?P<reason>.*?)(?:\n\[  SKIPPED \]|\nGoogle Test trace:|\Z)",
                         re.S)
_PYTEST_SKIP = re.compile(r"^SKIPPED \[(?P<count>\d+)\] [^:\n]+:\d+: (?P<reason>.*)$", re.M)
# One case of a whole program's output, from its start to its skip line.
_GTEST_SKIPPED_CASE = re.compile(
    r"^\[ RUN      \] (?P<case>\S+)\n(?P<body>(?:(?!^\[ RUN      \] ).)*?)"
    r"^\[  SKIPPED \] (?P=case) \(", re.S | re.M)
_GTEST_CASE_REASON = re.compile(r": Skipped\n(?P<reason>.*?)(?:\nGoogle Test trace:|\Z)", re.S)
_REGEX_SKIPPED = "Skip regular expression found in output."
# LastTest.log, LastTest_<date>.log, each with .tmp while ctest writes it
# (not LastTestsFailed.log, which lists names only).
_LOG_NAME = re.compile(r"LastTest(_[^.]*)?\.log(\.tmp)?")


class Skip(NamedTuple):
    """A skipped test, or cases skipped in a test that ran."""
    test: str  # ctest's name
    cases: Optional[int]  # None: the whole test skipped; else how many of its cases
    reason: str
    gtest_case: str = ""  # the GoogleTest case a whole program skipped


def one_line(text):
    return " ".join(text.split())


def gtest_case_skips(name, output):
    """The cases a whole GoogleTest program skipped, each with its reason."""
    found = []
    for case in _GTEST_SKIPPED_CASE.finditer(output):
        reason = _GTEST_CASE_REASON.search(case.group("body"))
        text = one_line(reason.group("reason")) if reason else ""
        found.append(Skip(name, 1, text or "(the test gave no reason)", case.group("case")))
    return found


def skips_in_log(log):
    """The Skips of the log, in its order."""
    found = []
    for block in _BLOCK.finditer(log):
        name, body = block.group("name").strip(), block.group("body")
        match = _OUTPUT.search(body)
        output = match.group("output") if match else ""
        pytest = [(int(m.group("count")), one_line(m.group("reason")))
                  for m in _PYTEST_SKIP.finditer(output)]
        if _REGEX_SKIPPED in body:
            gtest = _GTEST_SKIP.search(output)
            if gtest and one_line(gtest.group("reason")):
                reasons = [one_line(gtest.group("reason"))]
            else:
                reasons = [reason for _, reason in pytest]
            # A test that is only a message (`cmake -E echo "not run under
            # ...: why"` with a skip expression) gives that line as its reason.
            lines = [line for line in output.strip().splitlines() if line.strip()]
            if not reasons and len(lines) == 1 and "[  SKIPPED ]" not in lines[0]:
                reasons = [one_line(lines[0])]
            found.append(Skip(name, None, "; ".join(reasons) or "(the test gave no reason)"))
        else:
            for count, reason in pytest:
                found.append(Skip(name, count, reason))
            found += gtest_case_skips(name, output)
    return found


def report(skips):
    """The lines printed after ctest's summary (none when nothing skipped)."""
    if not skips:
        return []
    whole = sum(1 for skip in skips if skip.cases is None)
    pytest = sum(skip.cases for skip in skips if skip.cases is not None and not skip.gtest_case)
    gtest = sum(1 for skip in skips if skip.gtest_case)
    parts = []
    if whole:
        parts.append(f"{whole} test(s) skipped")
    if pytest:
        parts.append(f"{pytest} pytest case(s) skipped in tests that ran")
    if gtest:
        parts.append(f"{gtest} GoogleTest case(s) skipped in programs that ran")
    lines = [", ".join(parts) + ", with the reasons they gave:"]
    for skip in skips:
        if skip.gtest_case:
            where = f"{skip.test} {skip.gtest_case}"
        elif skip.cases is None:
            where = skip.test
        else:
            where = f"{skip.test} ({skip.cases} case{'s' if skip.cases > 1 else ''})"
        lines.append(f"  {where}: {skip.reason}")
    return lines


def main(argv):
    build = Path(argv[1] if len(argv) > 1 else "build/release")
    logs = [log for log in (build / "Testing" / "Temporary").glob("LastTest*.log*")
            if _LOG_NAME.fullmatch(log.name) and log.is_file()]
    if not logs:
        print(f"skipped_tests: no ctest log under {build}/Testing/Temporary", file=sys.stderr)
        return 0
    # The newest: a .tmp left by an interrupted run is older.
    log = max(logs, key=lambda path: path.stat().st_mtime)
    for line in report(skips_in_log(log.read_text(errors="replace"))):
        print(line)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as error:  # never fail ctest's run because of the report
        print(f"skipped_tests: could not read the ctest log: {error}", file=sys.stderr)
        sys.exit(0)
