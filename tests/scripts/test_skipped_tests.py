"""scripts/skipped_tests.py: ctest's output names every skip with its reason.

Configures tests/scripts/skip_fixture (tests that print what GoogleTest and
pytest print when they skip) with the project's cmake/ctest_custom.cmake,
runs ctest on it and reads what ctest printed."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import skipped_tests  # noqa: E402


def run_fixture(tmp_path):
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(Path(__file__).parent / "skip_fixture"), "-B", str(build),
                    f"-Daccelhooks_SOURCE_DIR={ROOT}", f"-DACCEL_PYTHON_EXECUTABLE={sys.executable}"],
                   check=True, capture_output=True)
    return subprocess.run(["ctest", "--test-dir", str(build), "-j2"], capture_output=True,
                          text=True)


def test_ctest_output_ends_with_each_skip_and_its_reason(tmp_path):
    result = run_fixture(tmp_path)
    out = result.stdout
    # The one failure: skipped cases beside an error are not a skip.
    assert "python.skipped_and_error (Failed)" in out, out
    summary = out.index("The following tests did not run:")
    listing = out[summary:]
    assert "Gtest.Skips (Skipped)" in listing and "python.all_skipped (Skipped)" in listing
    assert ("2 test(s) skipped, 2 pytest case(s) skipped in tests that ran, "
            "1 GoogleTest case(s) skipped in programs that ran" in listing)
    assert "  Gtest.Skips: no CUDA device: cudaErrorNoDevice\n" in listing
    assert ("  python.all_skipped: torch is not installed (apt-get install python3-torch)\n"
            in listing)
    assert "  python.some_skipped (1 case): no CUDA device\n" in listing
    assert "Gtest.Passes" not in listing
    # A whole program passes by its other cases and names the case it skipped.
    assert "gtest_program (Skipped)" not in listing and "gtest_program (Failed)" not in out
    assert "  gtest_program Program.Skips: needs two devices\n" in listing
    assert "Program.Passes" not in listing and "Program.AlsoPasses" not in listing
    assert "python.skipped_and_error (Skipped)" not in listing


def test_nothing_is_printed_when_nothing_skipped():
    log = ("1/1 Testing: A.B\n1/1 Test: A.B\nOutput:\n----------\n[       OK ] A.B\n"
           "<end of output>\nTest Passed.\n")
    assert skipped_tests.report(skipped_tests.skips_in_log(log)) == []


def test_a_skip_without_a_message_says_so():
    log = ("1/1 Testing: A.B\n1/1 Test: A.B\nOutput:\n----------\nx.cpp:3: Skipped\n\n"
           "[  SKIPPED ] A.B (0 ms)\n<end of output>\nTest Pass Reason:\n"
           "Skip regular expression found in output. Regex=[x]\n")
    assert skipped_tests.skips_in_log(log) == [
        skipped_tests.Skip("A.B", None, "(the test gave no reason)")]


def test_a_build_directory_without_a_log_is_not_an_error(tmp_path, capsys):
    assert skipped_tests.main(["skipped_tests.py", str(tmp_path)]) == 0
    assert "no ctest log" in capsys.readouterr().err


def test_a_log_with_a_date_in_its_name_is_read(tmp_path, capsys):
    # Some ctest versions name the log LastTest_<date>.log; the newest is read.
    logs = tmp_path / "Testing" / "Temporary"
    logs.mkdir(parents=True)
    (logs / "LastTest_20261126-0133.log.tmp").write_text(
        "1/1 Testing: A.B\n1/1 Test: A.B\nOutput:\n----------\nx.cpp:3: Skipped\nno GPU\n\n"
        "[  SKIPPED ] A.B (0 ms)\n<end of output>\nTest Pass Reason:\n"
        "Skip regular expression found in output. Regex=[x]\n")
    assert skipped_tests.main(["skipped_tests.py", str(tmp_path)]) == 0
    assert "  A.B: no GPU\n" in capsys.readouterr().out


def test_a_skip_that_is_one_message_gives_it_as_the_reason():
    log = ("1/1 Testing: clang.check\n1/1 Test: clang.check\nOutput:\n----------\n"
           "not run under ThreadSanitizer: the plugin is not instrumented\n"
           "<end of output>\nTest Pass Reason:\n"
           "Skip regular expression found in output. Regex=[not run under]\n")
    assert skipped_tests.skips_in_log(log) == [
        skipped_tests.Skip("clang.check", None,
                           "not run under ThreadSanitizer: the plugin is not instrumented")]
