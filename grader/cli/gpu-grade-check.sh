#!/usr/bin/env bash
# The GPU verification of `convlab grade`, in one call, on a machine with an
# NVIDIA GPU (the lead's H100 run). Builds the convlab command, grades the
# fixture corpus (grader/cli/tests/fixtures/, plus the correct submission five
# times, as a tarball and as a git repository, one that #includes the
# solution, a corrupt tarball), compares every score with
# fixtures/expected-gpu.json, prints the time per submission, and grades the
# correct submission once more under compute-sanitizer memcheck.
# Then grades the exploit corpus (grader/cli/tests/exploits/) against exploits/expected-gpu.json.
# Outputs in $OUT (default ./gpu-logs/grade), at most 8 files:
#   summary.txt  build.log  grade-console.log  exploits-console.log  sanitize-console.log
#   grade-out.tgz  exploits-out.tgz  sanitize-out.tgz
#
#   grader/cli/gpu-grade-check.sh   (SANITIZE=0 skips the memcheck run; FIXTURES=0 the fixture corpus; CORRECT_RUNS=1 grades
#                                    'correct' once, not five times (the corpus graded in about 6 minutes); CALIBRATE=1 also runs
#                                    convlab calibrate and keeps calibration.json; EXPLOITS=0 skips the exploit corpus;
#                                    TIMING_LABS="01 02 03 04 05 06" grades the reference of those labs as one
#                                    submission and prints each lab's build and run time: the cost per submission)
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
OUT=${OUT:-$root/gpu-logs/grade}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
summary=$OUT/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
t_all=$SECONDS

note "== convlab grade on a GPU, $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1 | tee -a "$summary"
B=$root/build/grade-check
t=$SECONDS
{ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCONVLAB_CUDA_ARCH=native -DCONVLAB_IMPL=reference \
    -DCONVLAB_BENCHMARKS=OFF && cmake --build "$B" --target convlab_cli; } >"$OUT/build.log" 2>&1
rc=$?
note "build of convlab: rc=$rc, $((SECONDS - t)) s"
[ $rc -eq 0 ] || { tail -30 "$OUT/build.log"; exit 1; }
convlab=$B/grader/cli/convlab

work=$(mktemp -d /tmp/convlab-grade-XXXXXX)
chmod 755 "$work"  # the graders may run as another user
jobs=$(($(nproc) / 2)); [ $jobs -gt 8 ] && jobs=8
if [ "${FIXTURES:-1}" = 1 ]; then  # FIXTURES=0: the exploit corpus only
fixtures=$root/grader/cli/tests/fixtures
# The corpus (tests/corpus.sh), with 'correct' five times (CORRECT_RUNS: how many).
. "$root/grader/cli/tests/corpus.sh"
write_corpus "$work/subs" "$root" "${CORRECT_RUNS:-5}" || exit 1
expected=$fixtures/expected-gpu.json
if [ "${CORRECT_RUNS:-5}" -lt 5 ]; then  # the expectations of the runs that were not made go
  expected=$work/expected-gpu.json
  corpus_expectations "$fixtures/expected-gpu.json" "$CORRECT_RUNS" "$expected" || exit 1
fi
subs=("$work"/subs/*)

t=$SECONDS
"$convlab" grade "${subs[@]}" --labs lab01 --out "$work/out" --jobs $jobs --test-timeout 30 \
  --expect "$expected" 2>&1 | tee "$OUT/grade-console.log"
rc=${PIPESTATUS[0]}
wall=$((SECONDS - t))
note "grade: rc=$rc (0: every score as expected), ${#subs[@]} submissions in $wall s wall, $(awk "BEGIN{printf \"%.1f\", $wall/${#subs[@]}}") s per submission"
sed -n '/^student /,/^outputs:/p' "$OUT/grade-console.log" >>"$summary"
sed -n '/^expected scores/,/as expected\|difference/p' "$OUT/grade-console.log" >>"$summary"
grep -E '^\[[0-9]+/[0-9]+\]' "$OUT/grade-console.log" >>"$summary"
# Two graders processes for a submission that passes: its correctness graders, then its speed
# graders (grader/cli/grading/batch.hpp; grade.log's "---- STUDENT LAB GRADERS on GPU N: ..." lines).
procs=$(grep -c '^---- correct lab01 .* on GPU ' "$work/out/grade.log")
note "graders processes of 'correct' for lab01: $procs (2 expected)"
[ "$procs" -eq 2 ] || rc=1
tar -czf "$OUT/grade-out.tgz" -C "$work" --exclude=out/work out
fi

# The exploit corpus: one submission per way of cheating, each must earn nothing on its target.
if [ "${EXPLOITS:-1}" = 1 ]; then
mkdir -p "$work/exploits"
cmake -DROOT="$root" -DOUT="$work/exploits" -DSPEC=exploits -P "$root/grader/cli/tests/make_fixtures.cmake" || exit 1
exploits=("$work"/exploits/*)
t=$SECONDS
"$convlab" grade "${exploits[@]}" --labs lab01,lab03 --out "$work/out-exploits" --jobs $jobs --test-timeout 60 \
  --expect "$root/grader/cli/tests/exploits/expected-gpu.json" 2>&1 | tee "$OUT/exploits-console.log"
erc=${PIPESTATUS[0]}
note "exploits: rc=$erc (0: every exploit earned nothing on its target), ${#exploits[@]} submissions in $((SECONDS - t)) s"
sed -n '/^expected scores/,/as expected\|difference/p' "$OUT/exploits-console.log" >>"$summary"
grep -E "runner sandbox:" "$OUT/exploits-console.log" | head -1 >>"$summary"
[ $erc -eq 0 ] || rc=1
tar -czf "$OUT/exploits-out.tgz" -C "$work" --exclude=out-exploits/work out-exploits
fi

# The cost of grading one submission per lab: the reference's kernels submitted as a student's
# (starter_code/NN-*/ = reference/NN-*/), graded with the same slots and limits as the corpus.
if [ -n "${TIMING_LABS:-}" ]; then
  ref=$work/timing/reference_all
  labs=""
  for n in $TIMING_LABS; do
    src=$(ls -d "$root"/reference/$n-* 2>/dev/null | head -1)
    [ -n "$src" ] || { note "timing: no reference/$n-*"; exit 1; }
    mkdir -p "$ref/starter_code/$(basename "$src")"
    find "$src" -maxdepth 1 -type f -exec cp {} "$ref/starter_code/$(basename "$src")/" \;
    labs="$labs${labs:+,}lab$n"
  done
  t=$SECONDS
  "$convlab" grade "$ref" --labs "$labs" --out "$work/out-timing" --jobs $jobs 2>&1 | tee "$OUT/timing-console.log"
  trc=${PIPESTATUS[0]}
  note "timing: rc=$trc, $((SECONDS - t)) s wall for labs $labs, $jobs build slots; the gradebook:"
  cat "$work/out-timing/gradebook.csv" >>"$summary"
  grep -E "build slot .* ready|\[1/1\]" "$OUT/timing-console.log" | sed 's/  lab/\n  lab/g' >>"$summary"
  grep -E "convlab: (GPU found|CUDA architectures)" "$work/out-timing/grade.log" | sort -u >>"$summary"  # what the slots compile for
  # grade.log's closing table: the seconds by lab and kind (correctness, technique, speed, build)
  awk '/seconds per submission, by lab/{p=1} /outputs:/{p=0} p' "$work/out-timing/grade.log" >>"$summary"
  # Each test's seconds by phase, from the records of every graders process (.ci/phase_seconds.py).
  phase_args=()
  for d in "$work"/out-timing/work/subs/reference_all/lab*/results/batch*; do
    [ -d "$d" ] && phase_args+=("$(basename "$(dirname "$(dirname "$d")")")/$(basename "$d")=$d")
  done
  [ ${#phase_args[@]} -gt 0 ] && python3 "$root/.ci/phase_seconds.py" "${phase_args[@]}" >>"$summary" 2>&1
  for lab in ${labs//,/ }; do  # two graders processes per lab (batch.hpp)
    procs=$(grep -c "^---- reference_all $lab .* on GPU " "$work/out-timing/grade.log")
    note "timing: $lab: $procs graders processes (2 expected)"
    [ "$procs" -eq 2 ] || rc=1
  done
  [ $trc -eq 0 ] || rc=1
fi

if [ "${SANITIZE:-1}" = 1 ]; then
  echo '{ "correct": { "lab01": 100 } }' >"$work/expect-sanitize.json"
  t=$SECONDS
  "$convlab" grade "$work/subs/correct" --labs lab01 --out "$work/out-sanitize" --work-dir "$work/out/work" --jobs 1 \
    --sanitize memcheck --sanitize-exclude '*n16777221*:*w4099*' --expect "$work/expect-sanitize.json" \
    2>&1 | tee "$OUT/sanitize-console.log"
  note "grade under compute-sanitizer memcheck: rc=${PIPESTATUS[0]}, $((SECONDS - t)) s"
  tar -czf "$OUT/sanitize-out.tgz" -C "$work" --exclude=out-sanitize/work out-sanitize
fi
if [ "${CALIBRATE:-0}" = 1 ]; then  # about a minute more: builds the reference graders, times them
  t=$SECONDS
  "$convlab" calibrate --out "$OUT/calibration.json" --build-dir "$root/build/calibrate" 2>&1 | tail -12 | tee -a "$summary"
  note "calibrate: rc=${PIPESTATUS[0]}, $((SECONDS - t)) s"
fi
note "left-over processes of the sandbox user: $(ps -u nobody -o pid= 2>/dev/null | wc -l)"
note "total: $((SECONDS - t_all)) s"
cat "$summary"
exit $rc
