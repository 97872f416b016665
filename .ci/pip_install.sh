#!/usr/bin/env bash
# The README's Python install lines, as written, in this checkout: a venv of
# Debian's interpreter that sees apt's packages, `pip install .` (setup.py
# builds through CMake in build/pip-<python version>), then the console
# script `accel` and `import accel` from the venv, outside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf venv
/usr/bin/python3 -m venv --system-site-packages venv && venv/bin/python -m pip install --no-build-isolation -v .
venv/bin/accel info
venv=$PWD/venv
(cd / && "$venv/bin/python" - <<'PY'
import accel
accel.openreg.manual_seed(42)
print(f"import accel from {accel.__file__}: backends {accel.registered_backends()}")
PY
)
