#!/usr/bin/env bash
# .ci/run fails when any workflow fails (issue 26): its logic run in a copy of the repository's
# top level (.ci/run and README.md) with stand-ins on PATH: a `cmake` that records each workflow
# it is asked for and fails the one named in FAIL_PRESET, an `nvcc`, a `dpkg` that says every
# package is installed and an `apt-get` that must not be called.
#   ci_run_check.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src=$1 work=$2
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}

rm -rf "$work"
mkdir -p "$work/bin" "$work/repo/.ci"
cp "$src/.ci/run" "$work/repo/.ci/run"
cp "$src/README.md" "$work/repo/README.md"
cat >"$work/bin/cmake" <<'EOF'
#!/usr/bin/env bash
if [ "$1" = --version ]; then echo "cmake version 3.99.0 (stand-in)"; exit 0; fi
if [ "$1" = --workflow ] && [ "$2" = --preset ]; then
  echo "$3" >>"$CI_CHECK_LOG"
  if [ "$3" = "${FAIL_PRESET:-}" ]; then echo "stand-in: 1 tests failed out of 1"; exit 8; fi
  echo "stand-in: 100% tests passed"; exit 0
fi
echo "stand-in cmake: unexpected arguments: $*" >&2; exit 2
EOF
printf '#!/bin/sh\necho "Build cuda_99.0 (stand-in)"\n' >"$work/bin/nvcc"
printf '#!/bin/sh\nexit 0\n' >"$work/bin/dpkg"
printf '#!/bin/sh\necho "stand-in apt-get: must not be called" >&2\nexit 3\n' >"$work/bin/apt-get"
chmod +x "$work/bin"/*

presets=$(awk '/^## The test suite/ {s = 1} s && /^```sh/ {getline; print; exit}' "$src/README.md" |
  grep -o -- '--preset [A-Za-z0-9_-]*' | cut -d' ' -f2 | tr '\n' ' ')
echo "README's workflows: $presets"
check "the README's test command names at least two workflows" test "$(echo $presets | wc -w)" -ge 2

run_ci() {  # run_ci FAIL_PRESET: sets rc, out, ran
  : >"$work/log"
  out=$(cd "$work" && env PATH="$work/bin:$PATH" CI_CHECK_LOG="$work/log" FAIL_PRESET="$1" \
    bash "$work/repo/.ci/run" 2>&1)
  rc=$?
  ran=$(tr '\n' ' ' <"$work/log")
}

run_ci ""
check "no workflow fails: .ci/run exits 0 (rc $rc)" test "$rc" -eq 0
check "no workflow fails: every workflow ran, in the README's order ($ran)" test "$ran" = "$presets"
check "no workflow fails: it says so" grep -q "every workflow passed" <<<"$out"

for p in $presets; do
  run_ci "$p"
  check "workflow $p fails: .ci/run exits non-zero (rc $rc)" test "$rc" -ne 0
  check "workflow $p fails: it names the workflow" grep -q "workflows failed: $p\$" <<<"$out"
  check "workflow $p fails: the other workflows still ran ($ran)" test "$ran" = "$presets"
done

# A README whose test command is not a chain of workflows: refused, nothing run.
sed -i '/^## The test suite/,$ s/^cmake --workflow --preset \(.*\)$/cmake --workflow --preset \1; echo done/' \
  "$work/repo/README.md"
run_ci ""
check "a README command that is not a chain of workflows: .ci/run exits non-zero (rc $rc)" test "$rc" -ne 0
check "... and runs no workflow ($ran)" test -z "$ran"
check "... and says why" grep -q "is not a$" <<<"$out"

[ $fail = 0 ] && echo "ci_run_check: every check passed"
exit $fail
