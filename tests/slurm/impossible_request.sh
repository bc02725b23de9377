#!/usr/bin/env bash
# slurm_impossible_request: a request the node can never satisfy (more CPUs than it has, more memory than it
# has) is refused by sbatch at submission, at once (EnforcePartLimits=ALL), instead of pending forever.
#   tests/slurm/impossible_request.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cpus=$(sinfo -h -N -n localhost -o %c)
mem=$(sinfo -h -N -n localhost -o %m)
[[ "$cpus" =~ ^[0-9]+$ && "$mem" =~ ^[0-9]+$ ]] || fail "sinfo gave no CPU count/memory for node localhost"
before=$(squeue -h -o %A | wc -l)
refused() {  # refused DESCRIPTION SBATCH_ARGS...
  local what=$1 began=$SECONDS rc=0 out
  shift
  out=$(timeout 30 sbatch --parsable "$@" --wrap true 2>&1) || rc=$?
  [ $rc -ne 124 ] || fail "sbatch $* ($what) hung for 30 s instead of failing"
  [ $rc -ne 0 ] || { show_job "${out%%;*}"; fail "sbatch $* ($what) was accepted as job $out"; }
  [ $((SECONDS - began)) -le 10 ] || fail "sbatch $* ($what) took $((SECONDS - began)) s to fail"
  echo "refused at once: $what (sbatch $*): $(echo "$out" | tail -n 1)"
}
refused "$((cpus + 1)) tasks on $cpus CPUs" --ntasks=$((cpus + 1))
refused "$((cpus * 2)) CPUs for one task on $cpus CPUs" --cpus-per-task=$((cpus * 2))
refused "$((mem + 1024)) MB on $mem MB" --mem=$((mem + 1024))
[ "$(squeue -h -o %A | wc -l)" -eq "$before" ] || fail "a refused request left a job in the queue: $(squeue)"
echo "PASS: impossible requests fail at submission"
