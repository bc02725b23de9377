#!/usr/bin/env bash
# slurm_sweep: `specwave sweep --submit` of the example sweep (4 variants) runs as one job array on the local
# cluster, and `specwave collect` reports 4 completed variants (exit 0, summary.csv with 4 rows). Then a failing
# variant: the launcher of the job script (SPECWAVE_LAUNCHER, exported to the job by sbatch) is a wrapper that fails
# task 2 while a marker file exists (a transient failure: a bad node, a full disk); collect reports the failure
# with its log and exits 12; with the marker gone, `sweep --resume --submit` resubmits variant 2 alone (array
# "2"), and collect reports 4 completed.
#   tests/slurm/sweep.sh SPECWAVE SWEEP.toml WORK_DIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
specwave=$1 sweep=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# wait_array JOB: until no task of the array job is pending or running.
array_done() { [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]; }
run_sweep() {  # run_sweep DIR ARGS...: submits, prints the job id
  local dir=$1 out
  shift
  out=$("$specwave" sweep "$sweep" --output "$dir" "$@") || { echo "$out" >&2; fail "specwave sweep $* failed"; }
  echo "$out" >&2
  sed -n 's/^submitted *job \([0-9]*\).*/\1/p' <<<"$out"
}

# 1. The whole sweep.
began=$SECONDS
dir=$work/all
job=$(run_sweep "$dir" --submit)
[[ "$job" =~ ^[0-9]+$ ]] || fail "no job id from sweep --submit"
show_job "$job"
show_log "$dir/logs/*.log"
wait_for 240 "array job $job to finish" array_done "$job"
"$specwave" collect "$dir" >"$work/collect_all.txt" 2>&1 || { cat "$work/collect_all.txt"; fail "collect exited $? after the sweep"; }
cat "$work/collect_all.txt"
grep -q "4 variant(s): 4 completed, 0 failed" "$work/collect_all.txt" || fail "collect does not report 4 completed variants"
[ "$(tail -n +2 "$dir/summary.csv" | wc -l)" -eq 4 ] || fail "summary.csv has not 4 rows"
[ -f "$dir/summary.h5" ] || fail "no summary.h5"
echo "PASS: 4-variant sweep as job array $job, collected ($((SECONDS - began)) s)"

# 2. A failing variant, reported, then resubmitted alone.
began=$SECONDS
dir=$work/failing
cat >"$work/launcher.sh" <<SCRIPT
#!/usr/bin/env bash
if [ "\${SLURM_ARRAY_TASK_ID:-}" = 2 ] && [ -f "$work/break-task-2" ]; then
  echo "launcher: simulated failure of task 2 (exit 5)"
  exit 5
fi
exec srun "\$@"
SCRIPT
chmod +x "$work/launcher.sh"
touch "$work/break-task-2"
export SPECWAVE_LAUNCHER=$work/launcher.sh
job=$(run_sweep "$dir" --submit)
show_job "$job"
show_log "$dir/logs/*.log"
wait_for 240 "array job $job to finish" array_done "$job"
rc=0
"$specwave" collect "$dir" >"$work/collect_failing.txt" 2>&1 || rc=$?
cat "$work/collect_failing.txt"
[ $rc -eq 12 ] || fail "collect exited $rc with a failed variant, expected 12"
grep -q "3 completed, 1 failed" "$work/collect_failing.txt" || fail "collect does not report 3 completed and 1 failed"
grep -Eq "^failed +0002 .*logs/0002.log" "$work/collect_failing.txt" || fail "collect does not name variant 0002 with its log"
rm -f "$work/break-task-2"
job2=$(run_sweep "$dir" --resume --submit)
[[ "$job2" =~ ^[0-9]+$ ]] || fail "sweep --resume --submit submitted nothing"
show_job "$job2"
tail -n 1 "$dir/submissions.jsonl" | grep -q '"indices": \[2\]' || fail "sweep --resume did not resubmit variant 2 alone: $(tail -n 1 "$dir/submissions.jsonl")"
wait_for 240 "array job $job2 to finish" array_done "$job2"
"$specwave" collect "$dir" >"$work/collect_resumed.txt" 2>&1 || { cat "$work/collect_resumed.txt"; fail "collect exited $? after the resubmission"; }
grep -q "4 completed, 0 failed" "$work/collect_resumed.txt" || fail "after the resubmission collect does not report 4 completed"
echo "PASS: failed variant 0002 reported with its log, resubmitted alone as job $job2, all 4 completed ($((SECONDS - began)) s)"
