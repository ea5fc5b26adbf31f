#!/usr/bin/env bash
# The harness under load (issue 26): the six labs' references, each graded as a student's
# submission on the CPU backend, COPIES times in one `convlab grade`, with a busy loop on every core
# beside it (the load under which a reference once lost points: two gradings on two cores). A reference must lose no point to the
# harness's own processes (a runner still ending under load was once charged to a reference:
# "it left 1 process(es) running"): every grader that ran passes, no grade is flagged as an
# infrastructure error, and every copy's gradebook row is the same.
#   e2e_stress.sh CONVLAB_EXE SOURCE_DIR WORK_DIR [COPIES [PRESET [GRADE_OPTION...]]]
# PRESET: cpu (default; no GPU needed) or default (the GPU graders: .ci/gpu-check's stress stage,
# with `--gpus 0,1,2,3` say). HOGS: busy loops beside the grading (default: one per core, so that
# the machine runs twice what it has cores for; 0 on a GPU, whose speed graders a loaded host would
# rightly slow).
set -uo pipefail
convlab=$1 root=$2 work=$3 copies=${4:-3} preset=${5:-cpu}
shift $(($# < 5 ? $# : 5))
grade_options=("$@")
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
[ -d "$root/reference" ] || { echo "SKIPPED: no reference/ (a student copy)"; exit 77; }
rm -rf "$work"
mkdir -p "$work/subs"
chmod 755 "$work"  # the graders may run as another user: it must reach its folders
export PATH=/usr/local/cuda/bin:$PATH

# The references as submissions: reference/NN-slug/* as starter_code/NN-slug/*.
labs=""
for src in "$root"/reference/[0-9][0-9]-*/; do
  slug=$(basename "$src")
  mkdir -p "$work/subs/reference_1/starter_code/$slug"
  find "$src" -maxdepth 1 -type f -exec cp {} "$work/subs/reference_1/starter_code/$slug/" \;
  labs="$labs${labs:+,}lab${slug%%-*}"
done
for ((k = 2; k <= copies; k++)); do cp -r "$work/subs/reference_1" "$work/subs/reference_$k"; done

cores=$(nproc)
# JOBS build slots (default 1: the copies share one build, which keeps the test's cost that of one
# student build; a GPU machine's check gives it more).
jobs=${JOBS:-1}
# Under /tmp, as `mktemp -d` gives it (the runner sandbox's private /tmp must not hide the runners).
scratch=$(mktemp -d /tmp/convlab-stress-XXXXXX)
chmod 755 "$scratch"
start=$SECONDS
"$convlab" --root "$root" grade "$work"/subs/* --labs "$labs" --preset "$preset" --out "$work/out" --jobs $jobs \
  --work-dir "$scratch/work" "${grade_options[@]}" >"$work/grade.log" 2>&1 &
grading=$!
# The hog: one busy loop per core, from the moment the build slots are ready (the load is on the
# grading, not on setting up the harness's build, which a later run may find made already:
# CONVLAB_SLOTS_DIR) until the grading ends (killed at the end, even on failure).
slots_used=$((jobs < copies ? jobs : copies))  # a builder sets up its slot when it takes its first copy
until [ "$(grep -c 'build slot [0-9]* ready in' "$work/out/grade.log" 2>/dev/null)" -ge "$slots_used" ] ||
      ! kill -0 $grading 2>/dev/null; do
  sleep 1
done
hogs=()
for ((k = 0; k < ${HOGS:-$cores}; k++)); do
  (while :; do :; done) &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
kill -0 $grading 2>/dev/null && beside=1 || beside=0
echo "build slots ready after $((SECONDS - start)) s; ${#hogs[@]} busy loops started"
wait $grading
rc=$?
seconds=$((SECONDS - start))
kill "${hogs[@]}" 2>/dev/null
rm -rf "$scratch"
cat "$work/grade.log"
echo "graded $copies copies of the references ($labs) on preset $preset ${grade_options[*]} with $jobs build slots" \
  "on $cores cores and ${HOGS:-$cores} busy loops beside, in $seconds s"

check "convlab grade exited 0 (exit $rc)" test $rc -eq 0
[ ${#hogs[@]} -eq 0 ] || check "the busy loops ran while the submissions were graded" test $beside -eq 1
o=$work/out
check "a gradebook row per copy" test "$(($(wc -l <"$o/gradebook.csv") - 2))" -eq "$copies"
# Every copy's row the same, the student's name aside.
rows=$(tail -n +3 "$o/gradebook.csv" | cut -d, -f2- | sort -u | wc -l)
check "every copy's gradebook row is the same" test "$rows" -eq 1
# No grader that ran failed; none flagged as the harness's fault.
lost=$(python3 - "$o"/state/*.json <<'EOF'
import json, sys
bad = []
for path in sys.argv[1:]:
    r = json.load(open(path))
    if r.get("failure"):
        bad.append("%s: %s" % (r["student"], r["failure"]))
    for lab in r.get("labs", []):
        if lab.get("failure"):
            bad.append("%s %s: %s" % (r["student"], lab["lab"], lab["failure"]))
        for g in lab.get("graders", []):
            if (g["ran"] and not g["passed"]) or g.get("infrastructure"):
                bad.append("%s %s %s: %s" % (r["student"], lab["lab"], g["id"], g["reason"]))
print("\n".join(bad))
EOF
)
check "no grader that ran lost a point${lost:+: $lost}" test -z "$lost"
check "no grade flagged as an infrastructure error" bash -c "! grep -q 'REGRADE' '$o/gradebook.csv'"
nlabs=$(tr ',' '\n' <<<"$labs" | wc -l)
check "every copy graded on all $nlabs labs" test "$(python3 -c 'import json, sys
print(min(len(json.load(open(p))["labs"]) for p in sys.argv[1:]))' "$o"/state/*.json)" -eq "$nlabs"
check "no process left by the harness in grade.log" bash -c "! grep -q 'left [0-9]* process' '$o/grade.log'"
check "no process of the sandbox user is left" test "$(ps -u nobody -o pid= 2>/dev/null | wc -l)" -eq 0
exit $fail
