"""The Python API is checked against the hook catalogue, so that the API is
declared once. accel._C._hook_catalogue() is include/accel/hook_catalogue.h's
kHookCatalogue as the binding compiled it; accel._C._python_api_of_hooks() is
the binding's table (python/src/hook_api.cpp, keyed by HookId enumerators) of
the Python names that reach each hook. This test fails when a hook is added
without deciding how Python exposes it, when a row names a Python function
that is gone, or when a backend module's stub does not declare it. Hook names never appear
here as text (tests/core/hook_name_literals_test.cpp): they come from _C."""

import ast
import os
import sys

import accel
from accel import _C

PACKAGE = os.path.dirname(accel.__file__)
REASONS = {"lifetime", "internal"}  # the categories python/src/hook_api.cpp documents


def _declared(stub):
    """{top-level name: set of member names} of a .pyi file."""
    with open(os.path.join(PACKAGE, stub)) as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            out[node.name] |= {n.target.id for n in node.body
                               if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = set()
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = set()
    return out


def _resolve(obj, path):
    for part in path:
        if not hasattr(obj, part):
            return None
        obj = getattr(obj, part)
    return obj


def test_every_catalogue_hook_has_exactly_one_row_in_catalogue_order():
    catalogue = [name for name, _, _ in _C._hook_catalogue()]
    assert len(catalogue) == len(set(catalogue)) and catalogue
    rows = [hook for hook, _, _ in _C._python_api_of_hooks()]
    missing = [h for h in catalogue if h not in rows]
    assert missing == [], (
        f"hooks with no row in python/src/hook_api.cpp's kPythonApiOfHooks: {missing}; "
        "add one naming the Python functions that reach each, or a reason")
    duplicated = sorted({h for h in rows if rows.count(h) > 1})
    assert duplicated == [], f"hooks with more than one row: {duplicated}"
    assert rows == catalogue, "rows are not in the catalogue's order"


def test_each_row_names_python_functions_or_says_why_not():
    for hook, names, reason in _C._python_api_of_hooks():
        if names:
            assert reason == "", f"{hook}: both names {names} and reason {reason!r}"
        else:
            assert reason in REASONS, f"{hook}: no Python name and reason {reason!r}"
        for name in names:
            assert name.split(".", 1)[0] in ("_C", "backend", "accel"), f"{hook}: {name}"


def test_every_named_python_function_exists_and_backend_ones_are_in_their_stub():
    # _C's stub is generated from the module (test_stubs.py): what exists is declared.
    backend_stub = _declared("_backend_api.pyi")
    backend_module = accel.openreg if "accel.openreg._native" in sys.modules else None
    problems = []
    for hook, names, _ in _C._python_api_of_hooks():
        for name in names:
            space, *path = name.split(".")
            if space == "_C":
                stub, module = None, _C
            elif space == "backend":
                stub, module = backend_stub, backend_module
            else:
                stub, module = None, accel
            if module is not None and _resolve(module, path) is None:
                problems.append(f"{hook}: {name} does not exist")
            if stub is not None:
                top, *member = path
                if top not in stub or (member and member[0] not in stub[top]):
                    problems.append(f"{hook}: {name} is not declared in its stub")
    assert problems == [], "\n".join(problems)


def test_probes_are_reached_through_hooks_methods_and_groups_match_hooks_supports():
    rows = {hook: names for hook, names, _ in _C._python_api_of_hooks()}
    groups = set()
    for hook, group, probe in _C._hook_catalogue():
        groups.add(group)
        if probe:
            direct = [n for n in rows[hook] if n.startswith("_C.Hooks.")]
            assert direct, f"probe {hook} has no _C.Hooks method"
    hooks = _C.Hooks("openreg") if "accel.openreg._native" in sys.modules else None
    for group in sorted(groups):
        if hooks is not None:
            assert isinstance(hooks.supports(group), bool), group
    # Hooks.capabilities() names only catalogue groups.
    if hooks is not None:
        assert set(hooks.capabilities()) <= groups
