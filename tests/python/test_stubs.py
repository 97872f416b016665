"""The .pyi stubs are checked against the module (issue 20): every function,
class and method accel._C defines is declared in _C.pyi and every declaration
exists, and every backend module's API is in _backend_api.pyi."""

import ast
import os

import accel
from accel import _C

PACKAGE = os.path.dirname(accel.__file__)


def _stub(name):
    with open(os.path.join(PACKAGE, name)) as f:
        return ast.parse(f.read())


def _declared(tree):
    """{name: set of member names (None for functions/variables)}."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            out[node.name] |= {n.target.id for n in node.body
                               if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = None
    return out


def _members(cls):
    return {n for n in vars(cls) if not n.startswith("__") or n in ("__dlpack__",)}


def test_every_binding_is_declared_in_the_stub_and_every_declaration_exists():
    declared = _declared(_stub("_C.pyi"))
    module = {n for n in dir(_C) if not n.startswith("__")}
    missing = sorted(n for n in module if n not in declared)
    assert missing == [], f"in accel._C but not in _C.pyi: {missing}"
    stale = sorted(n for n in declared if not n.startswith("_") or n in module
                   if n not in module and not n.startswith("_DeviceArg")
                   and n not in ("_BufferLike", "_OpenRegModule"))
    assert stale == [], f"in _C.pyi but not in accel._C: {stale}"
    for name, members in declared.items():
        obj = getattr(_C, name, None)
        if members is None or not isinstance(obj, type) or issubclass(obj, BaseException):
            continue
        real = _members(obj)
        undeclared = sorted(real - members - {"__init__"})
        assert undeclared == [], f"_C.{name} has {undeclared} not in _C.pyi"
        vanished = sorted(m for m in members if not m.startswith("__") and m not in real)
        assert vanished == [], f"_C.pyi declares _C.{name}.{vanished}, which it lacks"


def test_every_backend_module_function_is_declared_in_the_backend_stub():
    declared = _declared(_stub("_backend_api.pyi"))
    module = accel.openreg
    api = set(_C.Hooks("openreg").probes()) | set(declared)
    for name in declared:
        assert hasattr(module, name), f"_backend_api.pyi declares {name}, accel.openreg lacks it"
    populated = {n for n in vars(accel.backend("cuda")) if not n.startswith("_")} - {"random"}
    assert sorted(populated - api) == []
