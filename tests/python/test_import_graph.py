"""The accel package has no import circle: the modules' import statements
(anywhere in a module, functions included) form an acyclic graph, and every
module imports first, in a fresh interpreter, with the others after it in any
order. A backend package (accel.openreg, accel.cuda, accel.opencl) imports
accel._backend and publishes its surface there; accel._backend imports no
backend package (backend() imports one by name, importlib, when the binding
built its native module)."""

import ast
import itertools
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Set, Tuple

import pytest

import accel

SOURCE = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "python",
                                       "accel"))


def module_names(root: str) -> Dict[str, str]:
    """{module name: file} of the package's Python sources and stubs (a .pyi
    without a .py is a native module: accel._C, accel.openreg._native)."""
    names = {}
    for folder, _, files in os.walk(root):
        for file in files:
            stem, ext = os.path.splitext(file)
            if ext not in (".py", ".pyi"):
                continue
            parts = ["accel"] + os.path.relpath(folder, root).split(os.sep)
            parts = [p for p in parts if p != "."]
            if stem != "__init__":
                parts.append(stem)
            name = ".".join(parts)
            if ext == ".py" or name not in names:
                names[name] = os.path.join(folder, file)
    return names


def import_graph(root: str) -> Dict[str, Set[str]]:
    """{module: set of modules its import statements name}, within accel."""
    names = module_names(root)
    graph: Dict[str, Set[str]] = {}
    for name, path in names.items():
        if not path.endswith(".py"):
            graph[name] = set()
            continue
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")
                    parent = parent[:len(parent) - (node.level - 1)]
                    base = ".".join(parent + ([base] if base else []))
                # `from P import X` names the module P.X when there is one, else P.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base
                           for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in names and t != name}
        graph[name] = edges
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One import circle as a list of modules, or None."""
    state: Dict[str, str] = {}

    def visit(node: str, path: List[str]) -> Optional[List[str]]:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_the_package_import_graph_is_acyclic() -> None:
    graph = import_graph(SOURCE)
    assert "accel._backend" in graph and "accel.openreg" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_circle() -> None:
    # The rule the test above relies on, on a graph with one circle.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def _importable() -> List[str]:
    names = []
    for name, path in sorted(module_names(SOURCE).items()):
        if name.endswith("opencl") or ".opencl." in name:
            if "accel.opencl._native" not in sys.modules:
                continue  # built without the OpenCL backend: accel.opencl raises ImportError
        names.append(name)
    return names


def _import_in_order(order: List[str]) -> "subprocess.CompletedProcess[str]":
    code = "import importlib\nfor name in %r:\n    importlib.import_module(name)\n" % (order,)
    env = dict(os.environ, ACCEL_AUTOLOAD="0")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)


def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    names = _importable()
    orders = [[first] + [n for n in names if n != first] for first in names]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(_import_in_order, orders))
    failed = [(order[0], r.stderr.strip().splitlines()[-1:]) for order, r in zip(orders, results)
              if r.returncode != 0]
    assert failed == []


@pytest.mark.parametrize("order", list(itertools.permutations(
    ["accel._backend", "accel.openreg", "accel.cuda", "accel.opencl"])))
def test_the_backend_modules_import_in_every_order(order: Tuple[str, ...]) -> None:
    result = _import_in_order([n for n in order if n in _importable()])
    assert result.returncode == 0, result.stderr
    assert accel  # the package under test is the one on PYTHONPATH
