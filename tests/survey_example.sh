#!/usr/bin/env bash
# The survey example end to end at its tiny size (cases/survey/run): models and cases generated, data modelled on the
# fine grid with a streamer and an unknown wavelet, noise, SEG-Y export and import, invert from the smoothed model
# with the wavelet estimated per band, migrate, and the report. Checks that every step ran, that every band lowered
# its misfit, and that the wavelet estimate is within 0.25 (relative L2, within the band) of the data's wavelet.
#   survey_example.sh WORKDIR SPECWAVE
set -uo pipefail
work=$1 specwave=$2
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work"
fail() { echo "survey_example: FAILED: $*"; tail -n 40 "$work.log"; exit 1; }
SPECWAVE="$specwave" "$here/cases/survey/run" "$work" --size tiny >"$work.log" 2>&1 || fail "cases/survey/run failed"
for f in data.sgy data.h5 inverted/source_estimate.h5 inverted/model_final.h5 migrated/image.h5; do
  [ -s "$work/$f" ] || fail "$f was not written"
done
bands=$(grep -c '^| [0-9.]* Hz |' "$work.log")
[ "$bands" = 2 ] || fail "expected 2 bands in the report, found $bands"
grep '^| [0-9.]* Hz |' "$work.log" | awk -F'|' '{gsub(/[ %]/, "", $6); if ($6 + 0 <= 0) exit 1}' ||
  fail "a band did not lower its misfit"
error=$(sed -n 's/^wavelet estimate 0 .*relative L2 error \([0-9.]*\).*/\1/p' "$work.log")
[ -n "$error" ] || fail "no wavelet estimate in the report"
awk -v e="$error" 'BEGIN { exit !(e < 0.25) }' || fail "wavelet estimate error $error >= 0.25"
grep -E '^\| [0-9.]* Hz \||^model error|^wavelet estimate' "$work.log"
echo "survey_example: passed"
