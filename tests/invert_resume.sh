#!/usr/bin/env bash
# An inversion stopped by a signal (SIGUSR1: Slurm's warning before the time limit) in its second frequency band
# exits 10, and `invert --resume` ends with the same models, gradients and misfits as an uninterrupted run, bit
# for bit (the interrupted iteration is repeated from the state of the last completed one). Twice:
#  1. USR1 from outside once band 2 starts (its `band` line is printed): the run stops between shots or
#     evaluations of band 2's first iterations, wherever the signal lands (the remaining 3 iterations, about 8
#     evaluations, leave time for it to arrive before the run ends);
#  2. inside the line search of iteration 4, after its second trial (SPECWAVE_STOP_AFTER_EVALUATIONS raises USR1
#     after that evaluation): the resumed run replays the two trials from evaluations.h5 instead of recomputing
#     them (the band's first evaluation is recomputed, since it also gives the band's illumination).
# The case uses illumination compensation, so its state (the band's illumination) is resumed too.
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
  grep -q "^band " "$work/first.log" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
grep -q "^band " "$work/first.log" || fail "band 2 never started"
kill -USR1 $pid
wait $pid
rc=$?
[ $rc -eq 10 ] || fail "the stopped inversion exited $rc, not 10"
grep "specwave: stopped by signal" "$work/first.log" || fail "no stop message"

# The outputs of run $1 equal the uninterrupted run's, bit for bit.
same_as_reference() {
  local run=$1 object
  for object in /velocity /gradient /misfit /misfit_per_shot /relative_misfit /model_error /step /evaluations; do
    "$h5diff" -r "$work/reference/inversion.h5" "$run/inversion.h5" "$object" "$object" >"$work/h5diff.log" 2>&1 \
      || { cat "$work/h5diff.log"; fail "$run/inversion.h5:$object differs from the uninterrupted run"; }
    echo "invert_resume: $(basename "$run")/inversion.h5:$object identical to the uninterrupted run"
  done
  # iterations.jsonl: the same records but for the timings.
  strip() { sed -E 's/"seconds": [^,]*,//' "$1"; }
  diff <(strip "$work/reference/iterations.jsonl") <(strip "$run/iterations.jsonl") || fail "$run/iterations.jsonl differs"
  echo "invert_resume: $(basename "$run")/iterations.jsonl identical but for the timings ($(wc -l <"$run/iterations.jsonl") records)"
}

"$specwave" invert "$case" --output-dir "$work/run" --resume >"$work/resume.log" 2>&1 || fail "the resumed run failed"
grep "^resume" "$work/resume.log" || fail "the second run did not resume"
same_as_reference "$work/run"

# 2. Inside a line search. Evaluations up to the second trial of iteration 4: those of iterations 0-3, the first
# of band 2, two trials (iteration 4 of the reference needs at least 3, so the stop falls inside its search).
evals() { sed -n "s/^{\"iteration\": $1,.*\"evaluations\": \([0-9]*\),.*/\1/p" "$work/reference/iterations.jsonl"; }
[ "$(evals 4)" -ge 3 ] || fail "iteration 4 of the reference took $(evals 4) evaluation(s): the case no longer stops inside a line search"
stop_after=$(($(evals 0) + $(evals 1) + $(evals 2) + $(evals 3) + 1 + 2))
SPECWAVE_STOP_AFTER_EVALUATIONS=$stop_after "$specwave" invert "$case" --output-dir "$work/inside" --resume \
  >"$work/inside-first.log" 2>&1
rc=$?
[ $rc -eq 10 ] || fail "the inversion stopped after evaluation $stop_after exited $rc, not 10"
grep "specwave: stopped by signal .* after iteration 3 (3 evaluation(s) of the next one are in" "$work/inside-first.log" \
  || fail "the stop was not inside iteration 4 with 3 evaluations logged"
"$specwave" invert "$case" --output-dir "$work/inside" --resume >"$work/inside-resume.log" 2>&1 || fail "the resumed run failed"
grep "^resume" "$work/inside-resume.log"
grep -q "^resume      3 evaluation(s) of the interrupted iteration" "$work/inside-resume.log" || fail "no logged evaluations to replay"
# The band's first evaluation is recomputed for its illumination, the two trials are replayed.
grep '^recomputed\|^replayed' "$work/inside-resume.log"
[ "$(grep -c '^recomputed  evaluation 1 ' "$work/inside-resume.log")" -eq 1 ] || fail "the band's first evaluation was not recomputed"
[ "$(grep -c '^replayed    evaluation [23] ' "$work/inside-resume.log")" -eq 2 ] || fail "the resumed run did not replay the 2 trials"
same_as_reference "$work/inside"
echo "invert_resume: PASSED"
