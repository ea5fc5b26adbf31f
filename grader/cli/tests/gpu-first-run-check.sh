#!/usr/bin/env bash
# A student's first hour on a machine with an NVIDIA GPU (issue 14), in one call: a fresh copy of
# the tree (what a clone gives), the README's step 1 (`cmake --workflow --preset default`) timed
# with its last screen of output, then `ctest --preset default -L lab01` timed, then lab 01's
# benchmark with its roofline chart (the reference's kernels: the instructor preset, lab 01 only)
# for a person to open. Outputs in $OUT (default ./gpu-logs/first-run):
#   summary.txt  first-run.log  lab01-ctest.log  bench.log  lab01-roofline.svg
#
#   grader/cli/tests/gpu-first-run-check.sh     (PLOT_LAB=03: another lab's chart)
set -uo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
OUT=${OUT:-$root/gpu-logs/first-run}
mkdir -p "$OUT"
summary=$OUT/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
lab=${PLOT_LAB:-01}

note "== a student's first run, $(date -u +%FT%TZ), $(nproc) cores"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
note "nvcc on the PATH: $(command -v nvcc || echo none); cmake: $(cmake --version | head -1)"

# What a clone holds: the tracked files (git ls-files where .git came along), else the tree
# without build outputs.
fresh=$(mktemp -d /tmp/convlab-fresh-XXXXXX)
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$root" ls-files -z | tar -C "$root" --null -T - -cf - | tar -C "$fresh" -xf -
else
  tar -C "$root" --exclude=./build --exclude=./gpu-logs --exclude=./.debs -cf - . | tar -C "$fresh" -xf -
fi
note "fresh tree: $fresh ($(find "$fresh" -type f | wc -l) files)"

cd "$fresh" || exit 1
t=$SECONDS
cmake --workflow --preset default >"$OUT/first-run.log" 2>&1
rc=$?
note "step 1, cmake --workflow --preset default: exit $rc in $((SECONDS - t)) s (build included; the untouched starter fails)"
note "---- its last screen (40 lines):"
tail -40 "$OUT/first-run.log" >>"$summary"
note "----"

t=$SECONDS
ctest --preset default -L lab01 >"$OUT/lab01-ctest.log" 2>&1
note "ctest --preset default -L lab01: exit $? in $((SECONDS - t)) s; $(grep -E 'tests passed|tests failed' "$OUT/lab01-ctest.log" | tail -1)"

# The roofline chart of a finished lab: the reference's kernels stand for a student's.
t=$SECONDS
{ cmake --preset instructor -D CONVLAB_SELFTEST=OFF &&
  cmake --build --preset instructor --target "lab${lab}_bench" convlab_cli; } >"$OUT/bench.log" 2>&1
note "instructor build of lab${lab}_bench: exit $? in $((SECONDS - t)) s"
t=$SECONDS
build/instructor/grader/cli/convlab bench "lab$lab" --build-dir build/instructor --plot "$OUT/lab$lab-roofline.svg" \
  >>"$OUT/bench.log" 2>&1
note "convlab bench lab$lab --plot: exit $? in $((SECONDS - t)) s; $(ls -l "$OUT/lab$lab-roofline.svg" 2>&1 | awk '{print $5, "bytes"}')"
grep -E "^\| |ceilings" "$OUT/bench.log" | head -30 >>"$summary"
cat "$summary"
