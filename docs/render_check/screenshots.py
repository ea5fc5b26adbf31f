#!/usr/bin/env python3
"""Takes screenshots of generated pages as a reader sees them: headless Chromium with a window
of --width x --height pixels, after MathJax has typeset the formulas, one screen after another
as the reader scrolls down (a chapter is tens of thousands of pixels long).

    screenshots.py HTML_DIR OUT_DIR [PAGE[#anchor] ...] [--width 1280] [--height 1600] [--most N]

PAGE defaults to index.html. Each page gives OUT_DIR/<page>[-<anchor>]-<width>-<k>.png
(k = 1, 2, ...); with #anchor the screens start at that section. The pages are served and
loaded as check_site.py does (its browser driver and page probe), so what docs.render checks is
what the screenshots show.
Exit status: 0 when every page was taken, 2 when the browser or a page could not be loaded.
"""

import argparse
import base64
import os
import shutil
import sys
import tempfile
import urllib.parse

import check_site


# The element that scrolls: Doxygen's pages keep the header and the navigation fixed and scroll
# #doc-content; other pages scroll the window.
SCROLLER = """(() => { const d = document.getElementById('doc-content');
  return (d && d.scrollHeight > d.clientHeight + 1) ? d : document.scrollingElement; })()"""


def evaluate(browser, session, expression):
    res = browser.send('Runtime.evaluate', {'expression': expression, 'awaitPromise': True, 'returnByValue': True},
                       session)
    if 'exceptionDetails' in res:
        raise check_site.CheckError(f'{expression[:60]}...: {res["exceptionDetails"].get("text")}')
    return res['result'].get('value')


def shoot(browser, session, base, page, width, height, out_dir, timeout, most):
    """Screens of `page` as a reader scrolls through it: the viewport, `height` pixels tall,
    after each scroll by what the scrolling part shows; at most `most` of them."""
    name, _, anchor = page.partition('#')
    browser.events()
    browser.send('Emulation.setDeviceMetricsOverride',
                 {'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': False}, session)
    browser.send('Page.navigate', {'url': base + urllib.parse.quote(name)}, session)
    _, loaded = browser.wait_event('Page.loadEventFired', session, timeout)
    if not loaded:
        raise check_site.CheckError(f'{name} did not load within {timeout} s')
    probe = check_site.PAGE_PROBE.replace('MATHJAX_TIMEOUT_MS', str(int(timeout * 1000)))
    browser.send('Runtime.evaluate', {'expression': probe, 'awaitPromise': True, 'returnByValue': True},
                 session, timeout=timeout + 30)
    # Doxygen sizes its content pane on window resize: one frame for its handler.
    evaluate(browser, session, 'new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))')
    sizes = evaluate(browser, session, f'(() => {{ const s = {SCROLLER}; '
                     'return [s.scrollHeight, s.clientHeight]; })()')
    total, step = sizes
    top = 0
    if anchor:
        top = evaluate(browser, session, f'(() => {{ const s = {SCROLLER}; '
                       f'const e = document.getElementById({anchor!r}); if (!e) return -1; '
                       'return e.getBoundingClientRect().top - s.getBoundingClientRect().top + s.scrollTop - 8; })()')
        if top < 0:
            raise check_site.CheckError(f'{name} has no element #{anchor}')
    stem = name.replace('/', '_').rsplit('.', 1)[0] + (f'-{anchor}' if anchor else '')
    files = []
    for k in range(1, most + 1):
        evaluate(browser, session, f'(() => {{ const s = {SCROLLER}; s.scrollTop = {top}; '
                 'return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))); })()')
        shot = browser.send('Page.captureScreenshot', {'format': 'png'}, session, timeout=timeout + 30)
        path = os.path.join(out_dir, f'{stem}-{width}-{k}.png')
        with open(path, 'wb') as f:
            f.write(base64.b64decode(shot['data']))
        files.append(path)
        top += step
        if top >= total:
            break
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('html_dir')
    ap.add_argument('out_dir')
    ap.add_argument('pages', nargs='*', default=['index.html'])
    ap.add_argument('--width', type=int, default=1280)
    ap.add_argument('--height', type=int, default=1600, help='the window\'s height in pixels (default 1600)')
    ap.add_argument('--most', type=int, default=100, help='screens per page at most (default 100)')
    ap.add_argument('--chromium')
    ap.add_argument('--timeout', type=float, default=60)
    a = ap.parse_args(argv)
    root = os.path.abspath(a.html_dir)
    chromium = check_site.find_chromium(a.chromium or os.environ.get('CHROMIUM'))
    if not chromium:
        print('screenshots: no Chromium found (apt-get install chromium)', file=sys.stderr)
        return 2
    os.makedirs(a.out_dir, exist_ok=True)
    server = check_site.serve(root)
    base = f'http://127.0.0.1:{server.server_address[1]}/'
    profile = tempfile.mkdtemp(prefix='screenshots-')
    browser = None
    try:
        browser = check_site.Browser(chromium, profile)
        target = browser.send('Target.createTarget', {'url': 'about:blank'})['targetId']
        session = browser.send('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        for domain in ('Page', 'Runtime'):
            browser.send(f'{domain}.enable', {}, session)
        for page in a.pages:
            for path in shoot(browser, session, base, page, a.width, a.height, a.out_dir, a.timeout, a.most):
                print(path)
    except check_site.CheckError as e:
        print(f'screenshots: {e}', file=sys.stderr)
        return 2
    finally:
        if browser:
            browser.close()
        shutil.rmtree(profile, ignore_errors=True)
        server.shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
