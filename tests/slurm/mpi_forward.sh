#!/usr/bin/env bash
# slurm_mpi_forward_np2: `specwave forward` as one MPI job of 2 ranks started by srun (PMIx) inside
# `sbatch --wait -n 2` writes the same datasets as a 1-rank run without Slurm, bit for bit (h5diff, as
# tests/compare_outputs.cmake), and the run really had 2 ranks (its plan, and the `ranks` attribute).
#   tests/slurm/mpi_forward.sh SPECWAVE CASE.toml WORK_DIR H5DIFF
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
specwave=$1 case=$2 work=$3 h5diff=$4
h5dump=$(dirname "$h5diff")/h5dump
[ -x "$h5dump" ] || h5dump=$(command -v h5dump) || fail "no h5dump next to $h5diff or on PATH"
rm -rf "$work"
mkdir -p "$work"

began=$SECONDS
OMP_NUM_THREADS=1 "$specwave" forward -q "$case" --output-dir "$work/reference" >"$work/reference.log" 2>&1 \
  || { show_log "$work/reference.log"; fail "the 1-rank reference run failed"; }
echo "1-rank reference run: $((SECONDS - began)) s"

cat >"$work/job.sh" <<'SCRIPT'
#!/usr/bin/env bash
# The batch script: srun starts the ranks of one MPI job (MpiDefault=pmix); Open MPI refuses root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
echo "job $SLURM_JOB_ID: $SLURM_NTASKS tasks on $SLURM_JOB_NODELIST"
srun "$@"
SCRIPT
chmod +x "$work/job.sh"
log=$work/job.log
show_log "$log" "$work/sbatch.out"
began=$SECONDS
rc=0
timeout 180 sbatch --wait --parsable --ntasks=2 --time=10 --job-name=specwave-np2 --output="$log" \
  "$work/job.sh" "$specwave" forward "$case" --output-dir "$work/np2" -q >"$work/sbatch.out" 2>&1 || rc=$?
job=$(head -n 1 "$work/sbatch.out")
job=${job%%;*}
[[ "$job" =~ ^[0-9]+$ ]] || fail "sbatch printed no job id"
show_job "$job"
[ $rc -ne 124 ] || fail "job $job did not finish within 180 s"
[ $rc -eq 0 ] || fail "sbatch --wait exited $rc"
[ "$(job_field "$job" JobState)" = COMPLETED ] || fail "job $job is $(job_field "$job" JobState)"
echo "2-rank run under sbatch/srun: job $job, $((SECONDS - began)) s"

grep -Eq "mpi +2 ranks" "$log" || fail "the run's plan does not say 2 ranks (one MPI job of 2 ranks?)"
ranks=$("$h5dump" -a /ranks "$work/np2/traces.h5" | awk '/\(0\)/ {print $2}')
[ "$ranks" = 2 ] || fail "traces.h5 says ranks = '$ranks', expected 2"
for pair in traces.h5:/traces wavefield.h5:/shot_0000 wavefield.h5:/shot_0001 model.h5:/velocity; do
  file=${pair%%:*} object=${pair#*:}
  "$h5diff" -r "$work/reference/$file" "$work/np2/$file" "$object" "$object" >"$work/h5diff.out" 2>&1 \
    || { show_log "$work/h5diff.out"; fail "$file:$object differs from the 1-rank run"; }
  echo "identical: $file:$object"
done
echo "PASS: specwave forward on 2 ranks under Slurm (srun, PMIx) equals the 1-rank run bit for bit"
