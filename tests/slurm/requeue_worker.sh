#!/usr/bin/env bash
# A stand-in for a long computation that can be preempted (the slurm_requeue_mechanism test; not specwave):
# sums i*i for i = 1..STEPS, one step every PAUSE seconds, and writes the sum to DIR/result (exit 0).
# On SIGUSR1 it saves its progress (last step done, sum so far) to DIR/progress and exits 10; started again,
# it resumes from there. Every step done is appended to DIR/steps, so a repeated or lost step shows.
#   requeue_worker.sh DIR STEPS [PAUSE]
set -euo pipefail
dir=$1 steps=$2 pause=${3:-0}
stop=0
trap 'stop=1' USR1
step=0 sum=0
if [ -f "$dir/progress" ]; then
  read -r step sum <"$dir/progress"
  echo "worker: resuming after step $step (sum $sum)"
else
  echo "worker: starting at step 1 of $steps"
fi
while [ "$step" -lt "$steps" ]; do
  if [ "$stop" -eq 1 ]; then
    echo "$step $sum" >"$dir/progress.tmp"
    mv "$dir/progress.tmp" "$dir/progress"
    echo "worker: SIGUSR1: saved progress after step $step, exiting 10"
    exit 10
  fi
  sleep "$pause"
  step=$((step + 1))
  sum=$((sum + step * step))
  echo "$step" >>"$dir/steps"
done
echo "$sum" >"$dir/result"
echo "worker: done, sum $sum"
