#!/usr/bin/env python3
"""The self-test of check_site.py: it must pass a clean page and catch every
kind of problem planted in docs/render_check/planted/ (a formula MathJax
cannot typeset, a page whose MathJax never loads, a missing image, a missing
SVG figure, an SVG that is not well-formed, a link to a missing page and one to
a missing anchor, Markdown bold left as literal **, content wider than the text
column at 1280 and at 1024 px, a page that no page links to), each with the
message a reader of the log needs; a wide table that scrolls in its own box is
not reported.

    selftest.py MATHJAX_DIR [--chromium PATH]

MATHJAX_DIR is a MathJax 2 folder (holding MathJax.js), for instance the copy
next to the generated docs or Debian's /usr/share/javascript/mathjax.
"""

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import check_site  # noqa: E402 (after the line above on purpose)

HERE = os.path.dirname(os.path.abspath(__file__))
PLANTED = os.path.join(HERE, 'planted')

# The clean pages and what they use; every other page has one planted problem.
CLEAN = ['good.html', 'other.html', 'figure.svg', 'pixel.png']
# index.html (only with the planted pages) links to all of them but orphan.html.
EXPECTED = {
    'bad_math.html': ['MathJax error: Undefined control sequence \\notamacro'],
    'no_mathjax.html': ['MathJax not loaded', 'formula(s) not typeset by MathJax'],
    'broken_image.html': ['broken image: missing.png', 'missing.png: HTTP 404'],
    'broken_figure.html': ['broken figure: missing.svg', 'missing.svg: HTTP 404'],
    'bad_svg.html': ['broken figure: not_well_formed.svg is not well-formed XML'],
    'dead_link.html': ['dead link: nowhere.html does not exist',
                       'dead link: good.html#no-such-anchor (no such anchor)'],
    'raw_markdown.html': ['Markdown not rendered (literal **): "**gridDim.y is at most 65535.**'],
    'raw_backtick.html': ['Markdown not rendered (literal `): "',
                          "`ctest -R 'labNN.fence'shows the verdict"],
    'too_wide.html': ['too wide at 1280 px: img "pixel.png" reaches',
                      'too wide at 1024 px: img "pixel.png" reaches',
                      'too wide at 1024 px: table.wide "eleven columns" reaches'],
    'orphan.html': ['no other page links to it (reachable only by its address)'],
}
# Lines that must not appear: the table of too_wide.html fits at 1280 px, and the
# pages that index.html links to are not orphans.
UNEXPECTED = {
    'too_wide.html': ['too wide at 1280 px: table.wide', 'no other page links to it'],
    'bad_math.html': ['no other page links to it'],
}


def run(folder, chromium):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        args = [folder, '--quiet', '--timeout', '20'] + (['--chromium', chromium] if chromium else [])
        code = check_site.main(args)
    return code, out.getvalue()


def stage(dest, names, mathjax):
    os.makedirs(dest)
    for name in names:
        shutil.copy(os.path.join(PLANTED, name), dest)
    os.symlink(mathjax, os.path.join(dest, 'mathjax'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('mathjax_dir')
    ap.add_argument('--chromium')
    a = ap.parse_args()
    mathjax = os.path.abspath(a.mathjax_dir)
    if not os.path.isfile(os.path.join(mathjax, 'MathJax.js')):
        print(f'selftest: {mathjax} holds no MathJax.js', file=sys.stderr)
        return 2
    failures = []
    work = tempfile.mkdtemp(prefix='check-site-selftest-')
    try:
        # 1. The clean pages alone pass.
        clean = os.path.join(work, 'clean')
        stage(clean, CLEAN, mathjax)
        code, log = run(clean, a.chromium)
        print(log, end='')
        if code != 0:
            failures.append(f'the clean pages did not pass (exit {code})')

        # 2. With the planted pages, every problem is reported, nothing on the clean pages.
        planted = os.path.join(work, 'planted')
        stage(planted, sorted(os.listdir(PLANTED)), mathjax)
        code, log = run(planted, a.chromium)
        print(log, end='')
        if code != 1:
            failures.append(f'the planted pages gave exit {code}, not 1')
        lines = log.splitlines()
        for page, wanted in EXPECTED.items():
            for w in wanted:
                if not any(l.startswith(page + ': ') and w in l for l in lines):
                    failures.append(f'{page}: expected a line with "{w}"')
        for page, unwanted in UNEXPECTED.items():
            for u in unwanted:
                if any(l.startswith(page + ': ') and u in l for l in lines):
                    failures.append(f'{page}: reported "{u}", which it does not have')
        for page in CLEAN + ['index.html']:
            if any(l.startswith(page + ': ') for l in lines):
                failures.append(f'{page} is clean but was reported')

        # 3. No pages at all is an error of the check, not a pass.
        empty = os.path.join(work, 'empty')
        os.makedirs(empty)
        code, log = run(empty, a.chromium)
        if code != 2:
            failures.append(f'an empty folder gave exit {code}, not 2')
    finally:
        shutil.rmtree(work, ignore_errors=True)

    for f in failures:
        print(f'selftest: FAILED: {f}')
    print(f'selftest: {"FAILED" if failures else "passed"}: the clean pages pass, '
          f'{sum(len(v) for v in EXPECTED.values())} planted problems checked')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
