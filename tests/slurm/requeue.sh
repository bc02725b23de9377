#!/usr/bin/env bash
# slurm_requeue_mechanism: the preemption/requeue path with a stub worker (tests/slurm/requeue_worker.sh) under
# the batch script tests/slurm/requeue_job.sh. Once the worker has done a few steps, `scancel -b -s USR1` warns
# the batch shell; the worker saves its progress and exits 10, the job requeues itself, Slurm starts it again
# (Restarts=1), the worker resumes and finishes. The result equals an uninterrupted run's, every step ran
# exactly once, and the appended log holds both runs.
#   tests/slurm/requeue.sh WORK_DIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$1
steps=24 pause=0.25
rm -rf "$work"
mkdir -p "$work/plain" "$work/job"

# The uninterrupted run, outside Slurm and without pauses.
"$here/requeue_worker.sh" "$work/plain" "$steps" >/dev/null || fail "the uninterrupted worker run failed"
expected=$(cat "$work/plain/result")

log=$work/job.log
show_log "$log"
began=$SECONDS
job=$(submit --output="$log" "$here/requeue_job.sh" "$here/requeue_worker.sh" "$work/job" "$steps" "$pause")
show_job "$job"
echo "submitted job $job"

state_is() { [ "$(job_field "$job" JobState)" = "$1" ]; }
worked_a_little() { state_is RUNNING && [ "$(wc -l <"$work/job/steps" 2>/dev/null || echo 0)" -ge 3 ]; }
wait_for 60 "job $job running with 3 worker steps done" worked_a_little
scancel -b -s USR1 "$job" || fail "scancel -b -s USR1 $job failed"
echo "sent USR1 to the batch shell of job $job after $((SECONDS - began)) s"

restarted() { [ "$(job_field "$job" Restarts)" = 1 ]; }
wait_for 60 "job $job requeued (Restarts=1)" restarted
echo "job $job requeued after $((SECONDS - began)) s"
finished() {
  case "$(job_field "$job" JobState)" in
    COMPLETED) return 0 ;;
    FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
      fail "job $job ended $(job_field "$job" JobState) after the requeue" ;;
    *) return 1 ;;
  esac
}
wait_for 90 "the requeued job $job to complete" finished
echo "job $job completed after $((SECONDS - began)) s"

[ "$(job_field "$job" Restarts)" = 1 ] || fail "job $job restarted $(job_field "$job" Restarts) times, expected once"
[ "$(job_field "$job" ExitCode)" = 0:0 ] || fail "job $job exit code $(job_field "$job" ExitCode), expected 0:0"
[ -s "$work/job/result" ] || fail "the worker wrote no result"
result=$(cat "$work/job/result")
[ "$result" = "$expected" ] || fail "result $result differs from the uninterrupted run's $expected"
[ "$(cat "$work/job/steps")" = "$(seq 1 "$steps")" ] \
  || fail "the steps done were not 1..$steps exactly once each: $(xargs <"$work/job/steps")"
read -r saved _ <"$work/job/progress" || fail "the worker saved no progress"
{ [ "$saved" -gt 0 ] && [ "$saved" -lt "$steps" ]; } || fail "saved progress after step $saved, expected 1..$((steps - 1))"
for line in "run with SLURM_RESTART_COUNT=0" "worker: starting at step 1" "job: USR1, forwarding it to the worker" \
            "worker: SIGUSR1: saved progress after step $saved, exiting 10" "requeueing job $job" \
            "run with SLURM_RESTART_COUNT=1" "worker: resuming after step $saved" "worker: done, sum $expected"; do
  grep -qF "$line" "$log" || fail "the job log lacks '$line'"
done
echo "PASS: job $job: preempted after step $saved of $steps, requeued, resumed, result $result as uninterrupted" \
  "($((SECONDS - began)) s)"
