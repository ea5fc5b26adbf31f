#!/usr/bin/env bash
# `convlab grade --slurm` on a real Slurm: a one-node cluster from Debian's packages (munged,
# MariaDB and slurmdbd for sacct, slurmctld, slurmd; slurm_cluster.sh), started in WORK_DIR and
# stopped at the end, even on failure. It grades the fixture corpus that cli.e2e.grade_fixtures
# wrote and graded locally (E2E_DIR/subs, E2E_DIR/out, same options) as an array of two tasks,
# cancels one task mid-way, checks that the collector refuses to write an incomplete gradebook,
# resumes, and checks that the merged gradebook, feedback and Gradescope results equal the local
# grading's byte for byte, and that the resumed task kept what it had finished.
#   e2e_slurm.sh CONVLAB_EXE SOURCE_DIR E2E_DIR WORK_DIR
# Needs root (munged and slurmd) and slurm-wlm, munge, slurmdbd, mariadb-server; without them it
# is skipped (exit 77), unless CONVLAB_REQUIRE_SLURM=1 (.ci/run sets it), where it fails.
set -uo pipefail
convlab=$1 root=$2 e2e=$3 work=$4
fixtures=$root/grader/cli/tests/fixtures
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
unavailable() {
  if [ "${CONVLAB_REQUIRE_SLURM:-0}" = 1 ]; then echo "FAILED: $* (CONVLAB_REQUIRE_SLURM=1)"; exit 1; fi
  echo "SKIPPED: $*"
  exit 77
}
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIPPED: this machine has a GPU; its Slurm check is grader/cli/tests/gpu-slurm-check.sh"
  exit 77
fi
[ "$(id -u)" = 0 ] || unavailable "the test cluster's munged and slurmd need root"
for prog in munged slurmctld slurmd slurmdbd mariadbd sbatch sacct; do
  command -v "$prog" >/dev/null ||
    unavailable "$prog not found (apt-get install slurm-wlm munge slurmdbd mariadb-server)"
done
[ -s "$e2e/out/gradebook.csv" ] ||
  { echo "FAILED: no $e2e/out/gradebook.csv: cli.e2e.grade_fixtures grades the corpus locally first"; exit 1; }
export PATH=/usr/local/cuda/bin:$PATH

rm -rf "$work"
# Everything (cluster, task folders, gradebook) one folder deeper, at least 160 bytes from /:
# the test passes from a checkout as deep as any (a Unix socket's path holds 108 bytes, and the
# cluster's sockets once lived under WORK_DIR: munged refused a build folder 122 bytes deep).
pad=deep-checkout
while [ $((${#work} + 1 + ${#pad})) -lt 160 ]; do pad=$pad-x; done
work=$work/$pad
mkdir -p "$work"
chmod 755 "$work" "$(dirname "$work")"  # the graders run as nobody: it must reach its task folders
echo "work folder: ${#work} bytes deep"
# shellcheck source=slurm_cluster.sh
source "$root/grader/cli/tests/slurm_cluster.sh"
trap slurm_cluster_stop EXIT
start=$SECONDS
slurm_cluster_start "$work/cluster" --accounting || exit 1
echo "cluster up in $((SECONDS - start)) s"

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local until=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    if [ $SECONDS -ge $until ]; then echo "FAILED: $what (waited $1 s)"; return 1; fi
    sleep 2
  done
}
job_ended() { [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]; }
state_of() { sacct -X -P -n -j "$1" --format=State 2>/dev/null | head -1; }
exit_of() { sacct -X -P -n -j "$1" --format=ExitCode 2>/dev/null | head -1; }

subs=("$e2e"/subs/*)
o=$work/out
# Exactly cli.e2e.grade_fixtures' options, so that the results must be the same.
grading=(--labs lab01 --cuda-arch 90 --jobs 1 --test-timeout 60)
# Two tasks, one at a time (the throttle is seen working, and task 1 is still pending or
# running when task 0 is resumed); no GPU asked for (the GPU graders are not run here). The
# share is half the corpus, rounded up, however many fixtures it holds.
per_task=$(( (${#subs[@]} + 1) / 2 ))
slurm_opts=(--slurm --no-gpu --per-task "$per_task" --tasks-at-once 1 --cpus-per-task 1 --time 30)

# --dry-run prints the shares and both scripts, and writes nothing.
out=$("$convlab" --root "$root" grade "${subs[@]}" "${grading[@]}" --out "$o" "${slurm_opts[@]}" \
  --expect "$fixtures/expected-cpu.json" --dry-run 2>&1)
check "dry run exits 0" test $? -eq 0
echo "$out" | sed -n '1,8p'
check "dry run: two tasks of $per_task and $(( ${#subs[@]} - per_task ))" grep -q "in 2 array task(s)" <<<"$out"
check "dry run: the array, throttled" grep -q '^#SBATCH --array=0-1%1$' <<<"$out"
check "dry run: no GPU asked for with --no-gpu" bash -c '! grep -q -- "--gres" <<<"$1"' _ "$out"
check "dry run: the collector waits for the array" grep -q '^#SBATCH --dependency=afterany:' <<<"$out"
check "dry run: each task runs convlab slurm-task" grep -q "slurm-task '$o'\$" <<<"$out"
check "dry run: nothing written" test ! -e "$o"

# Bad input: clear errors, exit 2.
out=$("$convlab" --root "$root" grade --slurm --resume --out "$work/nothing" 2>&1)
check "--resume of a folder without a run is refused (exit 2)" test $? -eq 2
check "... saying so" grep -q "holds no Slurm grading run" <<<"$out"
out=$("$convlab" --root "$root" grade "${subs[0]}" --out "$work/bad" --partition gpu 2>&1)
check "a Slurm option without --slurm is refused (exit 2)" test $? -eq 2
check "... naming it" grep -q -- "--partition is an option of --slurm" <<<"$out"
out=$("$convlab" --root "$root" grade "${subs[0]}" --out "$work/bad" --slurm --gpus 0,1 2>&1)
check "--gpus with --slurm is refused (exit 2)" test $? -eq 2
out=$("$convlab" --root "$root" grade "${subs[0]}" --out "$e2e/out" --slurm --no-gpu 2>&1)
check "--slurm into a local run's folder is refused (exit 2)" test $? -eq 2
out=$("$convlab" --root "$root" grade "${subs[0]}" --out "$work/bad" --slurm --time 'an hour' 2>&1)
check "a malformed --time is refused (exit 2)" test $? -eq 2

# The run: two tasks; task 0 is cancelled once it has finished some of its submissions.
start=$SECONDS
out=$("$convlab" --root "$root" grade "${subs[@]}" "${grading[@]}" --out "$o" "${slurm_opts[@]}" \
  --expect "$fixtures/expected-cpu.json" 2>&1)
rc=$?
echo "$out"
check "submitted (exit $rc)" test $rc -eq 0
array=$(sed -n 's/^submitted array job \([0-9]*\) .*/\1/p' <<<"$out")
collector=$(sed -n 's/.* and collector job \([0-9]*\) .*/\1/p' <<<"$out")
check "an array job and a collector job" test -n "$array" -a -n "$collector"
check "the manifest written" test -s "$o/slurm/manifest.json"
out=$("$convlab" --root "$root" grade "${subs[@]}" "${grading[@]}" --out "$o" "${slurm_opts[@]}" 2>&1)
rc=$?
check "a second --slurm run into the same folder is refused (exit $rc)" test $rc -eq 2
check "... pointing at --resume" grep -q "already holds a Slurm grading run" <<<"$out"

task_state() { squeue -h -r -j "$array" -o '%i %T %r' 2>/dev/null | grep "^${array}_$1 "; }
running0() { task_state 0 | grep -q ' RUNNING '; }
wait_for 300 "task 0 starting" running0
check "the throttle holds task 1 back while task 0 runs ($(task_state 1))" \
  grep -q "^${array}_1 PENDING JobArrayTaskLimit" <<<"$(task_state 1)"

states0() { find "$o/tasks/0/state" -name '*.json' 2>/dev/null | wc -l; }
# Its share is 8; corrupt_tarball is scored before anything is built, so 3 means two were built and graded.
three_graded() { [ "$(states0)" -ge 3 ]; }
wait_for 900 "task 0 grading its share" three_graded
n=$(states0)
check "task 0 is mid-way when cancelled ($n of 8 graded)" test "$n" -lt 8
scancel "${array}_0"
echo "cancelled task 0 after $((SECONDS - start)) s, with $n of 8 graded"

# While task 1 is pending or running, a resume would resubmit task 0 only, and its collector
# would wait for task 1's array too (a dry run: this round's collector must see the failure).
cancelled0() { grep -q '^CANCELLED' <<<"$(state_of "${array}_0")"; }
wait_for 60 "sacct recording the cancellation" cancelled0
out=$("$convlab" --root "$root" grade --slurm --resume --out "$o" --dry-run 2>&1)
rc=$?
echo "$out" | sed -n '1,6p'
check "resume --dry-run while task 1 is active (exit $rc)" test $rc -eq 0
check "... task 1 is left to run" grep -Eq "^  1  *active  *${array}_1 *(PENDING|RUNNING)" <<<"$out"
check "... task 0 would be resubmitted" grep -q "^resubmitting task(s) 0;" <<<"$out"
check "... with a collector that also waits for the running array" \
  grep -q "^#SBATCH --dependency=afterany:<the array job>:${array}\$" <<<"$out"
check "... and nothing submitted" test ! -e "$o/slurm/round-2"

wait_for 900 "the collector of round 1 ending" job_ended "$collector"
n=$(states0)  # what task 0 finished before the cancellation took effect
echo "round 1 over after $((SECONDS - start)) s; task 0 had graded $n of 8"
sleep 2  # slurmdbd records the end of a job a moment after it
check "sacct: task 0 CANCELLED ($(state_of "${array}_0"))" grep -q '^CANCELLED' <<<"$(state_of "${array}_0")"
check "sacct: task 1 COMPLETED ($(state_of "${array}_1"))" test "$(state_of "${array}_1")" = COMPLETED
check "the collector reports the run incomplete (exit $(exit_of "$collector"))" test "$(exit_of "$collector")" = 1:0
check "no gradebook while a task's submissions have no result" test ! -e "$o/gradebook.csv"
check "grade.log says INCOMPLETE" grep -q "^INCOMPLETE: " "$o/grade.log"
check "grade.log names the cancelled task" grep -q "0 *failed .*CANCELLED" "$o/grade.log"
check "feedback already written for task 1's students" test -s "$o/feedback/wrong_result.md"

# --resume resubmits task 0 only; it keeps what it had graded.
start=$SECONDS
out=$("$convlab" --root "$root" grade --slurm --resume --out "$o" 2>&1)
rc=$?
echo "$out"
check "resume submitted (exit $rc)" test $rc -eq 0
check "resume: task 0 resubmitted" grep -q "^resubmitting task(s) 0;" <<<"$out"
check "resume: task 1 (done) left alone" grep -q "^  1  *done " <<<"$out"
array2=$(sed -n 's/^submitted array job \([0-9]*\) .*/\1/p' <<<"$out")
collector2=$(sed -n 's/.* and collector job \([0-9]*\) .*/\1/p' <<<"$out")
check "a new array job and collector" test -n "$array2" -a -n "$collector2" -a "$array2" != "$array"
wait_for 900 "the collector of round 2 ending" job_ended "$collector2"
echo "resumed round over after $((SECONDS - start)) s"
sleep 2
check "sacct: the resubmitted task COMPLETED ($(state_of "${array2}_0"))" test "$(state_of "${array2}_0")" = COMPLETED
check "the collector succeeded (exit $(exit_of "$collector2"))" test "$(exit_of "$collector2")" = 0:0
check "the resumed task kept the $n submissions it had finished" \
  test "$(grep -c '^\[[^]]*\] resumed: ' "$o/tasks/0/grade.log")" -eq "$n"
check "every score as expected (expected-cpu.json)" grep -q "^every score as expected" "$o/grade.log"

# The merged outputs equal the local grading's, byte for byte.
check "gradebook.csv equals the local grading's" cmp "$o/gradebook.csv" "$e2e/out/gradebook.csv"
check "feedback/ equals the local grading's" diff -r "$o/feedback" "$e2e/out/feedback"
check "results/ equals the local grading's" diff -r "$o/results" "$e2e/out/results"
check "grade.log holds both tasks' logs" test "$(grep -c '^==== task ' "$o/grade.log")" -eq 2
# Each task's figure (issue 29, item 6): where it ran, and its submissions' mean build and run.
check "grade.log: seconds per submission, a line per task" \
  test "$(grep -cE '^  task [01] \(node [^,]+, [^)]+\): ([0-9]+ submissions?, [0-9.]+ s each \(build [0-9.]+, run [0-9.]+\)|no submission graded)$' "$o/grade.log")" -eq 2
check "... and one for all tasks" grep -qE '^  all tasks: [0-9]+ submissions?, [0-9.]+ s each \(build [0-9.]+, run [0-9.]+\)$' "$o/grade.log"
check "hardware.json: a record per task" test "$(grep -c '"verdict": "done"' "$o/hardware.json")" -eq 2
check "hardware.json: an attempt per job (task 0 twice, task 1 once)" test "$(grep -c '"job_id": ' "$o/hardware.json")" -eq 3
check "hardware.json: the node of each attempt" grep -q "\"node\": \"$(hostname -s)\"" "$o/hardware.json"
# What the command says of this machine, up to any ';' (a GPU's measured bandwidth follows one) or
# quote: "no GPU: ..." with the CUDA backend and no GPU (CI), the GPU's name and figures with one.
here=$("$convlab" hardware 2>/dev/null | head -1)
here=${here%%;*}
here=${here%%\"*}
[ -n "$here" ] || here="(convlab hardware printed nothing)"
check "hardware.json: the GPU each attempt found (as convlab hardware says: ${here:0:40}...)" \
  grep -qF "\"summary\": \"$here" "$o/hardware.json"

# Once every task is done, --resume has nothing to submit and merges again.
out=$("$convlab" --root "$root" grade --slurm --resume --out "$o" 2>&1)
check "resume when all is done: exit 0, nothing submitted" test $? -eq 0
check "... saying so" grep -q "^every task is done" <<<"$out"
check "... the gradebook unchanged" cmp "$o/gradebook.csv" "$e2e/out/gradebook.csv"
check "no process of the sandbox user is left" test "$(ps -u nobody -o args= 2>/dev/null | grep -cF "$work/")" -eq 0
# What the jobs cost (jobacct_gather/linux): the part of this test's time spent in Slurm.
sacct -j "$array,$collector,$array2,$collector2" -P -n --format=JobID,State,Elapsed,TotalCPU 2>/dev/null |
  grep -v '\.extern|' | sed 's/^/jobs: /'
exit $fail
