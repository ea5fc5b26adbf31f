#!/usr/bin/env bash
# The GPU verification of issue 18 ("a correct kernel that the compiler breaks"), on a machine with
# an NVIDIA GPU (the lead's H100 run; CI has none). Stages, in separate calls if need be (the device
# tool allows 10 minutes a call; each stage keeps what it built under build/compiler-check*):
#
#   build    configure build/compiler-check, build convlab and the three builds of each
#            known case                                                            (~2-3 min)
#   doctor   convlab doctor, compiling the cases itself and with --build-dir: on CUDA 13.0 with an
#            H100 it must flag downward_taps as miscompiled (exit 1), right with -Xptxas -O1  (~1 min)
#   check    convlab check lab01 in a copy of the tree with the downward-loop solution as the
#            student's starter_code/01-conv-basic/conv_basic.cu: the compiler-bug message; then a
#            halo off by one: the student's bug ("NOT THE COMPILER")                 (~5-7 min)
#   grade    convlab grade of downward_loop, halo_off_by_one and correct, policy review (default):
#            100 flagged REVIEW / 50 / 100, the message in the feedback, hardware.json's toolchain
#                                                                                    (~5-7 min)
#   policies the same submissions again with --compiler-bug-policy as-is (50) and full (100, no
#            REVIEW), reusing the grade stage's build slots and recheck builds         (~2-3 min)
#
#   grader/toolchain/gpu-compiler-check.sh                 every stage (~15-20 min: several calls)
#   grader/toolchain/gpu-compiler-check.sh build doctor    one call (~3-4 min)
#   ... check                                              one call
#   ... grade, then ... policies                           one call each
#   CPU=1 ...                                              also the CPU backend's verdict (check:
#                                                          configures build/cpu of the copy; grade:
#                                                          --recheck-cpu), a few minutes more
# With a toolchain that does not miscompile the case (doctor says fit), the expectations change:
# the downward loop then simply passes, and the check says so.
# Logs in $OUT (default ./gpu-logs/compiler), at most 8 files a call: summary.txt build.log
# doctor.log doctor.json check-downward.log check-halo.log grade.log grade-out-<stage>.tgz
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
OUT=${OUT:-$root/gpu-logs/compiler}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=$root/build/compiler-check
work=$root/build/compiler-check-work
convlab=$B/grader/cli/convlab
summary=$OUT/summary.txt
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build doctor check grade policies)
fail=0
note() { echo "$*" | tee -a "$summary"; }
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then note "ok: $1"; else note "FAILED: $1"; fail=1; fi
}
has() { grep -qE -- "$1" "$2"; }  # has REGEX FILE

note "== issue 18 GPU check, $(date -u +%FT%TZ), stages: ${stages[*]}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
nvcc --version | tail -2 | tee -a "$summary"
mkdir -p "$work"

# Is the toolchain expected to miscompile the case? doctor.json (doctor stage) says; else run it.
miscompiles() {
  [ -f "$work/doctor.json" ] || "$convlab" --root "$root" doctor --json "$work/doctor.json" >/dev/null 2>&1
  grep -q '"verdict": "miscompiled"' "$work/doctor.json"
}
fixtures() {  # the corpus's submissions, written from fixtures.json
  [ -d "$work/fixtures/downward_loop" ] ||
    cmake -DROOT="$root" -DOUT="$work/fixtures" -P "$root/grader/cli/tests/make_fixtures.cmake" >>"$OUT/build.log" 2>&1
}

for stage in "${stages[@]}"; do
  t0=$SECONDS
  case $stage in
  build)
    { cmake -S "$root" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCONVLAB_CUDA_ARCH=native -DCONVLAB_IMPL=reference \
        -DCONVLAB_BENCHMARKS=OFF &&
      cmake --build "$B" -j "$(nproc)" --target convlab_cli convlab_case_downward_taps convlab_case_downward_taps_O1 \
        convlab_case_downward_taps_G; } >>"$OUT/build.log" 2>&1
    check "build: convlab and the case programs" test $? -eq 0
    # The case programs as CMake built them: the raw numbers of the reproducer.
    for level in "" _O1 _G; do
      note "convlab_case_downward_taps$level: $("$B/grader/toolchain/convlab_case_downward_taps$level" | grep -E '^(convlab-case|WRONG|right)' | tr '\n' ' ')"
    done
    ;;
  doctor)
    "$convlab" --root "$root" doctor --json "$work/doctor.json" --work "$work/doctor-cache" >"$OUT/doctor.log" 2>&1
    rc=$?
    cp "$work/doctor.json" "$OUT/doctor.json"
    "$convlab" --root "$root" doctor --build-dir "$B" >>"$OUT/doctor.log" 2>&1
    rc_built=$?
    cat "$OUT/doctor.log"
    note "doctor: exit $rc (compiled here), $rc_built (the build's case programs); $(grep -m1 -E '^(UNFIT|fit|no GPU|[0-9]+ of)' "$OUT/doctor.log")"
    if nvcc --version | grep -q 'release 13\.0' && nvidia-smi -L | grep -q 'H100'; then
      check "doctor flags CUDA 13.0 on the H100 as unfit (exit 1)" test $rc -eq 1 -a $rc_built -eq 1
      check "... for downward_taps, miscompiled" has '"verdict": "miscompiled"' "$work/doctor.json"
      check "... right with -Xptxas -O1" has 'Xptxas -O1: right' "$OUT/doctor.log"
      check "... naming the workaround" has 'CONVLAB_DEVICE_OPT=O1' "$OUT/doctor.log"
      check "... with the versions" has 'nvcc.*13\.0' "$OUT/doctor.log"
    else
      note "not CUDA 13.0 on an H100: no expectation on the verdict (exit $rc)"
      check "doctor reached a verdict (exit 0 or 1)" test $rc -le 1
    fi
    ;;
  check)
    fixtures
    tree=$work/tree
    if [ ! -d "$tree" ]; then  # a student's copy of the course (its own build/ folders)
      mkdir -p "$tree"
      tar -C "$root" --exclude=./build --exclude=./gpu-logs -cf - . | tar -C "$tree" -xf -
    fi
    if [ "${CPU:-0}" = 1 ] && [ ! -f "$tree/build/cpu/CMakeCache.txt" ]; then
      (cd "$tree" && cmake --preset cpu >>"$OUT/build.log" 2>&1) || note "CPU backend: cannot configure build/cpu (see build.log)"
    fi
    cp "$work/fixtures/downward_loop/starter_code/01-conv-basic/conv_basic.cu" "$tree/starter_code/01-conv-basic/"
    "$convlab" --root "$tree" check lab01 --preset default >"$OUT/check-downward.log" 2>&1
    rc=$?
    note "check, the downward loop: exit $rc, $(grep -E '^(A COMPILER BUG|NOT THE COMPILER|COULD NOT TELL)' "$OUT/check-downward.log" | tr '\n' ' ')"
    sed -n '/^Looking again/,$p' "$OUT/check-downward.log" | tee -a "$summary"
    if miscompiles; then
      check "check: conv1d fails as built (exit 1)" test $rc -eq 1
      check "check: the compiler-bug message" has '^A COMPILER BUG, IT SEEMS: correctness.conv1d' "$OUT/check-downward.log"
      check "... in plain words" has 'Your kernel computes the right result with less compiler optimisation' "$OUT/check-downward.log"
      check "... every test passes with -Xptxas -O1 on the same seed" has 'with -Xptxas -O1: all [0-9]+ tests passed' "$OUT/check-downward.log"
      check "... the build settings and the known-issues page named" has 'CONVLAB_DEVICE_OPT=O1.*docs/known-issues.md' "$OUT/check-downward.log"
      check "... conv2d is untouched" has 'pass correctness.conv2d' "$OUT/check-downward.log"
      [ "${CPU:-0}" = 1 ] && check "... the CPU backend's verdict beside it" \
        has 'The CPU backend, on the same inputs: all [0-9]+ tests passed' "$OUT/check-downward.log"
    else
      check "check: with this toolchain the downward loop simply passes its correctness graders" \
        has 'pass correctness.conv1d' "$OUT/check-downward.log"
    fi
    cp "$work/fixtures/halo_off_by_one/starter_code/01-conv-basic/conv_basic.cu" "$tree/starter_code/01-conv-basic/"
    "$convlab" --root "$tree" check lab01 --preset default >"$OUT/check-halo.log" 2>&1
    rc=$?
    note "check, a halo off by one: exit $rc, $(grep -E '^(A COMPILER BUG|NOT THE COMPILER|COULD NOT TELL)' "$OUT/check-halo.log" | tr '\n' ' ')"
    check "check: the halo bug fails (exit 1)" test $rc -eq 1
    check "... and stays the student's" has '^NOT THE COMPILER: correctness.conv1d' "$OUT/check-halo.log"
    check "... failing at -Xptxas -O1 and -G too" has 'the fault is in the kernel, not the compiler' "$OUT/check-halo.log"
    check "... never called a compiler bug" bash -c "! grep -q 'COMPILER BUG' '$OUT/check-halo.log'"
    ;;
  grade | policies)
    fixtures
    # The graders run as another user when this runs as root: their folders go where it can reach
    # them. Not under /tmp: the runner sandbox mounts a private /tmp over it, hiding the runners.
    # The grade stage starts it afresh; the policies stage reuses its build slots and rechecks.
    gwork=/var/tmp/convlab-compiler-grade
    if [ $stage = grade ] || [ ! -d "$gwork/work" ]; then
      rm -rf "$gwork" && mkdir -p "$gwork"
      chmod 755 "$gwork"
      cp -r "$work/fixtures/downward_loop" "$work/fixtures/halo_off_by_one" "$work/fixtures/correct" "$gwork/"
    fi
    subs=("$gwork/downward_loop" "$gwork/halo_off_by_one" "$gwork/correct")
    policies=(review); [ $stage = policies ] && policies=(as-is full)
    if miscompiles; then
      review='"downward_loop": {"lab01": 100, "reason": "compiler-bug policy '"'"'review'"'"'"}'
      asis='"downward_loop": {"lab01": 50, "reason": "scored as measured"}'
      full='"downward_loop": {"lab01": 100, "reason": "compiler-bug policy '"'"'full'"'"'"}'
    else
      review='"downward_loop": {"lab01": 100}' asis=$review full=$review
    fi
    rest='"halo_off_by_one": {"lab01": 50, "reason": "the fault is in the kernel, not the compiler"}, "correct": {"lab01": 100}'
    cpu_flag=(); [ "${CPU:-0}" = 1 ] && cpu_flag=(--recheck-cpu)
    for policy in "${policies[@]}"; do
      case $policy in review) want=$review ;; as-is) want=$asis ;; full) want=$full ;; esac
      echo "{ $want, $rest }" >"$gwork/expect-$policy.json"
      o=$gwork/grade-$policy
      rm -rf "$o"
      policy_flag=(); [ $policy != review ] && policy_flag=(--compiler-bug-policy "$policy")  # review: the default
      t=$SECONDS
      "$convlab" --root "$root" grade "${subs[@]}" --labs lab01 --out "$o" --work-dir "$gwork/work" --jobs 2 \
        --test-timeout 60 --expect "$gwork/expect-$policy.json" "${policy_flag[@]}" "${cpu_flag[@]}" >>"$OUT/grade.log" 2>&1
      rc=$?
      note "grade, policy $policy: exit $rc in $((SECONDS - t)) s; gradebook:"
      tee -a "$summary" <"$o/gradebook.csv"
      check "grade ($policy): every score as expected" test $rc -eq 0
      if miscompiles; then
        check "grade ($policy): the feedback tells the student" \
          has 'Your kernel computes the right result with less compiler optimisation' "$o/feedback/downward_loop.md"
        check "grade ($policy): the gradebook records it" has '^downward_loop,.*compiler bug\? passes with -Xptxas -O1' "$o/gradebook.csv"
        if [ $policy = review ]; then
          check "grade (review): flagged REVIEW" has '^downward_loop,100,100,.*REVIEW' "$o/gradebook.csv"
          check "grade (review): speed timed with the build that computes right" has 'timed with the kernels built with -Xptxas -O1' "$o/feedback/downward_loop.md"
          check "hardware.json: the toolchain is unfit" has '"status": "unfit"' "$o/hardware.json"
          check "grade.log: the recheck" has 'recheck of lab01 correctness.conv1d .*passes with -Xptxas -O1' "$o/grade.log"
          [ "${CPU:-0}" = 1 ] && check "grade (review): the CPU backend's verdict" has 'The CPU backend, on the same inputs' "$o/feedback/downward_loop.md"
        fi
        [ $policy = full ] && check "grade (full): no REVIEW" bash -c "! grep -q REVIEW '$o/gradebook.csv'"
      fi
      check "grade ($policy): the halo bug stays the student's" has 'the fault is in the kernel, not the compiler' "$o/feedback/halo_off_by_one.md"
      check "grade ($policy): ... and is not flagged" bash -c "! grep -q '^halo_off_by_one,.*compiler bug' '$o/gradebook.csv'"
    done
    (cd "$gwork" && tar -czf "$OUT/grade-out-$stage.tgz" $(ls -d grade-review grade-as-is grade-full 2>/dev/null))
    ;;
  *)
    note "unknown stage '$stage' (build, doctor, check, grade, policies)"
    fail=1
    ;;
  esac
  note "stage $stage: $((SECONDS - t0)) s"
done
note "== $([ $fail -eq 0 ] && echo 'every check passed' || echo 'SOME CHECKS FAILED')"
exit $fail
