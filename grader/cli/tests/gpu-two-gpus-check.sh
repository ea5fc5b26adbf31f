#!/usr/bin/env bash
# The two-GPU verification of `convlab grade --gpus` (issue 17), on a machine with at least two
# NVIDIA GPUs (nvidia-h200-x2; CI has none). Stages, in separate calls if need be (the device tool
# allows 10 minutes a call; each stage keeps what it built under build/two-gpus*):
#
#   build      configure build/two-gpus, build convlab                (17 s on two H200s' host)
#   checks     on the real GPUs, with an unreadable tarball (nothing built, seconds): --gpus 0,2 on
#              two GPUs and --gpus 0 under CUDA_VISIBLE_DEVICES=1 refused (exit 2); no --gpus under
#              CUDA_VISIBLE_DEVICES=1 grades on GPU 1; --gpus 0,1 and --gpus by UUID: each GPU's
#              record names it, and the graders' environment shows exactly it        (17 s)
#   warm       the build slots and the compiler-bug recheck trees of both GPUs, so that the timed
#              gradings below build nothing but the submissions                        (134 s)
#   one        the fixture corpus (as gpu-grade-check.sh writes it) on --gpus 0, timed, scores
#              against fixtures/expected-gpu.json                                        (266 s)
#   two        the same corpus on --gpus 0,1, timed: the same gradebook as `one`, each submission on
#              one GPU and recorded so, both GPUs used, the wall time near half of `one`'s (149 s)
#   calibrate  convlab calibrate on each GPU (by UUID; LABS, default lab02,...,lab06: lab01's
#              reference is the naive baseline, its speed-ups are 1): the reference's 18
#              speed-ups on the two GPUs agree within the calibration margin (0.75)     (233 s)
#
#   grader/cli/tests/gpu-two-gpus-check.sh build checks warm      one call
#   grader/cli/tests/gpu-two-gpus-check.sh one                    one call
#   grader/cli/tests/gpu-two-gpus-check.sh two calibrate          one call
# Logs in $OUT (default ./gpu-logs/two-gpus), at most 8 files: summary.txt build.log checks.log
# warm.log one.log two.log calibrate.log two-out.tgz
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
root=$PWD
OUT=${OUT:-$root/gpu-logs/two-gpus}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
unset CUDA_VISIBLE_DEVICES  # each step names its GPUs
B=$root/build/two-gpus
work=$root/build/two-gpus-work
convlab=${CONVLAB:-$B/grader/cli/convlab}  # CONVLAB: another build of it
summary=$OUT/summary.txt
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build checks warm one two calibrate)
fail=0
note() { echo "$*" | tee -a "$summary"; }
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then note "ok: $1"; else note "FAILED: $1"; fail=1; fi
}
has() { grep -qE -- "$1" "$2"; }  # has REGEX FILE
not_has() { ! grep -qE -- "$1" "$2"; }
jobs=2  # two build slots keep two GPUs busy: a submission builds in seconds and runs for longer

note "== issue 17: convlab grade on two GPUs, $(date -u +%FT%TZ), stages: ${stages[*]}"
nvidia-smi --query-gpu=index,uuid,name,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
ngpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
if [ "$ngpus" -lt 2 ]; then
  note "FAILED: this check needs two GPUs; nvidia-smi lists $ngpus"
  exit 1
fi
uuid0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
uuid1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1)
mkdir -p "$work"

. "$root/grader/cli/tests/corpus.sh"  # write_corpus
corpus() {  # the fixture corpus as gpu-grade-check.sh grades it (the names of expected-gpu.json)
  [ -d "$work/subs/correct_git" ] && return
  rm -rf "$work/subs"
  write_corpus "$work/subs" "$root" 5 >>"$OUT/build.log" 2>&1
}
# The line of grade.log for each submission ends with the GPU it ran on: "..., on GPU 1".
ran_on() { sed -n "s/.*\] $1: .*, on GPU \([^ ]*\)\$/\1/p" "$2"; }

for stage in "${stages[@]}"; do
  t0=$SECONDS
  case $stage in
  build)
    { cmake -S "$root" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCONVLAB_CUDA_ARCH=native -DCONVLAB_IMPL=reference \
        -DCONVLAB_BENCHMARKS=OFF && cmake --build "$B" -j "$(nproc)" --target convlab_cli; } >>"$OUT/build.log" 2>&1
    check "build: convlab" test $? -eq 0
    ;;
  checks)
    bad=$work/unreadable.tar.gz
    echo "not a tarball" >"$bad"
    log=$OUT/checks.log
    : >"$log"
    grade_bad() {  # grade_bad OUT_NAME [ENV...] -- ARGS...: the unreadable tarball, nothing built
      local o=$work/checks/$1 envs=()
      shift
      while [ "$1" != "--" ]; do envs+=("$1"); shift; done
      shift
      rm -rf "$o"
      echo "== ${envs[*]} convlab grade --out $o $*" >>"$log"
      env "${envs[@]}" "$convlab" --root "$root" grade "$bad" --labs lab01 --out "$o" "$@" >>"$log" 2>&1
    }
    grade_bad past_the_end -- --gpus 0,2
    rc=$?
    check "--gpus 0,2 on two GPUs: refused (exit $rc)" test $rc -eq 2
    check "... naming the machine's GPUs" has "convlab: --gpus 2: this machine has $ngpus GPUs \(0: " "$log"
    grade_bad outside CUDA_VISIBLE_DEVICES=1 -- --gpus 0
    rc=$?
    check "--gpus 0 under CUDA_VISIBLE_DEVICES=1: refused (exit $rc)" test $rc -eq 2
    grade_bad visible CUDA_VISIBLE_DEVICES=1 --
    rc=$?
    check "no --gpus under CUDA_VISIBLE_DEVICES=1: graded (exit $rc)" test $rc -eq 0
    check "... on GPU 1, by its UUID in hardware.json" grep -q "\"uuid\": \"$uuid1\"" "$work/checks/visible/hardware.json"
    grade_bad both -- --gpus 0,1
    rc=$?
    h=$work/checks/both/hardware.json
    check "--gpus 0,1: graded (exit $rc)" test $rc -eq 0
    check "... hardware.json names GPU 0 by UUID" grep -q "\"uuid\": \"$uuid0\"" "$h"
    check "... and GPU 1" grep -q "\"uuid\": \"$uuid1\"" "$h"
    check "... each GPU's graders saw exactly one GPU (the driver's list in the probe)" \
      test "$(tr -d ' \n' <"$h" | grep -o '"cuda_devices":\[{[^]]*}\]' | grep -vc '},{')" -eq 2
    check "... and no warning about the GPUs" not_has "^.{0,30}warning: GPU" "$work/checks/both/grade.log"
    grade_bad by_uuid -- --gpus "$uuid1,0"
    rc=$?
    check "--gpus <GPU 1's UUID>,0: graded (exit $rc)" test $rc -eq 0
    check "... hardware.json: its label says it is nvidia-smi's 1" \
      grep -q "\"label\": \"GPU $uuid1 (nvidia-smi's 1, " "$work/checks/by_uuid/hardware.json"
    grade_bad twice -- --gpus "0,$uuid0"
    rc=$?
    check "--gpus 0,<GPU 0's UUID>: refused, one GPU by two names (exit $rc)" test $rc -eq 2
    grep -E '^(convlab: |GPUs:|hardware:|GPU |warning: )' "$log" | head -20 >>"$summary"
    ;;
  warm)
    # Build slots and the recheck trees (WORK/recheck/gpu<N>) are built once and reused by later
    # runs with the same --work-dir: build them for both GPUs before anything is timed.
    corpus
    mkdir -p "$work/warm"
    for k in $(seq 1 $jobs); do rm -rf "$work/warm/compile_error_$k"; cp -r "$work/subs/compile_error" "$work/warm/compile_error_$k"; done
    for f in downward_loop halo_off_by_one; do rm -rf "$work/warm/$f"; cp -r "$work/subs/$f" "$work/warm/$f"; done
    : >"$OUT/warm.log"
    for gpu in 0 1; do
      subs=("$work/warm/downward_loop" "$work/warm/halo_off_by_one")
      [ $gpu = 0 ] && subs+=("$work"/warm/compile_error_*)
      "$convlab" --root "$root" grade "${subs[@]}" --labs lab01 --out "$work/out-warm$gpu" --work-dir "$work/grading" \
        --jobs $jobs --gpus $gpu --test-timeout 30 --force >>"$OUT/warm.log" 2>&1
      rc=$?
      check "warm: build slots and GPU $gpu's recheck trees (exit $rc, $((SECONDS - t0)) s so far)" test $rc -eq 0
    done
    grep -E '^\[[0-9]+/[0-9]+\]|^build slot' "$OUT/warm.log" >>"$summary"
    ;;
  one | two)
    corpus
    [ -d "$work/grading/slots/0/build" ] || note "warning: no warm stage ran: the time below includes building the harness"
    gpus=0
    [ $stage = two ] && gpus=0,1
    subs=("$work"/subs/*)
    t=$SECONDS
    "$convlab" --root "$root" grade "${subs[@]}" --labs lab01 --out "$work/out-$stage" --work-dir "$work/grading" \
      --jobs $jobs --gpus $gpus --test-timeout 30 --force --expect "$root/grader/cli/tests/fixtures/expected-gpu.json" \
      >"$OUT/$stage.log" 2>&1
    rc=$?
    wall=$((SECONDS - t))
    echo "$wall" >"$work/wall-$stage"
    o=$work/out-$stage
    check "$stage (--gpus $gpus): ${#subs[@]} submissions in $wall s wall, every score as expected (exit $rc)" test $rc -eq 0
    grep -E '^\[[0-9]+/[0-9]+\]' "$OUT/$stage.log" >>"$summary"
    sed -n '/^expected scores/,/as expected\|difference/p' "$OUT/$stage.log" >>"$summary"
    if [ $stage = two ]; then
      if [ -f "$work/out-one/gradebook.csv" ]; then
        check "two: the gradebook equals one GPU's, score for score" cmp "$work/out-one/gradebook.csv" "$o/gradebook.csv"
        diff "$work/out-one/gradebook.csv" "$o/gradebook.csv" >>"$summary"
      else
        note "FAILED: no gradebook of the one-GPU run to compare with (run the stage one first)"
        fail=1
      fi
      n0=0 n1=0 odd=0
      for s in "${subs[@]}"; do
        name=$(basename "$s")
        name=${name%.tar.gz}
        [ "$name" = corrupt_tarball ] && continue  # unreadable: graded on no GPU
        g=$(ran_on "$name" "$o/grade.log")
        case $g in
        0) n0=$((n0 + 1)) ;;
        1) n1=$((n1 + 1)) ;;
        *) odd=$((odd + 1)); note "no GPU named for $name" ;;
        esac
        # Every grader process of the submission ran on that GPU, and hardware.json lists it there.
        if [ -n "$g" ] && [ "$(grep -c "^---- $name lab01 .* on GPU " "$o/grade.log")" -ne \
          "$(grep -c "^---- $name lab01 .* on GPU $g: " "$o/grade.log")" ]; then
          odd=$((odd + 1))
          note "$name: graders on more than one GPU"
        fi
        if [ -n "$g" ] && ! tr -d ' \n' <"$o/hardware.json" | grep -o '"graded":\[[^]]*\]' | sed -n "$((g + 1))p" |
          grep -q "\"$name\""; then
          odd=$((odd + 1))
          note "$name: not under GPU $g in hardware.json"
        fi
      done
      note "submissions graded on GPU 0: $n0, on GPU 1: $n1"
      check "two: each submission on one GPU, its graders there, hardware.json says so" test $odd -eq 0
      check "two: both GPUs graded" test $n0 -gt 0 -a $n1 -gt 0
      check "two: hardware.json names the two GPUs by UUID" \
        grep -q "\"label\": \"GPU 0 (.*$uuid0)\"" "$o/hardware.json"
      check "... GPU 1 too" grep -q "\"label\": \"GPU 1 (.*$uuid1)\"" "$o/hardware.json"
      if [ -f "$work/wall-one" ]; then
        one=$(cat "$work/wall-one")
        note "wall time: one GPU $one s, two GPUs $wall s ($(awk "BEGIN{printf \"%.2f\", $wall/$one}") of one GPU's; half is 0.50)"
        check "two: the wall time falls to at most 0.65 of one GPU's" awk "BEGIN{exit !($wall <= 0.65 * $one)}"
      fi
      tar -czf "$OUT/two-out.tgz" -C "$work" --exclude=out-two/work out-two out-one 2>/dev/null
    fi
    ;;
  calibrate)
    : >"$OUT/calibrate.log"
    for k in 0 1; do
      uuid=$uuid0
      [ $k = 1 ] && uuid=$uuid1
      CUDA_VISIBLE_DEVICES=$uuid "$convlab" --root "$root" calibrate --out "$work/calibration-gpu$k.json" \
        --build-dir "$work/calibrate-build" --labs "${LABS:-lab02,lab03,lab04,lab05,lab06}" >>"$OUT/calibrate.log" 2>&1
      check "calibrate on GPU $k ($uuid) (exit $?)" test -s "$work/calibration-gpu$k.json"
    done
    grep -E '^(lab[0-9]+ |thresholds)' "$OUT/calibrate.log" >>"$summary"
    # The reference's speed-ups, grader by grader (the files list them in the same order):
    # each GPU's within the margin the thresholds leave (0.75) of the other's.
    paste <(grep -o '"reference_ratio": [0-9.e+-]*' "$work/calibration-gpu0.json" | cut -d' ' -f2) \
      <(grep -o '"reference_ratio": [0-9.e+-]*' "$work/calibration-gpu1.json" | cut -d' ' -f2) >"$work/ratios"
    note "reference speed-ups, GPU 0 / GPU 1: $(tr '\t\n' '/ ' <"$work/ratios")"
    check "calibrate: as many speed-ups on each GPU, at least one" \
      test "$(grep -c '"reference_ratio"' "$work/calibration-gpu0.json")" -eq \
      "$(grep -c '"reference_ratio"' "$work/calibration-gpu1.json")" -a "$(wc -l <"$work/ratios")" -gt 0
    check "calibrate: the two GPUs agree within the calibration margin (each ratio within 0.75 of the other)" \
      awk '{ if ($1 < 0.75 * $2 || $2 < 0.75 * $1) bad = 1 } END { exit bad }' "$work/ratios"
    ;;
  *)
    note "unknown stage $stage (build checks warm one two calibrate)"
    fail=1
    ;;
  esac
  note "stage $stage: $((SECONDS - t0)) s"
done
note "left-over processes of the sandbox user: $(ps -u nobody -o pid= 2>/dev/null | wc -l)"
exit $fail
