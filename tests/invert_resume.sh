#!/usr/bin/env bash
# An inversion stopped by a signal (SIGUSR1: Slurm's warning before the time limit) in its second frequency band
# exits 10, and `invert --resume` ends with the same models, gradients and misfits as an uninterrupted run, bit
# for bit (the interrupted iteration is repeated from the state of the last completed one).
#   invert_resume.sh WORKDIR CASE SPECWAVE
set -uo pipefail
work=$1 case=$2 specwave=$3
h5diff=$(command -v h5diff) || { echo "h5diff not found"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
fail() { echo "invert_resume: FAILED: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -n 25 "$f"; done; exit 1; }

"$specwave" invert "$case" --output-dir "$work/reference" >"$work/reference.log" 2>&1 || fail "the reference run failed"

"$specwave" invert "$case" --output-dir "$work/run" --resume >"$work/first.log" 2>&1 &
pid=$!
for _ in $(seq 1 2400); do
  grep -q "^iteration *4 " "$work/first.log" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
grep -q "^iteration *4 " "$work/first.log" || fail "iteration 4 (the first of band 2) never came"
kill -USR1 $pid
wait $pid
rc=$?
[ $rc -eq 10 ] || fail "the stopped inversion exited $rc, not 10"
grep "specwave: stopped by signal" "$work/first.log" || fail "no stop message"

"$specwave" invert "$case" --output-dir "$work/run" --resume >"$work/resume.log" 2>&1 || fail "the resumed run failed"
grep "^resume" "$work/resume.log" || fail "the second run did not resume"
for object in /velocity /gradient /misfit /relative_misfit /model_error /step /evaluations; do
  "$h5diff" -r "$work/reference/inversion.h5" "$work/run/inversion.h5" "$object" "$object" >"$work/h5diff.log" 2>&1 \
    || { cat "$work/h5diff.log"; fail "inversion.h5:$object differs from the uninterrupted run"; }
  echo "invert_resume: inversion.h5:$object identical to the uninterrupted run"
done
# iterations.jsonl: the same records but for the timings.
strip() { sed -E 's/"seconds": [^,]*,//' "$1"; }
diff <(strip "$work/reference/iterations.jsonl") <(strip "$work/run/iterations.jsonl") || fail "iterations.jsonl differs"
echo "invert_resume: iterations.jsonl identical but for the timings ($(wc -l <"$work/run/iterations.jsonl") records)"
echo "invert_resume: PASSED"
