#!/usr/bin/env bash
# Submissions as an LMS hands them over, graded end to end by `convlab grade` on the CPU backend:
# a student's .zip, a Canvas-style bulk download (a zip of the students' zips, one without a
# starter_code/ parent, an index.html beside them) named by a roster; the gradebook's names, ids,
# e-mails, scores and points possible (the speed graders need a GPU: 70 of lab 01's 100), and the
# refusals that stop a run before anything is built (not an archive, a roster that does not match).
# Run by e2e_exploits.sh in its CPU build slots (WORK_DIR), so that it builds no tree of its own.
#   e2e_intake.sh CONVLAB_EXE SOURCE_DIR OUT_DIR WORK_DIR
set -uo pipefail
convlab=$1 root=$2 out=$3 slots=$4
fail=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
rm -rf "$out"
mkdir -p "$out/fixtures" "$out/subs" "$out/make"
chmod 755 "$out"
"${CMAKE:-cmake}" -DROOT="$root" -DOUT="$out/fixtures" -P "$root/grader/cli/tests/make_fixtures.cmake" >/dev/null || exit 1
zip_tree() (cd "$2" && zip -qr "$1" .)  # zip_tree ZIP FOLDER: zipped from inside, as a student does

# erin.zip: the correct submission, starter_code/ at its top.
zip_tree "$out/subs/erin.zip" "$out/fixtures/correct" || exit 1
# The bulk download: Alice's correct kernels as 01-conv-basic/ (no starter_code/ parent), Bob's
# wrong conv2d, an index page that is no one's.
mkdir -p "$out/make/bulk" && cp -r "$out/fixtures/correct/starter_code" "$out/make/alice" || exit 1
zip_tree "$out/make/bulk/smithalice_12345_67890_lab01.zip" "$out/make/alice" || exit 1
zip_tree "$out/make/bulk/jonesbob_222_333_lab01.zip" "$out/fixtures/wrong_result" || exit 1
echo '<html>Canvas</html>' >"$out/make/bulk/index.html"
zip_tree "$out/subs/class.zip" "$out/make/bulk" || exit 1
cat >"$out/roster.csv" <<'EOF'
id,name,email
12345,"Smith, Alice",asmith@example.edu
222,Bob Jones,bjones@example.edu
erin,Erin Example,erin@example.edu
777,Dana Absent,dana@example.edu
EOF

grade() { "$convlab" --root "$root" grade "$@" --labs lab01 --preset cpu --work-dir "$slots" --jobs 2 --test-timeout 120; }
start=$SECONDS
grade "$out/subs/class.zip" "$out/subs/erin.zip" --roster "$out/roster.csv" --out "$out/out" >"$out/grade.log" 2>&1
rc=$?
cat "$out/grade.log"
echo "graded the bulk download and a zip in $((SECONDS - start)) s"
check "the bulk download and the zip are graded (exit $rc)" test $rc -eq 0
expected='student,id,email,lab01,total,not graded
Points Possible,,,70,70,
Bob Jones,222,bjones@example.edu,35,35,"lab01 speedup.conv1d, speedup.conv2d: need a GPU (30 points)"
"Smith, Alice",12345,asmith@example.edu,70,70,"lab01 speedup.conv1d, speedup.conv2d: need a GPU (30 points)"
Erin Example,erin,erin@example.edu,70,70,"lab01 speedup.conv1d, speedup.conv2d: need a GPU (30 points)"'
got=$(cat "$out/out/gradebook.csv" 2>/dev/null)
check "gradebook: the roster's names, ids and e-mails, the scores, 70 possible on the CPU backend" test "$got" = "$expected"
[ "$got" = "$expected" ] || diff <(echo "$expected") <(echo "$got")
check "a student's files are named by roster id" test -f "$out/out/feedback/12345.md" -a -f "$out/out/results/erin.json"
check "the speed graders' feedback: needs a GPU" \
  grep -q "needs a GPU: graded when your instructor grades on one" "$out/out/feedback/12345.md"
check "the result names where the submission came from" \
  grep -q '"origin": "class.zip: smithalice_12345_67890_lab01.zip"' "$out/out/state/12345.json"
check "the saved result says it was a zip" grep -q '"kind": "zip"' "$out/out/state/erin.json"
check "grade.log names the file left out of the bulk download" grep -q "class.zip: index.html (a text file)" "$out/out/grade.log"
check "grade.log names the student of the roster with no submission" grep -q "777 (Dana Absent)" "$out/out/grade.log"

# Refused before anything is built, each named once, exit 2.
printf '%%PDF-1.4\n' >"$out/subs/frank.pdf"
msg=$(grade "$out/subs/erin.zip" "$out/subs/frank.pdf" --out "$out/refused" 2>&1)
check "a file that is not a submission stops the run (exit $?)" test $? -eq 2
check "... naming it and what it is, once" test "$(grep -o 'frank.pdf is a PDF document' <<<"$msg" | wc -l)" -eq 1
check "... before anything is built" test ! -e "$out/refused/hardware.json"
head -1 "$out/roster.csv" >"$out/short.csv" && sed -n 2p "$out/roster.csv" >>"$out/short.csv"
msg=$(grade "$out/subs/class.zip" --roster "$out/short.csv" --out "$out/refused2" 2>&1)
check "a submission the roster does not name stops the run (exit $?)" test $? -eq 2
check "... naming it" grep -q "no student of the roster for 1 submission(s): class.zip: jonesbob_222_333_lab01.zip" <<<"$msg"
printf 'id,name\n12345,A\n12345,B\n' >"$out/dup.csv"
msg=$(grade "$out/subs/class.zip" --roster "$out/dup.csv" --out "$out/refused3" 2>&1)
check "a roster with a duplicate id stops the run (exit $?)" test $? -eq 2
check "... naming both lines" grep -q "line 3: id 12345 is also on line 2" <<<"$msg"
exit $fail
