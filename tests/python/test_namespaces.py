"""Public namespaces hold only the API: every public name of the
package's user-facing modules is in its __all__, and every name in __all__
exists."""

from types import ModuleType

import accel
import pytest


@pytest.mark.parametrize("module", [accel, accel.memory, accel.accelerator])
def test_public_names_are_exactly_the_api(module: ModuleType) -> None:
    public = {n for n in dir(module) if not n.startswith("_")}
    declared = {n for n in module.__all__ if not n.startswith("_")}
    assert public - declared == set(), f"{module.__name__} leaks helpers"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert missing == []
