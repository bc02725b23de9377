#!/usr/bin/env bash
# A forward run stopped mid-run and resumed ends with the same files as an uninterrupted one, bit for bit.
#   checkpoint_resume.sh MODE WORKDIR CASE LAUNCH...
#     MODE    usr1 | term: the signal Slurm sends before the time limit / at preemption; the run writes a checkpoint
#             and exits 10. term2: SIGTERM twice 0.2 s apart (GNU timeout signals the child and its process group):
#             the same request, not a second one. usr1term: SIGUSR1 then SIGTERM (Slurm's warning, then its
#             time limit): one stop. kill: SIGKILL after a periodic checkpoint (a node lost); nothing is written.
#     LAUNCH  how specwave is started: /path/specwave, or mpiexec -n 2 /path/specwave (the signal goes to mpiexec,
#             which forwards it to the ranks)
#   FORWARD_ARGS (environment): more options of every `forward` run, e.g. "--shot-groups 1" (the ranks share a shot)
set -uo pipefail
mode=$1 work=$2 case=$3
shift 3
launch=("$@")
read -r -a more <<<"${FORWARD_ARGS:-}"
h5diff=$(command -v h5diff) || { echo "h5diff not found"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
fail() { echo "checkpoint_resume: FAILED: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -n 20 "$f"; done; exit 1; }

"${launch[@]}" forward -q "$case" "${more[@]}" --output-dir "$work/reference" >"$work/reference.log" 2>&1 || fail "the reference run failed"

# Checkpoints every 20 steps; the signal follows the first one of shot 1 (usr1) or of shot 2 (term, kill: the
# resumed run then also carries the finished shot 1 over).
shot=1
[ "$mode" = usr1 ] || shot=2
"${launch[@]}" forward "$case" "${more[@]}" --output-dir "$work/run" --checkpoint-every 20 --resume >"$work/first.log" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
  grep -q "^\[checkpoint\] shot $shot " "$work/first.log" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
grep -q "^\[checkpoint\] shot $shot " "$work/first.log" || fail "no checkpoint of shot $shot appeared"
case $mode in
  usr1) kill -USR1 $pid ;;
  term) kill -TERM $pid ;;
  term2) kill -TERM $pid; sleep 0.2; kill -TERM $pid ;;
  usr1term) kill -USR1 $pid; kill -TERM $pid ;;
  kill) kill -KILL $pid ;;
esac
wait $pid
rc=$?
case $mode in
  usr1|term|term2|usr1term)
    [ $rc -eq 10 ] || fail "the stopped run exited $rc, not 10 (interrupted)"
    grep -q "run the same command with --resume" "$work/first.log" || fail "no resume hint in the log" ;;
  kill) [ $rc -eq 137 ] || fail "the killed run exited $rc, not 137" ;;
esac
[ -e "$work/run/traces.h5" ] && fail "a stopped run left a final traces.h5"
[ -f "$work/run/traces.h5.partial" ] || fail "the partial traces are gone"
echo "checkpoint_resume: stopped ($mode, exit $rc) after: $(grep '^\[checkpoint\]' "$work/first.log" | tail -n 1)"

# Resubmitted with a comment added and check_every changed (neither changes the result: the checkpoint must still be
# this run's).
{ echo "# resubmitted after preemption"; sed 's/^check_every *=.*$/check_every = 7/' "$case"; } >"$work/resubmitted.toml"
grep -q '^check_every = 7$' "$work/resubmitted.toml" || fail "the resubmitted case does not change check_every"
"${launch[@]}" forward "$work/resubmitted.toml" "${more[@]}" --output-dir "$work/run" --resume >"$work/resume.log" 2>&1 || fail "the resumed run failed"
grep -q "^resume      from" "$work/resume.log" || fail "the second run did not resume from the checkpoint"
grep "^resume" "$work/resume.log"
[ -e "$work/run/checkpoint" ] && fail "the checkpoint was not removed at the end"
[ -f "$work/run/run.json" ] || fail "no run.json"
ls "$work/run"/*.partial >/dev/null 2>&1 && fail "partial files left after completion"
for object in traces.h5:/traces wavefield.h5:/shot_0000 wavefield.h5:/shot_0001 wavefield.h5:/shot_0002; do
  file=${object%%:*} path=${object#*:}
  "$h5diff" -r "$work/reference/$file" "$work/run/$file" "$path" "$path" >"$work/h5diff.log" 2>&1 \
    || { cat "$work/h5diff.log"; fail "$file:$path differs from the uninterrupted run"; }
  echo "checkpoint_resume: $file:$path identical to the uninterrupted run"
done
echo "checkpoint_resume: PASSED ($mode)"
