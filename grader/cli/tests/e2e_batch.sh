#!/usr/bin/env bash
# A lab's graders in one graders process (grader/cli/grading/batch.hpp, issue 29 item 4), graded end to
# end on the CPU backend: the fixture 'correct' takes one graders process for lab 01 (its two
# correctness graders; the speed graders need a GPU, where gpu-grade-check.sh expects two), and a
# submission whose conv1d kernel never ends costs correctness.conv1d only: the process is killed
# in conv1d's first test, that test is charged with it and conv1d's other tests are not run, and
# correctness.conv2d's tests, which come after it, run in a fresh process, recorded and passed.
#   e2e_batch.sh CONVLAB_EXE SOURCE_DIR WORK_DIR
set -uo pipefail
convlab=$1 root=$2 work=$3
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
rm -rf "$work"
mkdir -p "$work/corpus" "$work/subs"
chmod 755 "$work"  # the graders may run as another user: it must reach its folders
"${CMAKE:-cmake}" -DROOT="$root" -DOUT="$work/corpus" -P "$root/grader/cli/tests/make_fixtures.cmake" || exit 1
mv "$work/corpus/correct" "$work/subs/correct"
# The fixture infinite_loop's edit, with a loop the CPU backend can run (it has no clock64): the
# conv1d kernel never ends.
mkdir -p "$work/subs/hang_conv1d/starter_code/01-conv-basic"
python3 - "$root/reference/01-conv-basic/conv_basic.cu" "$work/subs/hang_conv1d/starter_code/01-conv-basic/conv_basic.cu" <<'EOF' || exit 1
import sys
text = open(sys.argv[1]).read()
find = "  float sum = 0.0f;\n  for (int j = -r; j <= r; ++j) {\n"
assert text.count(find) == 1, "the conv1d kernel's loop is not found once in the reference"
text = text.replace(find, "  for (volatile int forever = 1; forever;) {\n  }  // never ends\n" + find)
open(sys.argv[2], "w").write(text)
EOF
cat >"$work/expected.json" <<'EOF'
{ "correct":     { "lab01": 70 },
  "hang_conv1d": { "lab01": 35, "reason": "this test killed: one test ran past its time limit" } }
EOF
# Under /tmp, as `mktemp -d` gives it (the runner sandbox's private /tmp must not hide the runners).
scratch=$(mktemp -d /tmp/convlab-batch-XXXXXX)
chmod 755 "$scratch"
start=$SECONDS
"$convlab" --root "$root" grade "$work/subs/correct" "$work/subs/hang_conv1d" --labs lab01 --preset cpu --out "$work/out" \
  --jobs 1 --work-dir "$scratch/work" --test-timeout 20 --expect "$work/expected.json" >"$work/grade.log" 2>&1
rc=$?
cat "$work/grade.log"
echo "graded 2 submissions in $((SECONDS - start)) s"
rm -rf "$scratch"
log=$work/out/grade.log
check "both scored as expected (exit $rc)" test $rc -eq 0
# grade.log's line per graders process: "---- STUDENT LAB GRADERS on WHERE: how it ended".
check "correct: one graders process for lab01 on the CPU backend" \
  test "$(grep -c '^---- correct lab01 .* on ' "$log")" -eq 1
check "... naming both correctness graders" \
  grep -q '^---- correct lab01 correctness.conv1d, correctness.conv2d (2 graders, [0-9]* tests, one process) on .*: exited with status 0$' "$log"
check "hang_conv1d: the batch was killed in conv1d's test" \
  grep -q '^---- hang_conv1d lab01 correctness.conv1d, correctness.conv2d (.*) on .*: killed: one test ran past its time limit' "$log"
check "... charged to correctness.conv1d alone, conv2d run again" \
  grep -q 'hang_conv1d lab01: the graders process killed: one test ran past its time limit in lab01.correctness.conv1d.[^ ]*: charged to correctness.conv1d alone; correctness.conv2d run again in a fresh process' "$log"
check "... conv2d in a process of its own, which ended well" \
  grep -q '^---- hang_conv1d lab01 correctness.conv2d on .*: exited with status 0$' "$log"
check "... two graders processes in all" test "$(grep -c '^---- hang_conv1d lab01 .* on ' "$log")" -eq 2
# The verdicts, test by test, from the saved result.
check "conv1d: the first test charged, the rest not run; conv2d: every test recorded and passed" python3 - "$work/out/state/hang_conv1d.json" <<'EOF'
import json, sys
lab = json.load(open(sys.argv[1]))["labs"][0]
g = {x["id"]: x for x in lab["graders"]}
c1, c2 = g["correctness.conv1d"]["tests"], g["correctness.conv2d"]["tests"]
ok = c1[0]["message"] == "this test killed: one test ran past its time limit" and not c1[0]["recorded"]
ok = ok and all(t["message"].startswith("not run: an earlier test of this grader killed") for t in c1[1:])
ok = ok and len(c2) > 0 and all(t["recorded"] and t["passed"] for t in c2)
ok = ok and g["correctness.conv2d"]["points"] == 35 and g["correctness.conv1d"]["points"] == 0
if not ok:
    print(json.dumps(g, indent=1)[:3000])
sys.exit(0 if ok else 1)
EOF
exit $fail
