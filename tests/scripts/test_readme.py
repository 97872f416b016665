"""README.md's quick start: what a newcomer reads first stays true.

The two commands and the quoted demo output are on the first screen, and the
dependency list names every Debian package scripts/dev.sh installs (what the
quoted output says is checked against the real run by
tests/tool/main_job_output.cmake)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRST_SCREEN = 50  # lines of a terminal or a browser window


def readme():
    return (ROOT / "README.md").read_text(encoding="utf-8")


def dev_sh_packages():
    text = (ROOT / "scripts" / "dev.sh").read_text(encoding="utf-8")
    listed = re.search(r"^packages=\((.*?)\)", text, re.S | re.M)
    assert listed, "scripts/dev.sh has no packages=(...) list"
    return listed.group(1).split()


def test_first_screen_has_the_two_commands_and_the_demo_output():
    first = "\n".join(readme().splitlines()[:FIRST_SCREEN])
    for command in ("scripts/dev.sh main", "scripts/dev.sh test"):
        assert command in first, f"{command!r} is not in README.md's first {FIRST_SCREEN} lines"
    assert "<!-- main job output:" in first, "the demo's output is not on the first screen"
    assert "\nShown: " in first and "\nNext: " in first, "the quoted output is cut short"


def test_dependency_list_names_every_package_dev_sh_installs():
    text = readme()
    packages = dev_sh_packages()
    assert "pocl-opencl-icd" in packages  # the list was read, not an empty match
    missing = [p for p in packages if f"`{p}`" not in text]
    assert not missing, f"README.md does not name these packages of scripts/dev.sh: {missing}"
