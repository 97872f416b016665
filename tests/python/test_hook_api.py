"""The Python API is checked against the hook catalogue, so that the API is
declared once. accel._C._hook_catalogue() is include/accel/hook_catalogue.h's
kHookCatalogue as the binding compiled it; accel._C._python_api_of_hooks() is
the binding's table (python/src/hook_api.cpp, keyed by HookId enumerators) of
the Python names that reach each hook. This test fails when a hook is added
without deciding how Python exposes it, when a row names a Python function
that is gone, or when a backend.X name is not in every backend's API. Hook
names never appear here as text (tests/core/hook_name_literals_test.cpp): they come from _C."""

import sys
from typing import List

import accel
from accel import _C
from accel._backend import Backend

REASONS = {"lifetime", "internal"}  # the categories python/src/hook_api.cpp documents


def _resolve(obj: object, path: List[str]) -> object:
    for part in path:
        if not hasattr(obj, part):
            return None
        obj = getattr(obj, part)
    return obj


def test_every_catalogue_hook_has_exactly_one_row_in_catalogue_order() -> None:
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


def test_each_row_names_python_functions_or_says_why_not() -> None:
    for hook, names, reason in _C._python_api_of_hooks():
        if names:
            assert reason == "", f"{hook}: both names {names} and reason {reason!r}"
        else:
            assert reason in REASONS, f"{hook}: no Python name and reason {reason!r}"
        for name in names:
            assert name.split(".", 1)[0] in ("_C", "backend", "accel"), f"{hook}: {name}"


def test_every_named_python_function_exists_and_backend_ones_are_every_backends() -> None:
    # The stubs are generated (test_stubs.py): what exists is declared. A
    # backend.X name is the API of every backend: accel._backend.Backend's,
    # not only one backend's extras.
    api = Backend.api_names()
    problems = []
    for hook, names, _ in _C._python_api_of_hooks():
        for name in names:
            space, *path = name.split(".")
            module: object
            if space == "_C":
                module = _C
            elif space == "backend":
                module = accel.cuda
                if path[0] not in api:
                    problems.append(f"{hook}: {name} is not in accel._backend.Backend's API")
            else:
                module = accel
            if _resolve(module, path) is None:
                problems.append(f"{hook}: {name} does not exist")
    assert problems == [], "\n".join(problems)


def test_probes_are_reached_through_hooks_methods_and_groups_match_hooks_supports() -> None:
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
