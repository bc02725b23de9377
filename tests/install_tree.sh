#!/usr/bin/env bash
# `cmake --install` (cmake/SpecwaveInstall.cmake) into a fresh prefix: the programs run from there (their library
# paths kept), `check` passes on the installed demo case, the docs, cases and Slurm templates are there, and the
# installed headers stand on their own (a kernel header compiles against the prefix alone, with Eigen's include).
#   install_tree.sh BUILD_DIR PREFIX CXX
set -uo pipefail
build=$1 prefix=$2 cxx=$3
fail() { echo "install_tree: FAILED: $*"; exit 1; }
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || { cat "$prefix.log"; fail "cmake --install failed"; }
for f in bin/specwave bin/specwave-bench lib/specwave/libspecwave_solver.a include/specwave/kernels/fdtd_point.hpp \
         include/specwave/specwave/build_info.hpp share/doc/specwave/README.md share/doc/specwave/hdf5-schema.md \
         share/specwave/cases/demo/case.toml share/specwave/slurm/cpu.sbatch; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
env -u LD_LIBRARY_PATH "$prefix/bin/specwave" --version | grep -q "^specwave " || fail "the installed specwave does not run"
out=$(cd "$prefix" && env -u LD_LIBRARY_PATH bin/specwave check share/specwave/cases/demo/case.toml --output-dir "$prefix/demo-out" 2>&1) \
  || { echo "$out"; fail "check of the installed demo case failed"; }
echo "$out" | grep -q "check: OK" || fail "no 'check: OK'"
printf '#include "kernels/fdtd_point.hpp"\n#include "solver/case/case.hpp"\nint main() { return 0; }\n' >"$prefix/use.cpp"
"$cxx" -std=c++20 -fsyntax-only -I "$prefix/include/specwave" "$prefix/use.cpp" || fail "the installed headers do not compile"
# The Python module, when the build has it: the installed package imports and plans the installed demo case.
python_note=""
if ls "$build"/python/specwave/_core*.so >/dev/null 2>&1; then
  site=$(ls -d "$prefix"/lib/python3*/*-packages 2>/dev/null | head -1)
  [ -n "$site" ] && [ -f "$site/specwave/__init__.py" ] || fail "the Python package is not installed under $prefix/lib/python3*"
  out=$(cd "$prefix" && env -u LD_LIBRARY_PATH PYTHONPATH="$site" /usr/bin/python3 -c \
    "import specwave; print(specwave.Case.from_file('share/specwave/cases/demo/case.toml').plan().nt)" 2>&1) ||
    { echo "$out"; fail "the installed Python package does not import or plan the demo case"; }
  python_note=", the Python package imports (${site#$prefix/})"
fi
echo "install_tree: installed to $prefix: programs run, demo case checks, headers compile$python_note"
