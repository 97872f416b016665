"""The hand-written stubs of the backend modules are checked against the
modules: every backend module's public names are in _backend_api.pyi or its
own __init__.pyi and back, with the same signatures (the native modules'
stubs are generated: test_stubs.py)."""

import ast
import importlib
import inspect
import os
import re
import types

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


def test_every_backend_module_function_is_declared_in_the_backend_stub():
    declared = _declared(_stub("_backend_api.pyi"))
    module = accel.openreg
    api = set(_C.Hooks("openreg").probes()) | set(declared)
    for name in declared:
        assert hasattr(module, name), f"_backend_api.pyi declares {name}, accel.openreg lacks it"
    populated = {n for n in vars(accel.backend("cuda")) if not n.startswith("_")} - {"random"}
    assert sorted(populated - api) == []


# ---- signatures: the API is declared once ----
# pybind11 writes each function's signature as the first line of its
# docstring ("name(a: int, b: str = 'x') -> bool"; one numbered line per
# overload); the stub's def must have the same parameters in the same order,
# with the same names, the same defaults present, the same keyword-only ones,
# and, where pybind11 names a plain return type, the same return type.

_PLAIN_RETURNS = {"None", "bool", "int", "float", "str", "bytes"}


def _split_params(text):
    """Splits a parameter list at top-level commas (defaults may hold any repr)."""
    parts, depth, quote, current = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _pybind_params(text):
    """[(name, has_default, kind)] of one pybind11 signature's parameter text."""
    params, keyword_only = [], False
    for part in _split_params(text):
        if part == "*":
            keyword_only = True
        elif part == "/":
            continue
        elif part.startswith("**"):
            params.append((part[2:].split(":")[0].strip(), False, "varkw"))
        elif part.startswith("*"):
            params.append((part[1:].split(":")[0].strip(), False, "var"))
            keyword_only = True
        else:
            name = part.split(":")[0].split("=")[0].strip()
            params.append((name, "=" in part, "kw" if keyword_only else "pos"))
    return params


def _pybind_signatures(obj, name):
    """[(params, return text)] from a pybind11 docstring; None if it has none."""
    doc = getattr(obj, "__doc__", None) or ""
    pattern = re.compile(r"^(?:\d+\. )?" + re.escape(name) + r"\((.*)\) -> (.+)$")
    lines = doc.splitlines()
    if len(lines) > 1 and lines[1] == "Overloaded function.":
        lines = lines[2:]
    else:
        lines = lines[:1]
    found = [pattern.match(line) for line in lines]
    sigs = [(_pybind_params(m.group(1)), m.group(2).strip()) for m in found if m]
    return sigs or None


def _stub_params(node, drop_self=False):
    a = node.args
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    params = [(arg.arg, i >= first_default, "pos") for i, arg in enumerate(positional)]
    if a.vararg:
        params.append((a.vararg.arg, False, "var"))
    params += [(arg.arg, default is not None, "kw")
               for arg, default in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        params.append((a.kwarg.arg, False, "varkw"))
    if drop_self and params and params[0][0] == "self":
        params = params[1:]
    return params


def _stub_functions(body):
    """{name: [FunctionDef, ...]} (several for @overload)."""
    out = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
    return out


def _is_property(node):
    return any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def _compare(where, real, stub_nodes, drop_self=False, bound=False):
    """Mismatches between pybind11's signatures of `real` and the stub's defs.
    drop_self: the stub's defs take a self the binding has not (a class that
    describes a submodule); bound: `real` is a bound method, whose pybind11
    signature still names self."""
    sigs = _pybind_signatures(real, stub_nodes[0].name)
    if sigs is None:
        return []
    if bound:
        sigs = [(p[1:] if p and p[0][0] == "self" else p, r) for p, r in sigs]
    stubs = [(_stub_params(n, drop_self), ast.unparse(n.returns) if n.returns else None)
             for n in stub_nodes if not _is_property(n)]
    if not stubs:
        return []
    problems = []
    for params, returns in sigs:
        matching = [s for s in stubs if s[0] == params]
        if not matching:
            problems.append(f"{where}: pybind11 has ({_show(params)}), the stub "
                            f"{' / '.join('(' + _show(s[0]) + ')' for s in stubs)}")
        elif returns in _PLAIN_RETURNS and all(s[1] != returns for s in matching):
            problems.append(f"{where}: returns {returns}, the stub says {matching[0][1]}")
    for params, _ in stubs:
        if all(params != p for p, _ in sigs):
            problems.append(f"{where}: the stub declares ({_show(params)}), which pybind11 lacks")
    return sorted(set(problems))


def _show(params):
    marks = {"pos": "", "kw": "*", "var": "*args:", "varkw": "**"}
    return ", ".join(marks[k] + n + ("=" if d else "") for n, d, k in params)


def _python_params(function):
    params = []
    for p in inspect.signature(function).parameters.values():
        kind = {p.VAR_POSITIONAL: "var", p.VAR_KEYWORD: "varkw", p.KEYWORD_ONLY: "kw"}.get(
            p.kind, "pos")
        params.append((p.name, p.default is not p.empty, kind))
    return params


def _backend_stub_functions(module_name):
    functions = _stub_functions(_stub("_backend_api.pyi").body)
    own = os.path.join(module_name, "__init__.pyi")
    if os.path.exists(os.path.join(PACKAGE, own)):
        functions.update(_stub_functions(_stub(own).body))
    return functions


def test_every_backend_module_function_signature_matches_its_stub():
    problems = []
    for module_name in ("openreg", "cuda", "opencl"):
        try:
            module = importlib.import_module("accel." + module_name)
        except ImportError:
            continue
        for name, nodes in _backend_stub_functions(module_name).items():
            real = getattr(module, name, None)
            if real is None or not callable(real) or isinstance(real, type):
                continue
            try:
                params = _python_params(real)
            except (TypeError, ValueError):
                sigs = _pybind_signatures(real, name)  # a binding exported as is
                if sigs is None:
                    problems.append(f"accel.{module_name}.{name}: no signature to compare")
                    continue
                # A method bound to a binding object (hooks.capabilities): its
                # signature names self. (A fastFunction's __self__ is a capsule.)
                bound = getattr(real, "__self__", None)
                drop = bound is not None and not isinstance(bound, types.ModuleType) \
                    and type(bound).__name__ != "PyCapsule"
                problems += _compare(f"accel.{module_name}.{name}", real, nodes, bound=drop)
                continue
            stubs = [_stub_params(n) for n in nodes]
            if params not in stubs:
                problems.append(f"accel.{module_name}.{name}: is ({_show(params)}), the stub "
                                f"{' / '.join('(' + _show(s) + ')' for s in stubs)}")
    assert problems == [], "\n".join(problems)


def test_every_backend_module_name_is_in_its_stubs_and_back():
    for module_name in ("openreg", "cuda", "opencl"):
        try:
            module = importlib.import_module("accel." + module_name)
        except ImportError:
            continue
        declared = set(_declared(_stub("_backend_api.pyi")))
        own = os.path.join(module_name, "__init__.pyi")
        if os.path.exists(os.path.join(PACKAGE, own)):
            tree = _stub(own)
            declared |= set(_declared(tree))
            declared |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom)
                         and n.module != "typing" for a in n.names if a.name != "*"}
        public = {n for n in vars(module) if not n.startswith("_")
                  and not isinstance(vars(module)[n], types.ModuleType) or n == "random"}
        public = {n for n in public if not n.startswith("_")}
        missing = sorted(public - declared)
        assert missing == [], f"accel.{module_name} has {missing}, not in its stubs"
        stale = sorted(n for n in declared if not n.startswith("_") and not hasattr(module, n)
                       and n not in ("Any", "Dict", "Optional", "DeviceLike"))
        assert stale == [], f"the stubs of accel.{module_name} declare {stale}, which it lacks"
