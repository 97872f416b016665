"""The committed stubs of the native modules (python/accel/_C.pyi and each
backend's <type>/_native.pyi) are what the binding declares: a fresh run of
python/tools/generate_stubs.py over the built accel._C gives them byte for
byte. The binding is the one declaration (its pybind11 signatures, with the
Python types python/src/typed_object.h states); the stubs are derived, so a
binding changed without regenerating them fails here, with the diff and the
command that rewrites them."""

import difflib
import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Tuple

from accel import _C

SOURCE = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
GENERATOR = os.path.join(SOURCE, "python", "tools", "generate_stubs.py")
COMMITTED = os.path.join(SOURCE, "python", "accel")
REGENERATE = "cmake --build build/release --target accel_python_stubs_update"


def _generate(output_dir: Path) -> Iterator[Tuple[str, str]]:
    result = subprocess.run(
        [sys.executable, GENERATOR, "--surfaces", "--module-file", _C.__file__,
         "--output-dir", str(output_dir)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    for folder, _, files in os.walk(output_dir):
        for name in files:
            path = os.path.join(folder, name)
            yield os.path.relpath(path, output_dir), path


def test_committed_stubs_are_what_the_binding_declares(tmp_path: Path) -> None:
    generated = dict(_generate(tmp_path))
    assert "_C.pyi" in generated
    problems = []
    for relative, path in sorted(generated.items()):
        committed = os.path.join(COMMITTED, relative)
        with open(path) as f:
            fresh = f.read().splitlines(keepends=True)
        old = []
        if os.path.exists(committed):
            with open(committed) as f:
                old = f.readlines()
        if old != fresh:
            problems.append("".join(difflib.unified_diff(
                old, fresh, f"python/accel/{relative} (committed)",
                f"python/accel/{relative} (from the binding)")))
    assert problems == [], (
        "the committed stubs differ from what the binding declares; rewrite them with `"
        + REGENERATE + "` and commit them:\n" + "\n".join(problems))


def test_every_native_module_of_the_package_has_its_stub(tmp_path: Path) -> None:
    # What importing _C created, each with a stub in the package's layout.
    generated = dict(_generate(tmp_path))
    native = sorted(name for name in sys.modules
                    if name.startswith("accel.") and name.endswith("._native"))
    assert native, "no backend's native module: accel built without openreg?"
    for name in native:
        relative = os.path.join(*name.split(".")[1:]) + ".pyi"
        assert relative in generated, f"{name} has no generated stub"


def test_an_untyped_binding_is_refused_naming_it(tmp_path: Path) -> None:
    # A signature naming no Python type is no stub: the generator says which
    # binding to annotate instead of writing `handle` (run on a module made
    # for the purpose, by the generator's own functions).
    sys.path.insert(0, os.path.dirname(GENERATOR))
    try:
        generate_stubs = importlib.import_module("generate_stubs")
    finally:
        sys.path.pop(0)
    import types
    module = types.ModuleType("accel._fake")

    def untyped() -> None:
        pass

    untyped.__doc__ = "untyped(buffer: handle) -> None\n"
    setattr(module, "untyped", untyped)
    try:
        generate_stubs.Writer(module).write()
    except generate_stubs.StubError as error:
        assert "accel._fake.untyped" in str(error) and "handle" in str(error)
    else:
        raise AssertionError("an untyped signature was accepted")
