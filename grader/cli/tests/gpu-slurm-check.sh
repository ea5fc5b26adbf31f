#!/usr/bin/env bash
# `convlab grade --slurm` with the GPU as a Slurm gres, on a GPU machine that has no Slurm and no
# network (the lead's H100: Ubuntu 24.04). Debian's Slurm and munge packages, carried in
# .slurm-debs/, are unpacked with `dpkg -x` into a prefix (a carried library is unpacked only if
# the machine lacks it); a one-node cluster is started from them with the GPU as a gres
# (GresTypes=gpu, Gres=gpu:N, gres.conf File=/dev/nvidiaN; slurm_cluster.sh); the fixture corpus
# is graded through --slurm in two array tasks of one GPU each (they take turns on a one-GPU
# machine) and compared with fixtures/expected-gpu.json, and row by row with the local gradebook
# of grader/cli/gpu-grade-check.sh when that ran first (its $OUT/../grade/grade-out.tgz). The
# collector is then run again against a calibration said to come from another GPU model: every
# submission graded on this GPU must be flagged. There is no accounting database here, so the
# squeue path of --slurm (no sacct) is the one exercised; CI tests the sacct path (cli.e2e.slurm).
#
# The packages (about 6 MB), downloaded on a Debian 12 (bookworm) machine, e.g. where the lead
# works, into .slurm-debs/ at the top of the tree, then carried (`carry: [".slurm-debs"]`):
#
#   mkdir -p .slurm-debs && (cd .slurm-debs && apt-get download slurmctld slurmd slurm-client \
#     slurm-wlm-basic-plugins munge libmunge2 libhwloc15 libjson-c5 liblua5.1-0 liblz4-1 libnuma1 \
#     libyaml-0-2 libaudit1 libcap-ng0 libpam0g libudev1 libdbus-1-3 libreadline8 libgcrypt20 \
#     libgpg-error0 libbz2-1.0 liblzma5 libzstd1 libpcre2-8-0 libselinux1 libsystemd0)
#
# (Slurm's packages and the libraries they link, from `apt-cache depends --recurse`, less libc6,
# libgcc-s1 and libstdc++6, which must stay the machine's own.)
#
#   grader/cli/tests/gpu-slurm-check.sh      as root; about 7 minutes on an H100 with convlab built
#   DEBS=DIR      the packages (default .slurm-debs)
#   NO_GPU=1      no gres, --no-gpu, expected-cpu.json: the same path on a machine without a GPU
#   UNPACK_ALL=1  unpack every carried library, even those the machine has (to test the carried ones)
#   CONVLAB=PATH  a convlab already built (else it is built in build/grade-check)
#   KEEP=1        keep the scratch folder (/tmp/convlab-slurm-*: corpus, build slots, cluster)
# Outputs in $OUT (default ./gpu-logs/slurm), at most 6 files:
#   summary.txt  build.log  slurm-console.log  slurm-out.tgz  cluster-logs.tgz
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
root=$PWD
OUT=${OUT:-$root/gpu-logs/slurm}
DEBS=${DEBS:-$root/.slurm-debs}
NO_GPU=${NO_GPU:-0}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
summary=$OUT/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then note "ok: $1"; else note "FAILED: $1"; fail=1; fi
}
t_all=$SECONDS

note "== convlab grade --slurm with the GPU as a gres, $(date -u +%FT%TZ)"
[ "$(id -u)" = 0 ] || { note "FAILED: needs root (munged and slurmd run as root)"; exit 1; }
if [ "$NO_GPU" = 1 ]; then
  expected=$root/grader/cli/tests/fixtures/expected-cpu.json
else
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv 2>&1 | tee -a "$summary"
  expected=$root/grader/cli/tests/fixtures/expected-gpu.json
fi
ls "$DEBS"/*.deb >/dev/null 2>&1 ||
  { note "FAILED: no Debian packages in $DEBS (the download command is in this script's header)"; exit 1; }

work=$(mktemp -d /tmp/convlab-slurm-XXXXXX)
chmod 755 "$work"  # the graders may run as another user

# Unpack: Slurm and munge always; a library only if the machine has none of its sonames.
prefix=$work/prefix
mkdir -p "$prefix"
unpacked=() kept=()
for deb in "$DEBS"/*.deb; do
  pkg=$(dpkg-deb -f "$deb" Package)
  case $pkg in
    libc6 | libgcc-s1 | libstdc++6) kept+=("$pkg"); continue ;;  # never a second C or C++ runtime
    lib*)
      if [ "${UNPACK_ALL:-0}" != 1 ]; then
        have=1
        for so in $(dpkg-deb -c "$deb" | grep -o '[^/]*\.so\.[0-9][0-9.]*$' | sort -u); do
          ldconfig -p | grep -qE "^[[:space:]]+$so " || have=0
        done
        [ $have = 1 ] && { kept+=("$pkg"); continue; }
      fi ;;
  esac
  dpkg -x "$deb" "$prefix" || { note "FAILED: dpkg -x $deb"; exit 1; }
  unpacked+=("$pkg")
done
note "unpacked into $prefix: ${unpacked[*]}"
note "the machine's own: ${kept[*]:-none}"
export SLURM_PREFIX=$prefix

# convlab, built as gpu-grade-check.sh builds it (incremental if that ran first), or $CONVLAB.
if [ -n "${CONVLAB:-}" ]; then
  convlab=$(realpath "$CONVLAB")
else
  B=$root/build/grade-check
  t=$SECONDS
  { cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCONVLAB_CUDA_ARCH=native -DCONVLAB_IMPL=reference \
      -DCONVLAB_BENCHMARKS=OFF && cmake --build "$B" --target convlab_cli; } >"$OUT/build.log" 2>&1
  rc=$?
  note "build of convlab: rc=$rc, $((SECONDS - t)) s"
  [ $rc -eq 0 ] || { tail -30 "$OUT/build.log"; exit 1; }
  convlab=$B/grader/cli/convlab
fi

# shellcheck source=slurm_cluster.sh
source "$root/grader/cli/tests/slurm_cluster.sh"
finish() {
  slurm_cluster_stop
  tar -czf "$OUT/cluster-logs.tgz" -C "$work/cluster" log etc 2>/dev/null
  [ "${KEEP:-0}" = 1 ] || rm -rf "$work"  # the outputs are in $OUT; KEEP=1 keeps the build slots too
}
trap finish EXIT
t=$SECONDS
gres=--gpus
[ "$NO_GPU" = 1 ] && gres=""
slurm_cluster_start "$work/cluster" $gres >"$work/cluster-start.log" 2>&1  # not in a pipe: it exports SLURM_CONF
rc=$?
tee -a "$summary" <"$work/cluster-start.log"
[ $rc = 0 ] || exit 1
note "cluster up in $((SECONDS - t)) s"

# The corpus, as gpu-grade-check.sh writes it (without its four extra copies of 'correct').
. "$root/grader/cli/tests/corpus.sh"
write_corpus "$work/subs" "$root" || exit 1
subs=("$work"/subs/*)
# expected-gpu.json also holds those four copies (correct_run2 ... 5): they are not graded here.
corpus_expectations "$expected" 1 "$work/expected.json" || exit 1
expected_name=$(basename "$expected")  # the file the expectations came from, for the summary
expected=$work/expected.json

o=$work/out
cpus=$(($(nproc) / 2))
gpu_opts=()
[ "$NO_GPU" = 1 ] && gpu_opts=(--no-gpu --cuda-arch 90)  # no GPU to build for natively
t=$SECONDS
"$convlab" grade "${subs[@]}" --labs lab01 --test-timeout 30 --out "$o" --slurm "${gpu_opts[@]}" --per-task 8 \
  --cpus-per-task "$cpus" --time 30 --expect "$expected" 2>&1 | tee "$OUT/slurm-console.log"
rc=${PIPESTATUS[0]}
check "submitted (exit $rc)" test "$rc" -eq 0
collector=$(sed -n 's/.* and collector job \([0-9]*\) .*/\1/p' "$OUT/slurm-console.log")
if [ -n "$collector" ]; then
  until [ -z "$(squeue -h -j "$collector" 2>/dev/null)" ] || [ $((SECONDS - t)) -gt 1500 ]; do sleep 5; done
fi
wall=$((SECONDS - t))
note "graded through Slurm: ${#subs[@]} submissions in $wall s wall (2 array tasks$([ "$NO_GPU" = 1 ] || echo " taking turns on the GPU"), then the collector)"
cat "$o"/slurm/logs/collect-*.out >>"$OUT/slurm-console.log" 2>/dev/null
sed -n '/^tasks (Slurm states/,/^  1 /p' "$o/grade.log" >>"$summary"
check "the collector merged every submission" test -s "$o/gradebook.csv"
check "every score as expected ($expected_name)" grep -q "^every score as expected" "$o/grade.log"
sed -n '/^expected scores/,/as expected\|difference/p' "$o/grade.log" >>"$summary"
check "squeue told the task states (no accounting here)" grep -q "Slurm states from squeue" "$o/grade.log"
if [ "$NO_GPU" != 1 ]; then
  check "each task ran with the GPU Slurm gave it (CUDA_VISIBLE_DEVICES)" \
    test "$(grep -c '"cuda_visible_devices": "[0-9]' "$o/hardware.json")" -ge 2
  check "hardware.json: the GPU, its driver, clocks and copy bandwidth per task" \
    test "$(grep -c '"copy_bandwidth_gbs"' "$o/hardware.json")" -ge 2
  grep -m1 -A3 '"gpu_models"' "$o/hardware.json" >>"$summary"
  note "flagged for their GPU model: $(grep -c '"graded_on"' "$o/hardware.json") (the thresholds' GPU: $(grep -m1 '"calibrated_on"' "$o/hardware.json"))"
fi

# The same run merged again against a calibration from another GPU model: every
# submission graded on this GPU is flagged, in its feedback and in hardware.json.
if [ "$NO_GPU" != 1 ] && [ -s "$o/gradebook.csv" ]; then
  f=$work/out-flag
  mkdir -p "$f"
  cp -r "$o/slurm" "$o/tasks" "$f/"
  sed -i -e "s|\"out\": \"$o\"|\"out\": \"$f\"|" \
    -e 's|"calibrated_on": "[^"]*"|"calibrated_on": "NVIDIA A100-SXM4-80GB"|' -e 's|"expect": "[^"]*"|"expect": ""|' \
    "$f/slurm/manifest.json"
  "$convlab" slurm-collect "$f" >"$work/flag.log" 2>&1
  rc=$?
  flagged=$(grep -c '"graded_on"' "$f/hardware.json")
  check "another calibration GPU: the collector still merges (exit $rc)" test -s "$f/gradebook.csv"
  check "... the gradebook is unchanged" cmp -s "$o/gradebook.csv" "$f/gradebook.csv"
  # Flagged: the submissions whose speed graders ran (8 to 10 of the corpus), not those that never got that far.
  check "... the submissions whose speed was measured are flagged ($flagged)" test "$flagged" -ge 8
  check "... with a note in the feedback" grep -q "^- Note: graded on an .*calibrated on an NVIDIA A100-SXM4-80GB" "$f/feedback/correct.md"
  check "... but not where no speed was measured" bash -c '! grep -q "^- Note: graded on an" "$1"' _ "$f/feedback/compile_error.md"
  check "... nor with the matching calibration (the first merge)" bash -c '! grep -q "^- Note: graded on an" "$1"' _ "$o/feedback/correct.md"
fi

# The local grading of the same corpus (gpu-grade-check.sh), where it ran first: row by row.
local_out=$OUT/../grade/grade-out.tgz
if [ -s "$local_out" ] && [ "$NO_GPU" != 1 ]; then
  mkdir -p "$work/local"
  tar -xzf "$local_out" -C "$work/local" out/gradebook.csv
  rows=0 same=0
  while IFS= read -r line; do
    name=${line%%,*}
    [ "$name" = student ] || [ "$name" = "Points Possible" ] && continue
    local_row=$(grep "^$name," "$work/local/out/gradebook.csv") || continue
    rows=$((rows + 1))
    if [ "$local_row" = "$line" ]; then same=$((same + 1)); else note "DIFFERENT: slurm '$line', local '$local_row'"; fi
  done <"$o/gradebook.csv"
  check "the Slurm gradebook equals the local one ($same of $rows rows)" test "$rows" -gt 0 -a "$same" -eq "$rows"
  note "local grading (gpu-grade-check.sh): $(grep -h '^grade: rc=' "$OUT/../grade/summary.txt" 2>/dev/null)"
else
  note "no local gradebook to compare with (run grader/cli/gpu-grade-check.sh first; its expected scores are the same)"
fi
check "no process of the sandbox user is left" test "$(ps -u nobody -o args= 2>/dev/null | grep -cF "$work/")" -eq 0
tar -czf "$OUT/slurm-out.tgz" -C "$work" --exclude='out/tasks/*/work' --exclude='out-flag/tasks/*/work' out out-flag 2>/dev/null
note "total: $((SECONDS - t_all)) s"
tail -40 "$summary"
exit $fail
