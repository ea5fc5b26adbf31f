# The fixture corpus as the grading tests write it out (sourced by e2e_grade.sh and the GPU
# scripts gpu-grade-check.sh, gpu-slurm-check.sh and gpu-two-gpus-check.sh):
#   write_corpus DEST ROOT [RUNS]
# DEST/<name> for every edit of fixtures/fixtures.json (make_fixtures.cmake), then the same
# correct submission as a tarball and as a git repository, one that #includes the instructor's
# solution by its absolute path, a corrupt tarball, and RUNS - 1 more copies of `correct`
# (correct_run2, ...; default: none). Returns non-zero if the corpus could not be written.
#   corpus_expectations SRC RUNS DEST
# SRC's expected scores (fixtures/expected-*.json, which list correct_run2 ... correct_run5) less
# the copies of `correct` that a corpus of RUNS runs does not hold, written to DEST.
write_corpus() {
  local dest=$1 root=$2 runs=${3:-1} k
  mkdir -p "$dest" || return 1
  "${CMAKE:-cmake}" -DROOT="$root" -DOUT="$dest" -P "$root/grader/cli/tests/make_fixtures.cmake" || return 1
  for ((k = 2; k <= runs; k++)); do cp -r "$dest/correct" "$dest/correct_run$k" || return 1; done
  tar -czf "$dest/correct_tarball.tar.gz" -C "$dest" correct || return 1
  cp -r "$dest/correct" "$dest/correct_git" || return 1
  git -C "$dest/correct_git" init -q && git -C "$dest/correct_git" add -A &&
    git -C "$dest/correct_git" -c user.name=t -c user.email=t@t commit -qm submission || return 1
  mkdir -p "$dest/steal_reference/starter_code/01-conv-basic" || return 1
  printf '// grading fixture: reads the solution from the instructor'"'"'s tree.\n#include "%s/reference/01-conv-basic/conv_basic.cu"\n' \
    "$root" >"$dest/steal_reference/starter_code/01-conv-basic/conv_basic.cu" || return 1
  echo "not a tarball" >"$dest/corrupt_tarball.tar.gz"
}

corpus_expectations() {
  python3 -c 'import json, sys; e = json.load(open(sys.argv[1])); n = int(sys.argv[2])
[e.pop("correct_run%d" % k, None) for k in range(n + 1, 6)]; json.dump(e, open(sys.argv[3], "w"), indent=1)' \
    "$1" "$2" "$3"
}
