#!/usr/bin/env bash
#SBATCH --job-name=requeue-test
#SBATCH --ntasks=1
#SBATCH --time=10
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --signal=B:USR1@60
# The preemption/requeue pattern of docs/batch.md ("Preemption and requeue"), run by the slurm_requeue_mechanism
# test with a stub worker: USR1 reaches this batch shell (from --signal=B:USR1@60 before the time limit, or from
# `scancel -b -s USR1`), which forwards it to the worker; the worker saves its progress and exits 10, and the job
# requeues itself. Slurm starts it again (SLURM_RESTART_COUNT=1) and the worker resumes; --open-mode=append keeps
# the log of every run.
#   sbatch --output=LOG requeue_job.sh WORKER ARGS...
echo "job $SLURM_JOB_ID: run with SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-0}"
"$@" &  # the worker runs in the background: bash runs a trap only when the command it waits for returns
worker=$!
signalled=0
trap 'signalled=1; echo "job: USR1, forwarding it to the worker ($worker)"; kill -USR1 "$worker" 2>/dev/null' USR1
status=0
wait "$worker" || status=$?
# A trapped signal interrupts wait (status 128 + signal) while the worker still runs: wait again for its own status.
while [ "$signalled" -eq 1 ]; do
  signalled=0
  status=0
  wait "$worker" || status=$?
done
echo "job: worker exited $status"
if [ "$status" -eq 10 ]; then
  echo "job: worker saved its progress; requeueing job $SLURM_JOB_ID"
  scontrol requeue "$SLURM_JOB_ID"
  exit 0
fi
exit "$status"
