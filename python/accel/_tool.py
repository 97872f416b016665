"""The `accel` command of a pip-installed package.

The wheel carries the C++ tool (the executable `accel` next to this module,
beside libaccel and the openreg plugin, which it finds there); the console
script that pip puts on PATH runs it with the same arguments."""

import os
import sys
from pathlib import Path


def main() -> None:
    tool = Path(__file__).resolve().parent / "accel"
    if not tool.is_file():
        sys.exit("accel: this installation of the accel package has no command-line tool "
                 "(it is built when GoogleTest, CLI11 and nlohmann-json are installed: "
                 "apt-get install libgtest-dev libcli11-dev nlohmann-json3-dev, then "
                 "reinstall)")
    os.execv(tool, [str(tool), *sys.argv[1:]])
