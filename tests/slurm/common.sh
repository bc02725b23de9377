# shellcheck shell=bash
# Helpers for the Slurm tests (sourced by tests/slurm/*.sh). The tests run against the private cluster of
# scripts/slurm-cluster: CTest's fixture slurm_cluster starts it and gives each test SLURM_CONF.
set -euo pipefail

if [ -z "${SLURM_CONF:-}" ] || [ ! -f "$SLURM_CONF" ]; then
  echo "FAIL: SLURM_CONF is not set to a slurm.conf (start the cluster: eval \"\$(scripts/slurm-cluster start)\")" >&2
  exit 1
fi

# What the failure messages show: the jobs' records and logs.
shown_jobs=()
shown_logs=()
show_job() { shown_jobs+=("$1"); }
show_log() { shown_logs+=("$@"); }

fail() {
  local j pattern f
  echo "FAIL: $*" >&2
  for j in "${shown_jobs[@]}"; do
    echo "----- scontrol show job $j" >&2
    scontrol show job "$j" >&2 || true
  done
  for pattern in "${shown_logs[@]}"; do  # files, or patterns (the logs of an array's tasks)
    compgen -G "$pattern" >/dev/null || { echo "----- $pattern: no such file" >&2; continue; }
    while IFS= read -r f; do
      echo "----- $f" >&2
      tail -n 40 "$f" >&2
    done < <(compgen -G "$pattern")
  done
  exit 1
}

# job_field JOB FIELD: the values of FIELD (e.g. JobState) in `scontrol show job JOB`, one per record (per task
# of an array job).
job_field() {
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" || true
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every half second; fails with DESCRIPTION on timeout.
wait_for() {
  local limit=$1 what=$2 i
  shift 2
  for ((i = 0; i < limit * 2; i++)); do
    if "$@"; then return 0; fi
    sleep 0.5
  done
  fail "timed out after ${limit} s waiting for $what"
}

# submit ARGS...: sbatch --parsable; prints the job id (the part before any ;cluster).
submit() {
  local out
  out=$(sbatch --parsable "$@") || fail "sbatch $* was refused"
  echo "${out%%;*}"
}
