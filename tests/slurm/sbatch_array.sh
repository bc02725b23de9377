#!/usr/bin/env bash
# slurm_sbatch_array: a job array of 4 one-CPU tasks (sbatch --wait --array=0-3) completes: every task exits 0,
# writes its file and its own log, and (with 2 CPUs or more) tasks run side by side (select/cons_tres, CR_Core).
#   tests/slurm/sbatch_array.sh WORK_DIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
work=$1
rm -rf "$work"
mkdir -p "$work"
cat >"$work/task.sh" <<'SCRIPT'
#!/usr/bin/env bash
# One array task: records when it ran, in WORK_DIR/task-<index>.txt.
set -euo pipefail
start=$(date +%s.%N)
echo "task $SLURM_ARRAY_TASK_ID of array job $SLURM_ARRAY_JOB_ID (job $SLURM_JOB_ID) on $SLURMD_NODENAME"
sleep 2
echo "$SLURM_ARRAY_TASK_ID $start $(date +%s.%N)" >"$1/task-$SLURM_ARRAY_TASK_ID.txt"
SCRIPT
chmod +x "$work/task.sh"
show_log "$work/array-*.log" "$work/sbatch.out"

began=$SECONDS
rc=0
timeout 120 sbatch --wait --parsable --array=0-3 --ntasks=1 --cpus-per-task=1 --time=5 --job-name=array-test \
  --output="$work/array-%A_%a.log" "$work/task.sh" "$work" >"$work/sbatch.out" 2>&1 || rc=$?
job=$(head -n 1 "$work/sbatch.out")
job=${job%%;*}
[[ "$job" =~ ^[0-9]+$ ]] || fail "sbatch printed no job id"
show_job "$job"
[ $rc -ne 124 ] || fail "the array did not finish within 120 s"
[ $rc -eq 0 ] || fail "sbatch --wait exited $rc (the highest exit code of the tasks)"

states=$(job_field "$job" JobState | sort | uniq -c | xargs)
[ "$states" = "4 COMPLETED" ] || fail "task states: '$states', expected 4 COMPLETED"
codes=$(job_field "$job" ExitCode | sort | uniq -c | xargs)
[ "$codes" = "4 0:0" ] || fail "task exit codes: '$codes', expected 4 times 0:0"
for t in 0 1 2 3; do
  [ -s "$work/task-$t.txt" ] || fail "task $t wrote no task-$t.txt"
  grep -q "^task $t of array job $job " "$work/array-${job}_$t.log" 2>/dev/null \
    || fail "task $t has no log array-${job}_$t.log with its line"
done
cpus=$(sinfo -h -N -n localhost -o %c)
if [ "$cpus" -ge 2 ]; then
  overlapping=$(cat "$work"/task-*.txt | awk '{s[NR] = $2; e[NR] = $3; t[NR] = $1}
    END {for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (s[i] < e[j] && s[j] < e[i]) print t[i] "&" t[j]}' | xargs)
  [ -n "$overlapping" ] || fail "no two tasks ran at the same time on $cpus CPUs (one task per node?)"
fi
echo "PASS: array job $job: 4 tasks COMPLETED with exit 0 in $((SECONDS - began)) s; side by side: ${overlapping:-n/a}"
