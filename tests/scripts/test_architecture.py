"""docs/architecture.md's include rules hold in the code.

The page's table says which modules of the core each module may include;
every `#include "..."` of src/core/<module>/ and of the public headers
(include/accel/, each belonging to a module by the page's rule) must name a
header of the same module or of one the table allows. Outside the core
(backends, tools, python, conformance, examples) nothing includes the
core's own headers under src/core/: only include/accel/."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "src" / "core"
PUBLIC = ROOT / "include" / "accel"
MARKER = "<!-- include rules: tests/scripts/test_architecture.py reads this table -->"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".hpp", ".cpp", ".inc")


def allowed_includes():
    """{module: set of modules it may include} from the page's table."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert MARKER in text, "docs/architecture.md has lost its include-rules table"
    rows = {}
    for line in text.split(MARKER, 1)[1].lstrip().splitlines():
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = re.fullmatch(r"`(\w+)`", cells[0])
        if name:
            rows[name.group(1)] = {m.strip() for m in cells[-1].split(",") if m.strip()}
    return rows


def modules():
    return sorted(p.name for p in CORE.iterdir() if p.is_dir())


def module_of_public_header(name):
    """The page's rule: which module a header under include/accel/ belongs to."""
    if name.startswith("memory/"):
        return "memory"
    if name.startswith("kit/"):
        return "kit"
    if name.startswith("plugin"):
        return "plugins"
    if name.startswith(("philox", "random_fill")):
        return "random"
    if name == "handle_pool.h":
        return "handle_pool"
    if name == "accel.h":  # the umbrella header includes everything, for users
        return None
    return "hooks"


def module_of_include(include, names):
    if include.startswith("accel/"):
        return module_of_public_header(include[len("accel/"):])
    first = include.split("/", 1)[0]
    return first if first in names and (CORE / include).exists() else None


def core_files():
    """(module, path) for every source of the core and every public header."""
    for name in modules():
        for path in (CORE / name).rglob("*"):
            if path.suffix in SOURCES:
                yield name, path
    for path in PUBLIC.rglob("*.h"):
        owner = module_of_public_header(path.relative_to(PUBLIC).as_posix())
        if owner is not None:
            yield owner, path


def test_the_table_names_every_module_of_the_core():
    table = allowed_includes()
    assert sorted(table) == modules(), (sorted(table), modules())
    for name, uses in table.items():
        assert uses <= set(modules()), f"{name} may include unknown modules {uses - set(modules())}"


def test_every_include_in_the_core_is_one_the_table_allows():
    table = allowed_includes()
    names = set(modules())
    broken = []
    for owner, path in core_files():
        for include in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            target = module_of_include(include, names)
            if target is None or target == owner or target in table[owner]:
                continue
            broken.append(f"{path.relative_to(ROOT)} ({owner}) includes {include} ({target})")
    assert not broken, ("includes that docs/architecture.md does not allow "
                        "(change the code, or the page's table first):\n" + "\n".join(broken))


def test_nothing_outside_the_core_includes_its_own_headers():
    broken = []
    for top in ("backends", "tools", "python", "conformance", "examples"):
        for path in (ROOT / top).rglob("*"):
            if path.suffix not in SOURCES:
                continue
            part = path.relative_to(ROOT).parts
            own = ROOT.joinpath(*part[:2]) if top in ("backends", "examples") else ROOT / top
            for include in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
                if include.startswith("accel/") or not (CORE / include).exists():
                    continue
                local = [path.parent, own, own / "src", own / "include"]
                if not any((d / include).exists() for d in local):
                    broken.append(f"{path.relative_to(ROOT)} includes src/core/{include}")
    assert not broken, "\n".join(broken)
