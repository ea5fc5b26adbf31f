#!/usr/bin/env python3
"""Finds answers in a student copy: files that hold lines of a reference kernel, of a speed
grader's baseline or of the cuDNN anchor.

    answer_scan.py COURSE_ROOT STUDENT_DIR

The answers are COURSE_ROOT's reference/ sources, grader/baselines/, the labs' own baselines
(labs/*/baseline_*.cu: lab 06's naive direct kernel), the labs' instructor programs
(labs/*/instructor/) and grader/device/src/cudnn_conv.cpp.
A line is compared after its comment and all its white space are taken out (so re-indenting or
re-spacing a copy does not hide it), and only if it is distinctive: long enough to say something
(MIN_CHARS) and not also in what a student copy legitimately shares with the answers (the
starters, the labs' contracts and tests, the harness's headers: signatures, includes, launch
shapes of the contracts). A file of STUDENT_DIR is reported when it holds MIN_LINES distinctive
lines of one answer file. Binary files (the prebuilt libraries) are not read.
Exit status: 0 when nothing is found, 1 when something is (each finding on a line), 2 on bad use.
"""
import os
import re
import sys

MIN_CHARS = 24  # "sum+=in[k]*filter[j+r];" is shorter than any line worth reporting alone
MIN_LINES = 2   # one shared line can be a coincidence (an index formula); two are a copy

SOURCE_EXT = (".cu", ".cuh", ".cpp", ".hpp", ".h", ".cc")


def normalise(line):
    line = re.sub(r"//.*", "", line)
    return re.sub(r"\s+", "", line)


def lines_of(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return set()
    if b"\0" in data:
        return None  # binary
    text = data.decode("utf-8", "replace")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return {n for n in (normalise(l) for l in text.splitlines()) if len(n) >= MIN_CHARS}


def walk(root, exts=None):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in (".git", "build")]
        for f in files:
            if exts is None or f.endswith(exts):
                yield os.path.join(d, f)


def main():
    if len(sys.argv) != 3 or not os.path.isdir(sys.argv[1]) or not os.path.isdir(sys.argv[2]):
        sys.exit("usage: answer_scan.py COURSE_ROOT STUDENT_DIR (both folders)")
    course, student = sys.argv[1], sys.argv[2]
    answers = list(walk(os.path.join(course, "reference"), SOURCE_EXT))
    answers += list(walk(os.path.join(course, "grader", "baselines"), SOURCE_EXT))
    lab_baselines = [p for p in walk(os.path.join(course, "labs"), (".cu",))
                     if os.path.basename(p).startswith("baseline_")]
    if not lab_baselines:
        sys.exit(f"answer_scan.py: {course} holds no lab baseline (labs/*/baseline_*.cu) to compare with")
    answers += lab_baselines
    # A lab's instructor programs (labs/*/instructor/: lab 05's measurement of cp.async and
    # clusters) hold kernels that answer the lab.
    answers += [p for p in walk(os.path.join(course, "labs"), SOURCE_EXT)
                if os.path.basename(os.path.dirname(p)) == "instructor"]
    answers.append(os.path.join(course, "grader", "device", "src", "cudnn_conv.cpp"))
    answers = [os.path.normpath(a) for a in answers if os.path.isfile(a)]
    if len(answers) < 4:
        sys.exit(f"answer_scan.py: {course} holds no answers to compare with (reference/, grader/baselines/)")
    shared = set()
    for part in ("starter_code", "labs", *(os.path.join("grader", role, "include")
                                            for role in ("protocol", "harness", "report", "bench", "device"))):
        for path in walk(os.path.join(course, part), SOURCE_EXT):
            if os.path.normpath(path) not in answers:  # a lab's baseline is an answer, not shared
                shared |= lines_of(path) or set()
    distinctive = {}
    for a in answers:
        d = (lines_of(a) or set()) - shared
        if d:
            distinctive[os.path.relpath(a, course)] = d
    found = 0
    for path in sorted(walk(student)):
        have = lines_of(path)
        if not have:
            continue
        for answer, lines in distinctive.items():
            common = have & lines
            if len(common) >= MIN_LINES:
                found += 1
                example = min(common, key=len)
                print(f"{os.path.relpath(path, student)}: holds {len(common)} lines of {answer} (e.g. '{example}')")
    print(f"answer_scan: {len(distinctive)} answer files compared with {student}: "
          f"{'nothing found' if not found else str(found) + ' finding(s)'}")
    sys.exit(1 if found else 0)


main()
