#!/usr/bin/env bash
# Installs a finished accelhooks build into a scratch prefix, builds
# examples/out_of_tree_backend against the installed package (CMake package
# and pkg-config file), and loads the resulting plugin. Fails loudly at the
# first step that does not work.
#
#   .ci/out_of_tree.sh [build dir]      (default: build/release, already built)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/release}
[[ -f $build/CMakeCache.txt ]] || { echo "out_of_tree: no configured build in $build" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/accel_out_of_tree.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
step() { echo "== out_of_tree: $*"; }
fail() { echo "out_of_tree: FAILED: $*" >&2; exit 1; }

step "install $build into $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
libdir=$(cd "$prefix" && dirname "$(find . -name 'libaccel.so' -print -quit)")
[[ $libdir != . ]] || fail "no libaccel.so installed"
soname=$(readelf -d "$prefix/$libdir/libaccel.so" | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
[[ $soname == libaccel.so.* ]] || fail "libaccel.so has no versioned SONAME (got '$soname')"
[[ -f $prefix/include/accel/plugin.h ]] || fail "headers not installed"
[[ -f $prefix/$libdir/cmake/accelhooks/accelhooksConfig.cmake ]] || fail "CMake package not installed"
# What the docs send a vendor to, installed with the repository's layout.
docdir=$prefix/share/doc/accelhooks
for f in README.md docs/writing-a-backend.md docs/openreg.md examples/out_of_tree_backend/CMakeLists.txt \
         examples/out_of_tree_backend/example_backend.cpp backends/openreg/src/openreg_backend.cpp \
         conformance/src/high_cases.cpp; do
  [[ -f $docdir/$f ]] || fail "$docdir/$f not installed"
done

# Every relative link of the installed pages leads to an installed file.
broken=""
while IFS= read -r page; do
  while IFS= read -r target; do
    [[ -e $(dirname "$page")/$target ]] || broken+=$'\n'"  ${page#"$docdir"/} -> $target"
  done < <(grep -oE '\]\([^)#: ]+(#[^) ]*)?\)' "$page" | sed -E 's/^\]\(([^)#]*).*/\1/')
done < <(find "$docdir" -name '*.md')
[[ -z $broken ]] || fail "links of the installed docs that lead nowhere in $docdir:$broken"
step "the installed pages' relative links resolve"

# Code lines (neither blank nor comment) of the installed example backend.
code_lines=$(grep -cvE '^[[:space:]]*(//.*)?$' "$docdir/examples/out_of_tree_backend/example_backend.cpp")
(( code_lines <= 130 )) || fail "example_backend.cpp has $code_lines code lines; the adapter and the core should keep it within 130"
step "example_backend.cpp: $code_lines code lines (at most 130)"

step "configure and build the installed copy of examples/out_of_tree_backend against the installed package"
cmake -S "$docdir/examples/out_of_tree_backend" -B "$tmp/example" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/configure.log" \
  || { cat "$tmp/configure.log"; fail "configuring the example"; }
# The example must use the installed headers, never the source tree.
if grep -q -- "-I$root" "$tmp/example/compile_commands.json" 2>/dev/null ||
   grep -rq -- "$root/include" "$tmp/example/build.ninja"; then
  fail "the example compiled against the source tree instead of the install"
fi
cmake --build "$tmp/example" -j2 || fail "building the example"
plugin=$tmp/example/libaccel_example.so
[[ -f $plugin ]] || fail "the example did not produce $plugin"

step "load the plugin with the example's host program"
"$tmp/example/load_example_backend" "$plugin" example || fail "the example plugin did not load"

step "autoload it through ACCEL_PLUGINS"
if [[ -x $prefix/bin/accel ]]; then
  out=$(ACCEL_PLUGINS=$plugin "$prefix/bin/accel" info 2>&1) || { echo "$out"; fail "accel info"; }
  grep -q "example" <<<"$out" || { echo "$out"; fail "accel info does not list the example backend"; }
  step "installed accel tool: accel check --backend example --plugin $plugin"
  check=$("$prefix/bin/accel" check --backend example --plugin "$plugin") \
    || { echo "$check"; fail "accel check on the example backend"; }
  echo "$check" | grep -v '^  pass'
  # The example is the template a vendor copies: every group (as
  # `accel check --list` names them), on the kit.
  declared=$(sed -n 's/^example (declares: \([^)]*\)).*$/\1/p' <<<"$check")
  all_groups=$("$prefix/bin/accel" check --list | grep -E '^[a-z_]+$' | paste -sd, | sed 's/,/, /g')
  [[ -n $all_groups && $declared == "$all_groups" ]] \
    || fail "the example declares '$declared', not every group ('$all_groups')"
  step "the example declares every group: $declared"

  # One plugin binary for every core: the plugin reaches the core through
  # the C plugin ABI only. It needs nothing of libaccel.so, and built by
  # another compiler with another standard library (clang and libc++), it
  # loads into this GCC/libstdc++ core and passes the same check.
  if readelf -d "$plugin" | grep -q 'NEEDED.*libaccel'; then
    fail "the example plugin links libaccel.so; a plugin reaches the core through the plugin ABI only"
  fi
  step "the example plugin needs nothing of libaccel.so"
  if command -v clang++-14 >/dev/null && echo '#include <string>' |
       clang++-14 -stdlib=libc++ -x c++ -fsyntax-only - 2>/dev/null; then
    step "build the example plugin with clang++-14 and libc++ against the installed headers"
    cmake -S "$docdir/examples/out_of_tree_backend" -B "$tmp/example_clang" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_CXX_FLAGS=-stdlib=libc++ >"$tmp/configure_clang.log" \
      || { cat "$tmp/configure_clang.log"; fail "configuring the example with clang and libc++"; }
    cmake --build "$tmp/example_clang" --target accel_example || fail "building the example with clang and libc++"
    clang_plugin=$tmp/example_clang/libaccel_example.so
    readelf -d "$clang_plugin" | grep -q 'NEEDED.*libc++' \
      || fail "the clang-built example does not use libc++"
    check=$("$prefix/bin/accel" check --backend example --plugin "$clang_plugin") \
      || { echo "$check"; fail "accel check on the clang/libc++ example in the GCC/libstdc++ core"; }
    echo "$check" | tail -2
    step "the clang/libc++ example passes accel check in the GCC/libstdc++ core"
  else
    fail "clang++-14 with libc++ is not installed (clang-14, libc++-14-dev, libc++abi-14-dev); .ci/run installs them"
  fi
else
  step "(no accel tool installed; skipping accel info/check)"
fi

if command -v pkg-config >/dev/null; then
  step "pkg-config: build a program with \$(pkg-config --cflags --libs accelhooks)"
  export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
  flags=$(pkg-config --cflags --libs accelhooks) || fail "pkg-config does not know accelhooks"
  cat >"$tmp/pc_check.cpp" <<'CPP'
#include <iostream>
#include "accel/plugin.h"
int main(int argc, char** argv) {
  accel::PluginRecord r = accel::loadBackend(argv[1]);
  std::cout << accel::describePluginRecord(r) << "\n";
  return r.registered.empty() ? 1 : 0;
}
CPP
  # shellcheck disable=SC2086
  c++ -std=c++20 "$tmp/pc_check.cpp" -o "$tmp/pc_check" $flags || fail "compiling with pkg-config flags"
  LD_LIBRARY_PATH=$prefix/$libdir "$tmp/pc_check" "$plugin" || fail "the pkg-config-built program did not load the plugin"
else
  step "(pkg-config not found; skipping the pkg-config check)"
fi

step "OK"
