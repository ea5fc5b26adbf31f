#!/usr/bin/env bash
# `convlab release`: the student copy has no solutions and no grading fixtures,
# and it configures, builds and runs its CPU tests as it is, in a fresh folder.
#   release_check.sh CONVLAB_EXE SOURCE_DIR WORK_DIR
set -uo pipefail
convlab=$1 root=$2 work=$3
fail=0
check() { if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
rm -rf "$work"
mkdir -p "$work"
export PATH=/usr/local/cuda/bin:$PATH

"$convlab" --root "$root" release --out "$work/student.tar.gz" --prefix convlab-student
check "release wrote the tarball" test -s "$work/student.tar.gz"
tar -tzf "$work/student.tar.gz" >"$work/list.txt"
check "no reference/ in it" bash -c "! grep -q '^convlab-student/reference/' '$work/list.txt'"
check "no grading fixtures in it" bash -c "! grep -q 'grader/cli/tests' '$work/list.txt'"
check "no instructor GPU scripts in it" bash -c "! grep -qE 'gpu-check|gpu-grade-check|gpu-compiler-check' '$work/list.txt'"
check "the starter is in it" grep -q '^convlab-student/starter_code/01-conv-basic/conv_basic.cu$' "$work/list.txt"
check "no build outputs in it" bash -c "! grep -q '^convlab-student/build/' '$work/list.txt'"

mkdir -p "$work/fresh"
tar -xzf "$work/student.tar.gz" -C "$work/fresh"
cd "$work/fresh/convlab-student" || exit 1
# The default preset, as a student runs it (one architecture to save time here).
cmake --preset default -DCONVLAB_CUDA_ARCH=90 >"$work/configure.log" 2>&1
check "the student copy configures with the default preset" test $? -eq 0
cmake --build --preset default >"$work/build.log" 2>&1
check "the student copy builds" test $? -eq 0
tail -3 "$work/build.log"
check "its graders exist" test -x build/default/labs/01-conv-basic/lab01_graders
check "its convlab command exists" test -x build/default/grader/cli/convlab
# The labs' own CPU checks (contracts, specs, seeds): they pass on the starter, on either
# backend (without a GPU the default preset builds the CPU backend, whose lab graders carry
# the label cpu too, and fail on the starter as they should).
ctest --preset default -R '^lab[0-9]+\.cpu\.' >"$work/ctest.log" 2>&1
check "its labs' CPU checks pass" test $? -eq 0
tail -5 "$work/ctest.log"
ctest --preset default -L lab01 >"$work/ctest-gpu.log" 2>&1
check "its lab graders run (on a GPU they fail on the starter; without one they skip)" \
  grep -qE "tests passed|tests failed" "$work/ctest-gpu.log"
out=$(build/default/grader/cli/convlab labs 2>&1)
check "convlab works in the student copy" grep -q "lab01  01-conv-basic" <<<"$out"
exit $fail
