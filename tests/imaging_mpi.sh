#!/usr/bin/env bash
# `specwave gradient` and `specwave migrate` with the shots shared over MPI ranks give the one-rank result: the
# per-shot misfits are exact, the gradient and image are summed in another order, so they agree to rounding
# (max |difference| <= 1e-10 max |one-rank value|; measured: about 1e-14).
#   imaging_mpi.sh WORKDIR GRADIENT_CASE MIGRATE_CASE SPECWAVE MPIEXEC...
set -uo pipefail
work=$1 gradient_case=$2 migrate_case=$3 specwave=$4
shift 4
rm -rf "$work" && mkdir -p "$work"
run() {  # run LOG COMMAND...: stop with the log when it fails
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; echo "imaging_mpi: FAILED: $*"; exit 1; }
}
run "$work/g1.log" "$specwave" gradient -q "$gradient_case" --output-dir "$work/g1"
run "$work/g2.log" "$@" "$specwave" gradient "$gradient_case" --output-dir "$work/g2"
run "$work/m1.log" "$specwave" migrate -q "$migrate_case" --output-dir "$work/m1"
run "$work/m2.log" "$@" "$specwave" migrate "$migrate_case" --output-dir "$work/m2"
[ "$(grep -c '^done        gradient' "$work/g2.log")" -eq 1 ] || { cat "$work/g2.log"; echo "imaging_mpi: FAILED: rank 0 should print one done line"; exit 1; }
/usr/bin/python3 - "$work" <<'PY' || exit 1
import sys
try:
    import h5py, numpy as np
except ImportError:
    print("imaging_mpi: SKIPPED: needs python3-h5py and python3-numpy")
    sys.exit(77)
work = sys.argv[1]
failed = False
for one, two, names in [("g1/gradient.h5", "g2/gradient.h5", ["gradient", "illumination", "misfit_per_shot"]),
                        ("m1/image.h5", "m2/image.h5", ["image", "raw_image", "illumination"])]:
    a, b = h5py.File(f"{work}/{one}"), h5py.File(f"{work}/{two}")
    for name in names:
        x, y = a[name][()], b[name][()]
        err = float(np.abs(x - y).max() / np.abs(x).max())
        ok = err <= 1e-10
        failed |= not ok
        print(f"imaging_mpi: {two}:/{name} {'within' if ok else 'NOT within'} 1e-10 of one rank (max difference {err:.1e} of the largest value)")
sys.exit(1 if failed else 0)
PY
rc=$?
[ $rc -eq 0 ] && echo "imaging_mpi: PASSED"
exit $rc
