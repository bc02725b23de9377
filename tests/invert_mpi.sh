#!/usr/bin/env bash
# `specwave invert` with the shots shared over MPI ranks gives the one-rank result: the per-shot misfits are
# exact, the gradient is summed in another order, so models, gradients and misfits agree to rounding (relative
# 1e-10 after every iteration of both bands; measured: below 1e-12).
#   invert_mpi.sh WORKDIR CASE SPECWAVE MPIEXEC...
set -uo pipefail
work=$1 case=$2 specwave=$3
shift 3
rm -rf "$work" && mkdir -p "$work"
"$specwave" invert -q "$case" --output-dir "$work/one" >"$work/one.log" 2>&1 || { cat "$work/one.log"; exit 1; }
"$@" "$specwave" invert "$case" --output-dir "$work/mpi" >"$work/mpi.log" 2>&1 || { cat "$work/mpi.log"; exit 1; }
for object in /velocity /gradient /misfit /relative_misfit /model_error; do
  h5diff -p 1e-10 "$work/one/inversion.h5" "$work/mpi/inversion.h5" "$object" "$object" >"$work/h5diff.log" 2>&1 \
    || { cat "$work/h5diff.log"; echo "invert_mpi: FAILED: $object differs by more than 1e-10 relative"; exit 1; }
  echo "invert_mpi: $object within 1e-10 of the one-rank run"
done
[ "$(grep -c '^iteration' "$work/mpi.log")" -eq 7 ] || { cat "$work/mpi.log"; echo "invert_mpi: FAILED: rank 0 should print 7 iteration lines, once"; exit 1; }
echo "invert_mpi: PASSED"
