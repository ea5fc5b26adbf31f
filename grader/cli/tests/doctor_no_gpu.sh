#!/usr/bin/env bash
# `convlab doctor` where no GPU can be seen (CUDA_VISIBLE_DEVICES="" hides any there is): it says so
# in plain words, writes its JSON, and exits 77, not 0 (fit), 1 (unfit) or 2 (could not check).
#   doctor_no_gpu.sh CONVLAB_EXE SOURCE_DIR WORK_DIR
set -uo pipefail
convlab=$1 root=$2 work=$3
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
rm -rf "$work" && mkdir -p "$work"

out=$(CUDA_VISIBLE_DEVICES= "$convlab" --root "$root" doctor --json "$work/doctor.json" 2>&1)
rc=$?
echo "$out"
check "no GPU: exit status 77 (got $rc)" test $rc -eq 77
check "... saying so" grep -q "no GPU here, so the toolchain was not checked" <<<"$out"
check "... in the JSON too" grep -q '"status": "no-gpu"' "$work/doctor.json"
check "... which names what hid the GPU" grep -q '"visible": "(none)"' "$work/doctor.json"

# Bad input: clear errors, never a crash.
mkdir -p "$work/ro" && chmod 555 "$work/ro"
out=$(CUDA_VISIBLE_DEVICES= "$convlab" --root "$root" doctor --json "$work/ro/doctor.json" 2>&1)
rc=$?
if [ "$(id -u)" -ne 0 ]; then  # root writes anywhere
  check "an unwritable --json is an error (exit 2, got $rc)" test $rc -eq 2
  check "... naming the file" grep -q "cannot write $work/ro/doctor.json" <<<"$out"
fi
out=$("$convlab" --root "$root" doctor --no-such-option 2>&1)
rc=$?
check "an unknown option is refused (exit $rc)" test $rc -ne 0 -a $rc -ne 77 -a $rc -ne 1
chmod 755 "$work/ro"
exit $fail
