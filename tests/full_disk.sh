#!/usr/bin/env bash
# A full disk while a forward run writes its traces and wavefields: the run ends cleanly with exit 5 and one error
# line naming the file and "No space left on device", no crash at exit (it was exit 139: HDF5 closing a file at
# exit, after MPI_Finalize), and nothing left under a final name or as a temporary.
#   full_disk.sh WORKDIR CASE LAUNCH...     (LAUNCH: /path/specwave, or mpiexec -n 2 /path/specwave)
# Needs a 1 MiB tmpfs (mount, as root with CAP_SYS_ADMIN): exit 77 (skipped) where mounting is not allowed.
set -uo pipefail
work=$1 case=$2
shift 2
launch=("$@")
rm -rf "$work" && mkdir -p "$work/disk"
if ! mount -t tmpfs -o size=1m specwave-full-disk "$work/disk" 2>/dev/null; then
  echo "SKIPPED: cannot mount a 1 MiB tmpfs here (needs root with CAP_SYS_ADMIN)"
  exit 77
fi
trap 'umount "$work/disk" 2>/dev/null' EXIT
fail() { echo "full_disk: FAILED: $*"; cat "$work/run.log"; exit 1; }
# Snapshots every 5 steps and the final field: far more than 1 MiB.
sed -e "s#^directory = .*#directory = \"$work/disk/out\"#" -e 's#^plots = false#plots = false\nsnapshot_every = 5\nfinal_field = true#' \
  "$case" >"$work/case.toml"
"${launch[@]}" forward -q "$work/case.toml" >"$work/run.log" 2>&1
rc=$?
[ $rc -eq 5 ] || fail "exit $rc, not 5 (output_error)"
grep -q "specwave: error: .*No space left on device: the disk or quota is full" "$work/run.log" ||
  fail "no error line naming the full disk"
[ "$(grep -c "specwave: error:" "$work/run.log")" -eq 1 ] || fail "not exactly one error line"
grep -qi "segmentation\|signal" "$work/run.log" && fail "a crash at exit"
left=$(cd "$work/disk/out" && ls -A | grep -v '^\.specwave\.lock$')
[ -z "$left" ] || fail "left behind: $left"
echo "full_disk: outputs: exit 5, one error line, nothing left behind"

# A checkpoint that does not fit (no snapshots: the outputs fit, the state of a checkpoint does not): the same, and
# the message names the checkpoint file and the array.
rm -rf "$work/disk/out"
sed -e "s#^directory = .*#directory = \"$work/disk/out\"#" "$case" >"$work/case-checkpoint.toml"
"${launch[@]}" forward -q --checkpoint-every 5 "$work/case-checkpoint.toml" >"$work/run.log" 2>&1
rc=$?
[ $rc -eq 5 ] || fail "checkpoint: exit $rc, not 5 (output_error)"
# The array is named when its own write fails; when the disk fills as HDF5 flushes its caches, "the checkpoint arrays";
# with two ranks, the other rank's file can fill the disk before this rank creates its own: then the creation fails,
# naming the file (seen under load in a CI-like run, 2026-12-06).
grep -Eq "specwave: error: .*/checkpoint/rank-0000[01]\.g1\.h5\.tmp-[0-9]*(: cannot write the checkpoint array.*|; check that the output directory exists and is writable) \(No space left on device" \
  "$work/run.log" || fail "checkpoint: no error line naming the checkpoint file (and its array) and the full disk"
[ "$(grep -c "specwave: error:" "$work/run.log")" -eq 1 ] || fail "checkpoint: not exactly one error line"
grep -qi "segmentation\|signal" "$work/run.log" && fail "checkpoint: a crash at exit"
left=$(cd "$work/disk/out" && find . -mindepth 1 ! -name .specwave.lock)
[ -z "$left" ] || fail "checkpoint: left behind: $left"
echo "full_disk: PASSED (outputs and checkpoint: exit 5, one error line naming the file, nothing left behind)"
