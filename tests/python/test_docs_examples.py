"""The worked examples of docs/python.md run as written: each ```python block,
in a fresh interpreter and an empty folder (the OpenCL one where a usable
OpenCL device is present)."""

import os
import re
from pathlib import Path
from typing import List

import pytest

from conftest import RunPython

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


def _examples() -> List[str]:
    with open(DOC) as f:
        text = f.read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_reference_has_its_worked_examples() -> None:
    assert len(_examples()) >= 3


@pytest.mark.parametrize("index", range(len(_examples())))
def test_a_worked_example_runs(run_python: RunPython, tmp_path: Path, index: int,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    code = _examples()[index]
    monkeypatch.chdir(tmp_path)
    result = run_python(code, env={"ACCEL_ACCELERATOR": ""})
    if "accel.opencl" in code and result.returncode != 0 and "Error" not in result.stderr:
        pytest.skip("no usable OpenCL device: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
