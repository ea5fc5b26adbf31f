#!/usr/bin/env bash
# `convlab release`: the student copy holds no answers (no reference/, no line of a reference
# kernel, a baseline (grader/baselines/, lab 06's labs/06-*/baseline_lab06.cu) or the cuDNN anchor:
# those come compiled, checked at configure time), no
# instructor material, only files of the allow-list; a dirty tree is refused; and the copy
# configures, builds, runs its graders and builds its docs as it is, in a fresh folder (on the CPU
# backend here, as a student without a GPU).
#   release_check.sh CONVLAB_EXE SOURCE_DIR WORK_DIR [PREBUILD_DIR]
# PREBUILD_DIR (default WORK_DIR/prebuild) keeps the release's own builds of the prebuilt
# libraries between runs.
set -uo pipefail
convlab=$1 root=$2 work=$3 prebuild=${4:-$3/prebuild}
here=$(cd "$(dirname "$0")" && pwd)
fail=0
check() { if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
rm -rf "$work"
mkdir -p "$work"
export PATH=/usr/local/cuda/bin:$PATH

# --- a dirty tree is refused, and says which files (a clone: the course tree is left alone) ---
git clone -q "$root" "$work/dirty" 2>"$work/clone.log"
echo "// an edit not committed" >>"$work/dirty/labs/01-conv-basic/lab01.hpp"
"$convlab" --root "$work/dirty" release --out "$work/dirty.tar.gz" >"$work/dirty.log" 2>&1
rc=$?
check "a tree with uncommitted edits is refused (exit 2)" test $rc -eq 2
check "the refusal names the file and --allow-dirty" \
  bash -c "grep -q 'labs/01-conv-basic/lab01.hpp' '$work/dirty.log' && grep -q -- '--allow-dirty' '$work/dirty.log'"
check "nothing is written for a refused release" test ! -e "$work/dirty.tar.gz"
rm -rf "$work/dirty"

# --- the release (a developer's tree may hold uncommitted edits: packed, with the warning) ---
allow=()
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then allow=(--allow-dirty); fi
start=$SECONDS
"$convlab" --root "$root" release --out "$work/student.tar.gz" --prefix convlab-student --build-dir "$prebuild" \
  "${allow[@]}" >"$work/release.log" 2>&1
check "release wrote the tarball" test -s "$work/student.tar.gz"
echo "release: $((SECONDS - start)) s"
tail -3 "$work/release.log"
tar -tzf "$work/student.tar.gz" | grep -v '/$' | sed 's|^convlab-student/||' >"$work/list.txt"

# Every file on the allow-list ('*' within one name; '!' lines are never allowed).
python3 - "$here/release_allowlist.txt" "$work/list.txt" >"$work/allowlist.log" <<'EOF'
import re, sys
rules = [l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
def rx(glob):
    return re.compile("^" + "".join("[^/]*" if c == "*" else re.escape(c) for c in glob) + "$")
allow = [rx(r) for r in rules if not r.startswith("!")]
deny = [rx(r[1:]) for r in rules if r.startswith("!")]
bad = [f for f in open(sys.argv[2]).read().split("\n") if f and (any(d.match(f) for d in deny) or not any(a.match(f) for a in allow))]
for f in bad:
    print("not on the allow-list:", f)
sys.exit(1 if bad else 0)
EOF
check "every file of the student copy is on the allow-list" test $? -eq 0
cat "$work/allowlist.log"
check "no reference/ in it" bash -c "! grep -q '^reference/' '$work/list.txt'"
check "no baseline or cuDNN anchor source in it" \
  bash -c "! grep -qE '^grader/baselines/|^grader/device/src/cudnn_conv\\.cpp$|^labs/[^/]*/baseline_[^/]*\\.cu$' '$work/list.txt'"
check "no grading fixtures in it" bash -c "! grep -q 'grader/cli/tests' '$work/list.txt'"
check "no lab's instructor programs in it (lab 05's cp.async measurement)" \
  bash -c "! grep -q '^labs/[^/]*/instructor/' '$work/list.txt'"
check "no instructor pages, CI or GPU scripts in it" \
  bash -c "! grep -qE '^docs/(instructor|instructors|quickstart)\\.md$|^\\.ci/|gpu-check|gpu-grade-check|gpu-compiler-check' '$work/list.txt'"
for lib in MANIFEST.json cuda/libconvlab_baselines.a cpu/libconvlab_baselines.a cuda/liblab06_baseline.a cpu/liblab06_baseline.a; do
  check "grader/prebuilt/$lib is in it" grep -qx "grader/prebuilt/$lib" "$work/list.txt"
done
check "the starter is in it" grep -qx 'starter_code/01-conv-basic/conv_basic.cu' "$work/list.txt"
check "no build outputs in it" bash -c "! grep -q '^build/' '$work/list.txt'"

mkdir -p "$work/fresh"
tar -xzf "$work/student.tar.gz" -C "$work/fresh"
copy=$work/fresh/convlab-student
check "the README holds the students' part only" \
  bash -c "grep -q 'Students: your first five minutes' '$copy/README.md' && ! grep -qE '^## Instructors|^## The test suite|instructor-only|cpu-instructor' '$copy/README.md'"
check "the docs hold no instructor-only region" bash -c "! grep -rqE 'instructor-only|Threat model|What is \\*\\*not\\*\\* contained' '$copy/docs' '$copy/labs'"
check "CMakePresets.json holds the student presets only" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
names = {x["name"] for k in ("configurePresets", "buildPresets", "testPresets", "workflowPresets") for x in p.get(k, [])}
sys.exit(0 if {"default", "cpu", "default-next", "cpu-next"} <= names and not names & {"ci", "instructor", "cpu-instructor", "cpu-asan"} else 1)' "$copy/CMakePresets.json"
# The CUDA library: code for sm_80 and sm_90, and PTX for newer GPUs.
if command -v cuobjdump >/dev/null; then
  elfs=$(cuobjdump --list-elf "$copy/grader/prebuilt/cuda/libconvlab_baselines.a" 2>&1)
  ptx=$(cuobjdump --list-ptx "$copy/grader/prebuilt/cuda/libconvlab_baselines.a" 2>&1)
  check "the CUDA baselines hold sm_80 and sm_90 code and compute_90 PTX" \
    bash -c "grep -q sm_80 <<<'$elfs' && grep -q sm_90 <<<'$elfs' && grep -q sm_90 <<<'$ptx'"
else
  echo "skipped: the CUDA library's code and PTX are not listed (no cuobjdump here)"
fi
check "the manifest lists both baselines, the CUDA ones built for sm_80, sm_90 and compute_90 PTX" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
libs = {"convlab_baselines", "lab06_baseline"}
sys.exit(0 if m["cuda"]["architectures"] == "80-real;90-real;90-virtual" and libs <= set(m["cpu"]["libraries"])
         and libs <= set(m["cuda"]["libraries"]) else 1)' \
  "$copy/grader/prebuilt/MANIFEST.json"

# --- no answer in any file: the scan finds none here, and finds a planted copy ---
python3 "$here/answer_scan.py" "$root" "$copy" >"$work/scan.log" 2>&1
check "no file of the student copy holds a line of a reference kernel, a baseline or the cuDNN anchor" test $? -eq 0
cat "$work/scan.log"
mkdir -p "$work/planted/docs"
cp "$root/grader/baselines/conv_naive.cu" "$work/planted/docs/notes.md"
python3 "$root/grader/cli/tests/answer_scan.py" "$root" "$work/planted" >"$work/scan-planted.log" 2>&1
check "the scan finds a planted copy of the naive baseline" grep -q 'notes.md: holds .* lines of grader/baselines/conv_naive.cu' "$work/scan-planted.log"
mkdir -p "$work/planted/labs/06-conv-im2col-cudnn"
cp "$root"/labs/06-*/baseline_lab06.cu "$work/planted/labs/06-conv-im2col-cudnn/"
python3 "$root/grader/cli/tests/answer_scan.py" "$root" "$work/planted" >"$work/scan-planted.log" 2>&1
check "the scan finds lab 06's naive baseline left in a copy" \
  grep -q 'baseline_lab06.cu: holds .* lines of labs/06-conv-im2col-cudnn/baseline_lab06.cu' "$work/scan-planted.log"

cd "$copy" || exit 1
# --- the prebuilt libraries are checked at configure time ---
lib=grader/prebuilt/cpu/libconvlab_baselines.a
cp "$lib" "$work/lib.keep"
printf 'x' >>"$lib"
cmake --preset cpu >"$work/configure-altered.log" 2>&1
rc=$?
# CMake wraps a message's lines: compare with its white space folded.
folded() { tr -s ' \n' '  ' <"$1" >"$1.folded"; }
folded "$work/configure-altered.log"
check "an altered prebuilt library is refused at configure time" \
  bash -c "test $rc -ne 0 && grep -q 'libconvlab_baselines.a (convlab_baselines, cpu backend) has been altered: its SHA-256 is [0-9a-f]\{64\}, the manifest' '$work/configure-altered.log.folded'"
rm "$lib"
cmake --preset cpu >"$work/configure-missing.log" 2>&1
rc=$?
folded "$work/configure-missing.log"
check "a missing prebuilt library is refused at configure time" \
  bash -c "test $rc -ne 0 && grep -q 'libconvlab_baselines.a (convlab_baselines, cpu backend) is missing' '$work/configure-missing.log.folded'"
cp "$work/lib.keep" "$lib"
rm -rf build

# --- the copy as a student runs it: the default preset (the CPU backend without a GPU) ---
start=$SECONDS
cmake --preset default -DCONVLAB_CUDA_ARCH=90 >"$work/configure.log" 2>&1
check "the student copy configures with the default preset" test $? -eq 0
check "it links the prebuilt baselines, checked" grep -q 'convlab_baselines prebuilt (grader/prebuilt/.*SHA-256 checked)' "$work/configure.log"
check "it links lab 06's prebuilt baseline, checked" grep -q 'lab06_baseline prebuilt (grader/prebuilt/.*SHA-256 checked)' "$work/configure.log"
cmake --build --preset default >"$work/build.log" 2>&1
check "the student copy builds" test $? -eq 0
tail -3 "$work/build.log"
echo "student build: $((SECONDS - start)) s"
check "its graders exist" test -x build/default/labs/01-conv-basic/lab01_graders
check "its convlab command exists" test -x build/default/grader/cli/convlab
check "lab 01's runner holds the prebuilt naive baseline" \
  bash -c "nm -C build/default/labs/01-conv-basic/lab01_runner | grep -q ' T convlab::baseline::conv1d_naive('"
check "lab 06's runner holds its prebuilt naive baseline" \
  bash -c "nm -C build/default/labs/06-conv-im2col-cudnn/lab06_runner | grep -q ' T convlab::lab06::baseline::conv_naive('"
# The labs' own CPU checks (contracts, specs, seeds): they pass on the starter, on either
# backend (without a GPU the default preset builds the CPU backend, whose lab graders carry
# the label cpu too, and fail on the starter as they should).
ctest --preset default -R '^lab[0-9]+\.cpu\.' >"$work/ctest.log" 2>&1
check "its labs' CPU checks pass" test $? -eq 0
tail -5 "$work/ctest.log"
ctest --preset default -L lab01 >"$work/ctest-lab01.log" 2>&1
if grep -q 'CONVLAB_BACKEND_USED:INTERNAL=cpu' build/default/CMakeCache.txt; then
  # On the CPU backend the correctness graders run, and fail on the untouched starter.
  check "its lab 01 graders run on the CPU backend (and fail on the starter)" \
    bash -c "grep -qE 'lab01\\.correctness\\.conv1d\\.[^ ]+ .*Failed' '$work/ctest-lab01.log' && grep -q 'tests failed' '$work/ctest-lab01.log'"
else
  check "its lab graders run (on a GPU they fail on the starter)" grep -qE "tests passed|tests failed" "$work/ctest-lab01.log"
fi
out=$(build/default/grader/cli/convlab labs 2>&1)
check "convlab works in the student copy" grep -q "lab01  01-conv-basic" <<<"$out"
if grep -q 'docs.doxygen' <(ctest --preset default -N -R '^docs\.doxygen$' 2>/dev/null); then
  ctest --preset default -R '^docs\.doxygen$' >"$work/docs.log" 2>&1
  check "its docs build without a warning (no dead link to a page it leaves out)" test $? -eq 0
  check "its docs have no instructor pages" test ! -e build/default/docs/html/instructor.html
fi
exit $fail
