#!/usr/bin/env bash
# slurm_forward_requeue / slurm_invert_requeue: a one-variant sweep of a forward run (with periodic checkpoints)
# or an inversion runs as a Slurm job from scripts/slurm/cpu.sbatch. Once it has made progress, `scancel -b -s
# USR1` warns the batch shell as `--signal=B:USR1@120` would before the time limit; the script forwards USR1
# through srun, specwave writes its checkpoint and exits 10, the script requeues the task, Slurm starts it again
# (Restarts=1), `--resume` continues, and the outputs equal those of an uninterrupted run outside Slurm, bit for
# bit.
#   tests/slurm/requeue_specwave.sh forward|invert SPECWAVE CASE.toml WORK_DIR H5DIFF
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
command=$1 specwave=$2 case=$3 work=$4 h5diff=$5
rm -rf "$work"
mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

# The uninterrupted reference, outside Slurm; and what shows progress in the log.
if [ "$command" = forward ]; then
  # 3.0 s of simulated time instead of the case's 0.4 (3 x 1665 steps, about 4 s of run) and the signal after the
  # 100th step of shot 0: with 0.4 s the whole run took 0.6 s, less than USR1 takes from scancel to specwave, and it
  # once completed before the signal arrived. Snapshots every 300 steps keep the files small.
  sed -e 's/^duration = 0.4$/duration = 3.0/' -e 's/^snapshot_every = 60$/snapshot_every = 300/' "$case" >"$work/case.toml"
  grep -q '^duration = 3.0$' "$work/case.toml" && grep -q '^snapshot_every = 300$' "$work/case.toml" \
    || fail "$case: no 'duration = 0.4' or 'snapshot_every = 60' line to change"
  case=$work/case.toml
  axis='"run.checkpoint_every" = [20]'
  progress='^\[checkpoint\] shot 0 step 100/'
  objects="traces.h5:/traces wavefield.h5:/shot_0000 wavefield.h5:/shot_0001 wavefield.h5:/shot_0002"
  "$specwave" forward -q "$case" --output-dir "$work/reference" --checkpoint-every 20 >"$work/reference.log" 2>&1 \
    || { show_log "$work/reference.log"; fail "the reference run failed"; }
else
  # 8 iterations a band instead of the case's 3, and the signal after iteration 2: an iteration takes about
  # 0.25 s, and USR1 needs about a second from scancel to specwave, so the run must not end that soon after the
  # progress line (with iteration 4 of 6 as the trigger it once finished before the signal arrived).
  sed 's/^iterations = 3$/iterations = 8/' "$case" >"$work/case.toml"
  grep -q '^iterations = 8$' "$work/case.toml" || fail "$case: no 'iterations = 3' line to raise"
  case=$work/case.toml
  axis='"run.threads" = [1]'
  progress='^iteration *2 '
  objects="inversion.h5:/velocity inversion.h5:/gradient inversion.h5:/misfit inversion.h5:/relative_misfit"
  "$specwave" invert -q "$case" --output-dir "$work/reference" >"$work/reference.log" 2>&1 \
    || { show_log "$work/reference.log"; fail "the reference run failed"; }
fi
cat >"$work/sweep.toml" <<TOML
[sweep]
name = "requeue-$command"
base = "$case"
directory = "sweep"
command = "$command"
[axes]
$axis
[slurm]
time = "00:10:00"
cpus_per_task = 1
TOML

began=$SECONDS
out=$("$specwave" sweep "$work/sweep.toml" --submit) || { echo "$out"; fail "specwave sweep --submit failed"; }
echo "$out"
job=$(sed -n 's/^submitted *job \([0-9]*\).*/\1/p' <<<"$out")
[[ "$job" =~ ^[0-9]+$ ]] || fail "no job id"
task=${job}_0
log=$work/sweep/logs/0000.log
show_job "$task"
show_log "$log"
progressed() { grep -Eq "$progress" "$log" 2>/dev/null; }
wait_for 120 "the run to make progress ($progress in its log)" progressed
scancel -b -s USR1 "$task" || fail "scancel -b -s USR1 $task failed"
echo "sent USR1 to the batch shell of $task after $((SECONDS - began)) s"
restarted() { [ "$(job_field "$task" Restarts)" = 1 ]; }
wait_for 90 "$task requeued (Restarts=1)" restarted
finished() {
  case "$(job_field "$task" JobState)" in
    COMPLETED) return 0 ;;
    FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED) fail "$task ended $(job_field "$task" JobState)" ;;
    *) return 1 ;;
  esac
}
wait_for 180 "the requeued $task to complete" finished
echo "$task completed after $((SECONDS - began)) s"

for line in "received SIGUSR1: forwarding it to the run" "specwave: stopped by signal 10" "exit code 10, requeued" \
            "restart 1" "exit code 0, completed"; do
  grep -qF "$line" "$log" || fail "the task log lacks '$line'"
done
grep -q '"state": "completed"' "$work/sweep/variants/0000/status.json" || fail "status.json does not say completed"
grep -q "^resume      from" "$log" || fail "the restarted run did not resume from its checkpoint"
grep "^resume      from" "$log"
for pair in $objects; do
  file=${pair%%:*} object=${pair#*:}
  "$h5diff" -r "$work/reference/$file" "$work/sweep/variants/0000/output/$file" "$object" "$object" >"$work/h5diff.out" 2>&1 \
    || { show_log "$work/h5diff.out"; fail "$file:$object differs from the uninterrupted run"; }
  echo "identical: $file:$object"
done
# Into a file first: `| head` would end collect by SIGPIPE, which pipefail turns into a failure.
"$specwave" collect "$work/sweep" >"$work/collect.out" || { show_log "$work/collect.out"; fail "specwave collect failed"; }
head -n 3 "$work/collect.out"
echo "PASS: $command under Slurm: USR1, checkpoint, exit 10, requeue, resume; outputs identical to an uninterrupted run ($((SECONDS - began)) s)"
