"""Writes the type stubs of the accel package's native modules from the binding.

    generate_stubs.py --module-file build/release/python/accel/_C.<abi>.so --output-dir DIR

The binding is the one declaration of the native API: pybind11 writes each
function's signature as the first line of its docstring (one numbered line
per overload), with the Python types the binding states (python/src/
typed_object.h for arguments pybind11 would call `handle` or `object`). This
script loads accel._C from `--module-file` (without importing the accel
package around it, so no plugin is loaded and no backend registered), takes
the modules importing it created (each built backend's accel.<type>._native,
python/src/backend_modules.h) and writes one stub per module under DIR, in
the package's layout: DIR/_C.pyi, DIR/openreg/_native.pyi, ...

The build runs it into the build tree's package (target accel_python_stubs);
`cmake --build build/release --target accel_python_stubs_update` runs it into
python/accel, which holds the committed copies that tests/python/test_stubs.py
compares with a fresh run. A signature that names a C++ type or one of
pybind11's untyped handles (`handle`, `function`, ...) is an error saying
which binding to annotate: a stub never guesses a type.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import os
import re
import sys
import types
from typing import Dict, Iterator, List, Optional, Tuple

PACKAGE = "accel"
HEADER = ("# Generated from the binding (python/src/) by python/tools/generate_stubs.py; do not\n"
          "# edit. `cmake --build build/release --target accel_python_stubs_update` rewrites it.\n")

# pybind11's names for its own object wrappers that say nothing of the type:
# the binding must state one (typed_object.h).
UNTYPED = ("handle", "function", "cpp_function", "buffer", "capsule", "args", "kwargs")
# pybind11's names for Python containers without element types, written as
# typing's explicit forms (a stub under mypy --strict needs the parameters).
GENERIC = {"dict": "Dict[Any, Any]", "list": "List[Any]", "tuple": "Tuple[Any, ...]",
           "object": "Any", "set": "Set[Any]", "iterable": "Iterable[Any]",
           "Iterable": "Iterable[Any]", "iterator": "Iterator[Any]", "Iterator": "Iterator[Any]"}
TYPING = ("Any", "Callable", "Dict", "Iterable", "Iterator", "List", "Optional", "Sequence",
          "Set", "Tuple", "Type", "Union")
SIMPLE_DEFAULT = re.compile(r"^(None|True|False|-?\d+(\.\d+)?(e-?\d+)?|'[^'\\]*'|\"[^\"\\]*\")$")
SKIPPED_MEMBERS = {"__module__", "__doc__", "__dict__", "__weakref__", "__qualname__",
                   "__annotations__", "_pybind11_conduit_v1_"}


class StubError(Exception):
    """A binding whose signature cannot become a stub; the message says which."""


def split_top_level(text: str, separator: str = ",") -> List[str]:
    """`text` split at `separator` outside brackets and quotes."""
    parts: List[str] = []
    depth, quote, current = 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == separator and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


class Writer:
    """The stub text of one module."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.imports: set[str] = set()
        self.lines: List[str] = []
        self.errors: List[str] = []

    # ---- types ----
    def type_text(self, text: str, where: str) -> str:
        """A pybind11 type as stub text: this module's qualified names made
        local, another module's imported, generic containers made explicit."""
        text = text.strip()
        if "::" in text or re.search(r"\b(%s)\b" % "|".join(UNTYPED), text):
            raise StubError(f"{where}: the binding's signature names '{text}', which is no "
                            "Python type; state one (python/src/typed_object.h)")

        def qualified(match: re.Match[str]) -> str:
            name = match.group(0)
            owner, _, local = name.rpartition(".")
            if owner == self.module.__name__:
                return local
            if owner in ("builtins", ""):
                return local
            self.imports.add(owner)
            return name

        text = re.sub(r"\b[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+\b", qualified, text)
        return re.sub(r"\b(%s)\b(?!\[)" % "|".join(GENERIC), lambda m: GENERIC[m.group(1)], text)

    # ---- signatures ----
    def signatures(self, obj: object, name: str, where: str) -> List[Tuple[str, str]]:
        """[(parameter text, return text)] from pybind11's docstring of `obj`."""
        doc = getattr(obj, "__doc__", None) or ""
        lines = doc.splitlines()
        if len(lines) > 1 and lines[1] == "Overloaded function.":
            lines = [line for line in lines[2:] if re.match(r"^\d+\. ", line)]
        else:
            lines = lines[:1]
        pattern = re.compile(r"^(?:\d+\. )?" + re.escape(name) + r"\((.*)\) -> (.+)$")
        found = []
        for line in lines:
            match = pattern.match(line)
            if match is None:
                raise StubError(f"{where}: no pybind11 signature in its docstring "
                                f"({line!r}); bind it with a typed lambda")
            found.append((match.group(1), match.group(2)))
        if not found:
            raise StubError(f"{where}: no docstring signature")
        return found

    def parameters(self, text: str, where: str, method: bool) -> str:
        out: List[str] = []
        for index, part in enumerate(split_top_level(text)):
            if part in ("*", "/"):
                out.append(part)
                continue
            if method and index == 0:
                out.append("self")
                continue
            if part.startswith("**") or part.startswith("*"):
                stars = "**" if part.startswith("**") else "*"
                out.append(f"{stars}{part.lstrip('*').split(':')[0].strip()}: Any")
                continue
            name, _, rest = part.partition(":")
            annotation, equals, default = rest.partition("=")
            name = name.strip()
            if re.fullmatch(r"arg\d+", name):
                raise StubError(f"{where}: parameter {name} has no name; give it a py::arg")
            param = f"{name}: {self.type_text(annotation, where)}"
            if equals:
                default = default.strip()
                param += " = " + (default if SIMPLE_DEFAULT.match(default) else "...")
            out.append(param)
        return ", ".join(out)

    def function(self, obj: object, name: str, where: str, indent: str, method: bool,
                 decorator: Optional[str] = None) -> None:
        sigs = self.signatures(obj, name, where)
        for params, returns in sigs:
            if len(sigs) > 1:
                self.lines.append(f"{indent}@overload")
            if decorator:
                self.lines.append(f"{indent}@{decorator}")
            self.lines.append(f"{indent}def {name}({self.parameters(params, where, method)}) -> "
                              f"{self.type_text(returns, where)}: ...")

    # ---- members ----
    def exception(self, name: str, cls: type) -> None:
        self.separate()
        bases = ", ".join(self.class_name(b) for b in cls.__bases__)
        annotations: Dict[str, str] = dict(vars(cls).get("__annotations__", {}))
        if not annotations:
            self.lines += [f"class {name}({bases}): ...", ""]
            return
        self.lines.append(f"class {name}({bases}):")
        for attribute, annotation in annotations.items():
            self.lines.append(f"    {attribute}: {self.type_text(annotation, name)}")
        self.lines.append("")

    def separate(self) -> None:
        """A blank line before a class (unless one is there already)."""
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def class_name(self, cls: type) -> str:
        if cls.__module__ == "builtins":
            return cls.__name__
        if vars(self.module).get(cls.__name__) is cls:
            return cls.__name__
        self.imports.add(cls.__module__)
        return f"{cls.__module__}.{cls.__qualname__}"

    def pybind_class(self, name: str, cls: type) -> None:
        self.separate()
        bases = [self.class_name(b) for b in cls.__bases__
                 if b.__name__ != "pybind11_object"]
        self.lines.append(f"class {name}{'(' + ', '.join(bases) + ')' if bases else ''}:")
        start = len(self.lines)
        for member, value in vars(cls).items():
            if member in SKIPPED_MEMBERS or value is None:
                continue
            if isinstance(value, types.WrapperDescriptorType):
                continue  # a C slot pybind11 installs (no constructor bound): nothing declared
            try:
                self.member(member, value, f"{self.module.__name__}.{name}.{member}")
            except StubError as error:
                self.errors.append(str(error))
        if len(self.lines) == start:
            self.lines[-1] += " ..."
        self.lines.append("")

    def member(self, member: str, value: object, where: str) -> None:
        if isinstance(value, property):
            _, returns = self.signatures(value.fget, "", where)[0]
            annotation = self.type_text(returns, where)
            if value.fset is not None:
                self.lines.append(f"    {member}: {annotation}")
            else:
                self.lines += ["    @property", f"    def {member}(self) -> {annotation}: ..."]
        elif isinstance(value, staticmethod):
            self.function(value.__func__, member, where, "    ", False, "staticmethod")
        elif callable(value):
            self.function(value, member, where, "    ", True)
        else:
            self.lines.append(f"    {member}: {self.class_name(type(value))}")

    def top_level(self, name: str, value: object, where: str) -> None:
        if isinstance(value, type) and issubclass(value, BaseException):
            self.exception(name, value)
        elif isinstance(value, type):
            self.pybind_class(name, value)
        elif isinstance(value, types.ModuleType):
            raise StubError(f"{where}: a submodule; make it a module of its own "
                            "(python/src/backend_modules.h)")
        elif callable(value):
            self.function(value, name, where, "", False)
        else:
            self.lines.append(f"{name}: {self.class_name(type(value))}")

    def write(self) -> str:
        """The stub's text. Raises StubError listing every binding to fix."""
        for name, value in vars(self.module).items():
            if name.startswith("__"):
                continue
            try:
                self.top_level(name, value, f"{self.module.__name__}.{name}")
            except StubError as error:
                self.errors.append(str(error))
        if self.errors:
            raise StubError("\n".join(self.errors))
        body = "\n".join(self.lines).strip("\n") + "\n"
        used = sorted(n for n in TYPING if re.search(r"\b%s\b" % n, body))
        if "@overload" in body:
            used.append("overload")
        head = [HEADER + f'"""Type stubs of {self.module.__name__}."""', ""]
        if used:
            head.append(f"from typing import {', '.join(used)}")
        head += [f"import {module}" for module in sorted(self.imports)]
        return "\n".join(head) + "\n\n" + body


def load_native_modules(module_file: str) -> Iterator[types.ModuleType]:
    """accel._C loaded from `module_file`, then the modules it created."""
    before = set(sys.modules)
    name = f"{PACKAGE}._C"
    loader = importlib.machinery.ExtensionFileLoader(name, module_file)
    spec = importlib.util.spec_from_file_location(name, module_file, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    yield module
    for created in sorted(set(sys.modules) - before - {name}):
        if created.startswith(PACKAGE + "."):
            yield sys.modules[created]


def stub_path(module_name: str) -> str:
    """The stub's path in the package: accel.openreg._native -> openreg/_native.pyi."""
    return os.path.join(*module_name.split(".")[1:]) + ".pyi"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module-file", required=True, help="the built accel._C")
    parser.add_argument("--output-dir", required=True, help="the package directory to write")
    args = parser.parse_args(argv)
    try:
        stubs = {stub_path(m.__name__): Writer(m).write()
                 for m in load_native_modules(args.module_file)}
    except StubError as error:
        print(f"generate_stubs.py: {args.module_file}:\n{error}", file=sys.stderr)
        return 1
    for path, text in stubs.items():
        target = os.path.join(args.output_dir, path)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        with open(target, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
