#!/usr/bin/env bash
# The fixture corpus (grader/cli/tests/fixtures/), graded end to end by
# `convlab grade`, as folders, a tarball and a git repository, plus submissions
# made here (one that #includes the instructor's solution, a corrupt tarball).
# Without a GPU the GPU graders are "not run"; everything else is checked:
# overlay, build, time limits, tamper and symbol checks, scoring, every output.
# The fixtures are lab 01 submissions, so they are graded with --labs lab01.
#   e2e_grade.sh CONVLAB_EXE SOURCE_DIR WORK_DIR
set -uo pipefail
convlab=$1 root=$2 work=$3
fixtures=$root/grader/cli/tests/fixtures
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}

# Its expected scores (fixtures/expected-cpu.json) are those of a machine without a GPU;
# on a GPU machine the same corpus is graded by grader/cli/gpu-grade-check.sh against
# fixtures/expected-gpu.json.
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIPPED: this machine has a GPU; the GPU grading of the corpus is grader/cli/gpu-grade-check.sh"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/subs"
chmod 755 "$work"  # the graders may run as another user: it must reach its folders
export PATH=/usr/local/cuda/bin:$PATH
# The corpus: edits on the lab 01 files (fixtures/fixtures.json), the correct submission as a
# tarball and as a git repository, one that #includes the solution, a corrupt tarball.
. "$root/grader/cli/tests/corpus.sh"
write_corpus "$work/subs" "$root" || exit 1

# Bad input to the command itself: clear errors, exit 2, no crash.
out=$("$convlab" --root "$root" grade "$work/subs/no_such_submission" --out "$work/bad" 2>&1)
check "a missing submission is refused (exit 2)" test $? -eq 2
check "... with a message naming it" grep -q "submission '$work/subs/no_such_submission' does not exist" <<<"$out"
out=$("$convlab" --root "$root" grade "$work/subs/correct" --labs lab42 --out "$work/bad" 2>&1)
check "an unknown lab is refused (exit 2)" test $? -eq 2
check "... listing the labs" grep -q "unknown lab 'lab42'; the labs are: lab01" <<<"$out"
out=$("$convlab" --root "$root" check nosuchlab 2>&1)
check "check: an unknown lab is refused (exit 2)" test $? -eq 2

subs=("$work"/subs/*)
start=$SECONDS
"$convlab" --root "$root" grade "${subs[@]}" --labs lab01 --out "$work/out" --cuda-arch 90 --jobs 1 --test-timeout 60 \
  --expect "$fixtures/expected-cpu.json" >"$work/grade1.log" 2>&1
rc=$?
cat "$work/grade1.log"
check "every fixture scored as expected (exit $rc)" test $rc -eq 0
echo "graded ${#subs[@]} submissions in $((SECONDS - start)) s"

o=$work/out
check "gradebook.csv: header, points possible, a row per student" \
  test "$(head -2 "$o/gradebook.csv")" = $'student,lab01,total\nPoints Possible,100,100'
check "gradebook.csv has ${#subs[@]} student rows" test "$(($(wc -l <"$o/gradebook.csv") - 2))" -eq ${#subs[@]}
check "feedback for every student" test "$(ls "$o"/feedback/*.md | wc -l)" -eq ${#subs[@]}
check "Gradescope results for every student" test "$(ls "$o"/results/*.json | wc -l)" -eq ${#subs[@]}
check "results.json has score, max_score, tests with status" \
  grep -q '"status": "failed"' "$o/results/correct.json"
check "results.json max_score is the lab's total" grep -q '"max_score": 100' "$o/results/correct.json"
check "feedback names each grader and the threshold" grep -q '| speedup.conv1d | not run | 0 / 15 | - | 0.5x |' "$o/feedback/correct.md"
check "feedback of the compile error shows the compiler's message" grep -q "expected a \";\"" "$o/feedback/compile_error.md"
check "feedback names the forbidden symbol" grep -q "cublasCreate" "$o/feedback/forbidden_call.md"
check "feedback names the tampered files" grep -q "labs/01-conv-basic/grading.json" "$o/feedback/tamper_tests.md"
check "feedback lists the fence's findings one a line" grep -q "^- conv_basic.cu: uses cublasCreate" "$o/feedback/forbidden_call.md"
# What a student reads names no folder of the grading machine (the course, the outputs, the
# submissions) and carries no GoogleTest scaffolding; one replay line per failure shown.
check "no path of the grading machine in any feedback or results file" \
  bash -c '! grep -rlF -e "$1" -e "$2" "$3/feedback" "$3/results"' _ "$root" "$work" "$o"
check "no GoogleTest scaffolding in any feedback or results file" \
  bash -c '! grep -rlE "Value of:|Google Test trace|^ *Expected: " "$1/feedback" "$1/results"' _ "$o"
check "the submission is named by its file name" grep -q 'Submission: `correct_tarball.tar.gz` (tarball)' "$o/feedback/correct_tarball.md"
check "the unpack reason is said once" test "$(grep -c "cannot unpack" "$o/feedback/corrupt_tarball.md")" -eq 1
check "hardware.json written" grep -q '"gpus"' "$o/hardware.json"
check "hardware.json: the toolchain check ran, and says there is no GPU to check on" \
  grep -q '"status": "no-gpu"' "$o/hardware.json"
check "grade.log written" grep -q "convlab grade:" "$o/grade.log"
check "grade.log ends with the seconds per submission by lab and phase" \
  bash -c "grep -q 'seconds per submission, by lab and phase' '$o/grade.log' && grep -qE '^lab01 +[0-9.]+ +[0-9.]+ +[0-9.]+' '$o/grade.log'"
check "the tarball was unpacked and built" grep -q '"kind": "tarball"' "$o/state/correct_tarball.json"
check "the git repository was cloned and built" grep -q '"kind": "git"' "$o/state/correct_git.json"
# The build slot's folder, as grade.log names it (OUT/work/slots/0, or under --slots-dir /
# CONVLAB_SLOTS_DIR, which the grading tests share).
slot=$(grep -o 'build slot 0 ready in .*): /.*' "$o/grade.log" | head -1 | sed 's/.*): //')
check "grade.log names the build slot's folder ($slot)" test -d "$slot/build"
check "the grading tree has no reference/" test ! -e "$slot/src/reference"
check "the tampered spec did not reach the grading tree" \
  cmp -s "$root/labs/01-conv-basic/grading.json" "$slot/src/labs/01-conv-basic/grading.json"
check "the course tree is untouched" git -C "$root" diff --quiet -- labs grader/protocol grader/harness grader/report grader/bench grader/device
check "no process of the sandbox user is left" test "$(ps -u nobody -o pid= 2>/dev/null | wc -l)" -eq 0

# An interrupted or repeated run resumes: nothing is graded twice.
start=$SECONDS
"$convlab" --root "$root" grade "${subs[@]}" --labs lab01 --out "$work/out" --cuda-arch 90 --jobs 1 --test-timeout 60 \
  --expect "$fixtures/expected-cpu.json" >"$work/grade2.log" 2>&1
rc=$?
check "the second run agrees (exit $rc)" test $rc -eq 0
check "the second run resumed every submission" test "$(grep -c '^resumed: ' "$work/grade2.log")" -eq ${#subs[@]}
echo "resumed run: $((SECONDS - start)) s"

# The student commands on this tree: status informs (exit 0), check explains.
out=$("$convlab" --root "$root" status --build-dir "$slot/build" 2>&1)
check "status exits 0 and prints a table" grep -q "^lab01 " <<<"$out"
echo "$out"

out=$("$convlab" --root "$root" check lab01 --build-dir "$slot/build" 2>&1)
rc=$?
echo "$out" | tail -8
# Nothing could run (no GPU here): the check never ends green; it says why and what works instead.
check "check builds, runs the graders and does not end green when none could run (exit $rc)" test $rc -eq 1
check "check says why nothing ran" grep -q "the graders could not run: GPU test skipped" <<<"$out"
check "check names the command that works here" grep -q "cmake --workflow --preset cpu" <<<"$out"
out=$("$convlab" --root "$root" watch lab01 --cycles 1 --build-dir "$slot/build" 2>&1)
check "watch runs a check (exit $?)" grep -q "points if graded now" <<<"$out"

# Writes outside its folder, when the graders run as the invoking user: refused by the symbol fence
# before it runs (its global constructor calls fopen), or else detected after the run. Last: the
# tree then holds this submission, which does not build.
"$convlab" --root "$root" grade "$work/subs/writes_outside" --labs lab01 --out "$work/out-nosandbox" --work-dir "$o/work" \
  --cuda-arch 90 --jobs 1 --sandbox-user none >"$work/grade3.log" 2>&1
check "a write to the grading tree is refused or detected" \
  grep -q "refused by the symbol fence\|changed while its graders ran" "$work/out-nosandbox/feedback/writes_outside.md"
cat "$work/grade3.log" | tail -5

exit $fail
