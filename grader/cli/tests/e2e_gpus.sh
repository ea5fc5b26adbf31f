#!/usr/bin/env bash
# `convlab grade --gpus` on a machine described by a stub nvidia-smi (two H100s, GPU 0 and GPU 1):
# a GPU it does not list, a GPU named twice, an empty entry, garbage, one GPU by two names, a GPU
# outside convlab's own CUDA_VISIBLE_DEVICES are refused with exit 2 before anything is written or
# built; the GPUs it lists are recorded in hardware.json with their UUIDs; with --preset cpu no
# GPU is checked. Fast: the runs that pass the checks grade one unreadable tarball, which builds
# nothing. The real two-GPU run is grader/cli/tests/gpu-two-gpus-check.sh.
#   e2e_gpus.sh CONVLAB_EXE SOURCE_DIR WORK_DIR
# With --two-workers, it grades two submissions with --gpus 0,1 instead, in the work folder of an
# earlier grading (its build slot is reused: seconds, not the minutes of building the harness),
# with that grading's options, and checks that each submission ran on one GPU and is recorded so.
#   e2e_gpus.sh CONVLAB_EXE SOURCE_DIR WORK_DIR --two-workers EARLIER_WORK_DIR [GRADE OPTIONS...]
set -uo pipefail
convlab=$1 root=$2 work=$3
two_workers=${4:-}
fail=0
not() { ! "$@"; }
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
rm -rf "$work"
mkdir -p "$work/bin" "$work/subs/alice/starter_code"
chmod 755 "$work"  # the graders may run as another user
unset CUDA_VISIBLE_DEVICES  # each case sets its own
real_smi=$(command -v nvidia-smi || true)  # before the stub shadows it

uuid0=GPU-11111111-2222-3333-4444-555555555555
uuid1=GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee
cat >"$work/bin/nvidia-smi" <<EOF
#!/bin/sh
# A machine with two H100s, as nvidia-smi describes it; every call is written down.
echo "nvidia-smi \$*" >>"$work/smi-calls"
case "\$*" in
  *--query-gpu=index,uuid,name*)
    echo "0, $uuid0, NVIDIA H100 80GB HBM3"
    echo "1, $uuid1, NVIDIA H100 80GB HBM3" ;;
  -L)
    echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: $uuid0)"
    echo "GPU 1: NVIDIA H100 80GB HBM3 (UUID: $uuid1)" ;;
  *) echo "name, driver_version"; echo "NVIDIA H100 80GB HBM3, 580.95.05" ;;
esac
EOF
chmod 755 "$work/bin/nvidia-smi"
export PATH=$work/bin:$PATH
# A submission that would build (lab 01's starter), and one that cannot be read (builds nothing).
cp -r "$root/starter_code/01-conv-basic" "$work/subs/alice/starter_code/"
echo "not a tarball" >"$work/subs/bob.tar.gz"
alice=$work/subs/alice bob=$work/subs/bob.tar.gz

if [ "$two_workers" = --two-workers ]; then
  slots=$5
  shift 5
  # The corpus grading's slot: in its work folder, or in the shared CONVLAB_SLOTS_DIR.
  if [ -n "${CONVLAB_SLOTS_DIR:-}" ]; then built=$(compgen -G "$CONVLAB_SLOTS_DIR/*/0/build"); else built=$(compgen -G "$slots/slots/0/build"); fi
  if [ -z "$built" ]; then  # the corpus grading skips itself on a GPU machine
    echo "SKIPPED: no build slot in ${CONVLAB_SLOTS_DIR:-$slots} (cli.e2e.grade_fixtures leaves one); building one takes minutes"
    exit 77
  fi
  # Two submissions, two GPUs: each is graded on one of them, all its graders on that one.
  mkdir -p "$work/subs/two_gpus_b/starter_code"
  mv "$alice" "$work/subs/two_gpus_a"
  cp -r "$work/subs/two_gpus_a/starter_code" "$work/subs/two_gpus_b/"
  o=$work/out-two-workers
  t=$SECONDS
  "$convlab" --root "$root" grade "$work/subs/two_gpus_a" "$work/subs/two_gpus_b" --labs lab01 --out "$o" \
    --work-dir "$slots" --jobs 1 --gpus 0,1 "$@" >"$work/two-workers.log" 2>&1
  rc=$?
  check "two submissions on --gpus 0,1: graded (exit $rc, $((SECONDS - t)) s)" test $rc -eq 0
  [ $rc -eq 0 ] || tail -30 "$work/two-workers.log"
  graded=$(tr -d ' \n' <"$o/hardware.json" | grep -o '"graded":\[[^]]*\]' | tr '\n' ' ')
  echo "hardware.json, what each GPU graded: $graded"
  for s in two_gpus_a two_gpus_b; do
    gpu=$(sed -n "s/.*\] $s: .*, on GPU \([01]\)\$/\1/p" "$o/grade.log")
    echo "$s ran on GPU ${gpu:-?}"
    check "$s: grade.log says which GPU it ran on" test -n "$gpu"
    check "... every grader of it ran on that GPU" \
      test "$(grep -c "^---- $s lab01 .* on GPU " "$o/grade.log")" -eq "$(grep -c "^---- $s lab01 .* on GPU $gpu: " "$o/grade.log")"
    check "... and it ran some" grep -q "^---- $s lab01 .* on GPU $gpu: " "$o/grade.log"
    check "... hardware.json lists it once, under that GPU" \
      test "$(grep -o "\"$s\"" <<<"$graded" | wc -l)" -eq 1
    nth=$(tr -d ' \n' <"$o/hardware.json" | grep -o '"graded":\[[^]]*\]' | grep -n "\"$s\"" | cut -d: -f1)
    check "... (hardware.json's record of GPU $gpu)" test "${nth:-0}" -eq $((gpu + 1))
  done
  # The closing summary's figure per GPU (issue 29, item 6): one line each, the two submissions
  # shared out between them.
  per_gpu=$(grep -E '^  GPU [01]( \(.*\))?: ' "$o/grade.log")
  echo "$per_gpu"
  check "grade.log: seconds per submission, a line per GPU" test "$(grep -c . <<<"$per_gpu")" -eq 2
  check "... each with its submissions' build and run seconds, or none" \
    test "$(grep -cE ': ([0-9]+ submissions?, [0-9.]+ s each \(build [0-9.]+, run [0-9.]+\)|no submission graded)$' <<<"$per_gpu")" -eq 2
  counted=$(sed -nE 's/.*: ([0-9]+) submissions?, .*/\1/p' <<<"$per_gpu" | awk '{s += $1} END {print s + 0}')
  check "... the two submissions between them (${counted:-0})" test "${counted:-0}" -eq 2
  exit $fail
fi

# refused DESCRIPTION EXPECTED_MESSAGE ENV... -- GRADE_ARGS...: exit 2, the message, nothing written.
refused() {
  local what=$1 message=$2 envs=()
  shift 2
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local out=$work/out-refused rc
  rm -rf "$out"
  msg=$(env "${envs[@]}" "$convlab" --root "$root" grade "$alice" --labs lab01 --out "$out" "$@" 2>&1)
  rc=$?
  check "$what: exit 2 (got $rc)" test $rc -eq 2
  check "... saying: $message" grep -qF -- "$message" <<<"$msg"
  check "... before anything is written or built" test ! -e "$out"
  [ $rc -eq 2 ] || echo "$msg"
}

: >"$work/smi-calls"
refused "--gpus 0,2 on a machine of two GPUs" \
  "convlab: --gpus 2: this machine has 2 GPUs (0: NVIDIA H100 80GB HBM3, 1: NVIDIA H100 80GB HBM3); name a GPU by one of these indices, or by its UUID (nvidia-smi -L)" \
  -- --gpus 0,2
check "... nvidia-smi was asked for its list" grep -q -- "--query-gpu=index,uuid,name --format=csv,noheader" "$work/smi-calls"
refused "--gpus 0,0" "convlab: --gpus 0,0: GPU 0 is named twice; each GPU grades one submission at a time, so name it once" \
  -- --gpus 0,0
refused "--gpus 0,,1" "convlab: --gpus 0,,1: entry 2 is empty (a stray comma?)" -- --gpus 0,,1
refused "--gpus=-1" "convlab: --gpus -1: not a GPU index (0, 1, ... as nvidia-smi numbers the GPUs) or UUID" -- --gpus=-1
refused "--gpus gpu1" "convlab: --gpus gpu1: not a GPU index" -- --gpus gpu1
refused "--gpus ''" "convlab: --gpus is empty" -- --gpus ''
refused "--gpus 1,GPU-aaaa (one GPU by two names)" "convlab: --gpus 1,GPU-aaaa: both are $uuid1" -- --gpus 1,GPU-aaaa
refused "--gpus GPU-bbbb (a UUID no GPU has)" "convlab: --gpus GPU-bbbb: this machine has 2 GPUs (0: $uuid0, 1: $uuid1); no GPU has that UUID" \
  -- --gpus GPU-bbbb
refused "--gpus 0 under CUDA_VISIBLE_DEVICES=1" \
  "convlab: --gpus 0: convlab runs with CUDA_VISIBLE_DEVICES=1, so this run may use only that GPU (--gpus 1)" \
  CUDA_VISIBLE_DEVICES=1 -- --gpus 0
refused "--gpus 0 under CUDA_VISIBLE_DEVICES= (no GPU given)" \
  "convlab: --gpus 0: convlab runs with CUDA_VISIBLE_DEVICES='', which gives this run no GPU" CUDA_VISIBLE_DEVICES= -- --gpus 0

# Accepted: the GPUs, by index and by UUID, recorded. Only the unreadable tarball: nothing is built.
o=$work/out-two
"$convlab" --root "$root" grade "$bob" --labs lab01 --out "$o" --gpus "1,$uuid0" >"$work/two.log" 2>&1
rc=$?
check "--gpus 1,<GPU 0's UUID>: graded (exit $rc)" test $rc -eq 0
[ $rc -eq 0 ] || cat "$work/two.log"
check "... grade.log names the GPUs" grep -q "GPU(s) 1,$uuid0, preset default" "$o/grade.log"
check "... hardware.json: GPU 1, its name, nvidia-smi's index" \
  grep -q "\"label\": \"GPU 1 (NVIDIA H100 80GB HBM3" "$o/hardware.json"
check "... hardware.json: GPU 0 by its UUID, with nvidia-smi's index" \
  grep -q "\"label\": \"GPU $uuid0 (nvidia-smi's 0, NVIDIA H100 80GB HBM3" "$o/hardware.json"
check "... and what each GPU graded (nothing: the tarball could not be read)" \
  test "$(grep -c '"graded": \[\]' "$o/hardware.json")" -eq 2
check "... nothing was built" test ! -e "$o/work/slots"

# No --gpus under CUDA_VISIBLE_DEVICES=1: the run's first GPU.
o=$work/out-visible
CUDA_VISIBLE_DEVICES=1 "$convlab" --root "$root" grade "$bob" --labs lab01 --out "$o" >"$work/visible.log" 2>&1
rc=$?
check "CUDA_VISIBLE_DEVICES=1, no --gpus: graded (exit $rc)" test $rc -eq 0
check "... on GPU 1, the first of CUDA_VISIBLE_DEVICES" \
  grep -q "GPUs: no --gpus: grading on GPU 1, the first of CUDA_VISIBLE_DEVICES=1" "$o/grade.log"
check "... hardware.json: GPU 1" grep -q '"gpu": "1"' "$o/hardware.json"

# No --gpus under CUDA_VISIBLE_DEVICES=NoDevFiles (Slurm's, for a task without a GPU): no GPU.
o=$work/out-nogpu
CUDA_VISIBLE_DEVICES=NoDevFiles "$convlab" --root "$root" grade "$bob" --labs lab01 --out "$o" >"$work/nogpu.log" 2>&1
rc=$?
check "CUDA_VISIBLE_DEVICES=NoDevFiles, no --gpus: graded (exit $rc)" test $rc -eq 0
check "... on no GPU, the log says" \
  grep -q "GPUs: CUDA_VISIBLE_DEVICES='NoDevFiles' gives this run no GPU: the graders see none" "$o/grade.log"
check "... the graders' CUDA_VISIBLE_DEVICES shows none (-1)" grep -q '"gpu": "-1"' "$o/hardware.json"
check "... hardware.json: labelled no GPU" grep -q '"label": "no GPU"' "$o/hardware.json"

# The CPU backend uses no GPU: --gpus only sets how many submissions run at once; nothing is checked.
: >"$work/smi-calls"
o=$work/out-cpu
"$convlab" --root "$root" grade "$bob" --labs lab01 --out "$o" --preset cpu --gpus 0,2 >"$work/cpu.log" 2>&1
rc=$?
check "--preset cpu --gpus 0,2: graded (exit $rc)" test $rc -eq 0
check "... saying the GPUs do not matter" grep -q "GPUs: the graders run on the CPU backend, so no GPU is used or checked; --gpus sets only how many submissions are graded at once (2)" "$o/grade.log"
check "... without asking nvidia-smi for its list of GPUs" not grep -q -- "--query-gpu=index,uuid,name" "$work/smi-calls"
refused "--preset cpu --gpus 0,0 (a repeat is still a repeat)" "GPU 0 is named twice" -- --preset cpu --gpus 0,0

# No nvidia-smi at all (a machine without the driver): the GPUs cannot be checked; the log says so.
if [ -z "$real_smi" ]; then
  o=$work/out-nosmi
  PATH=${PATH#"$work/bin:"} "$convlab" --root "$root" grade "$bob" --labs lab01 --out "$o" --gpus 0,3 >"$work/nosmi.log" 2>&1
  rc=$?
  check "no nvidia-smi, --gpus 0,3: graded as before (exit $rc)" test $rc -eq 0
  check "... the log says the GPUs were not checked" \
    grep -q "GPUs: nvidia-smi is not on PATH, so the GPUs named by --gpus (0,3) were not checked" "$o/grade.log"
else
  echo "skipped: the case without nvidia-smi (this machine has one: $real_smi)"
fi
exit $fail
