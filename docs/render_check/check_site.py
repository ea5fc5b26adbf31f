#!/usr/bin/env python3
"""Loads every HTML page of a generated site in headless Chromium and fails on
what a reader would see broken: a formula that MathJax could not typeset (the
red error boxes), a page whose formulas MathJax never processed, an image or
SVG figure that did not load, an internal link to a page or anchor that does
not exist, Markdown bold that reached the page as literal ** (Doxygen
does not recognise bold that starts with code or contains a formula), content
wider than the page at 1280 or 1024 px (a figure, table, formula or command
that sticks out of the text column instead of scaling, wrapping or scrolling in
its own box), or a page that no other page links to (reachable only by URL).

    check_site.py HTML_DIR [--chromium PATH] [--jobs N] [--timeout SECONDS] [--quiet]

Why a browser: Doxygen passes formulas through as TeX, so its warnings cannot
see a macro that MathJax does not know (\\xrightarrow without the AMSmath
extension renders as a red box), and an <object> SVG that fails to load leaves
no trace in the HTML. The pages are served from a local HTTP server (file://
pages are each their own origin, which hides the SVG documents from the
checks), and the browser is driven through the DevTools protocol over a pipe
(--remote-debugging-pipe): no network, no npm or pip package, only Python's
standard library and Debian's `chromium`.

Exit status: 0 when every page is clean, 1 when a page has a problem (each is
printed as `PAGE: what`), 2 when the check itself could not run (no Chromium,
no pages, a browser that does not answer).
"""

import argparse
import collections
import fcntl
import functools
import http.server
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

# What the page reports once it has loaded and MathJax (if any) has finished.
# Runs inside the page; returns a JSON-serialisable object.
PAGE_PROBE = r"""
(async () => {
  const result = {mathjax: 'none', math_errors: [], unprocessed: 0, formulas: 0,
                  images: [], objects: [], links: [], ids: []};
  const page_has_tex = /\\\(|\\\[|\\begin\{/.test(document.body ? document.body.innerText : '');
  const mathjax_script = document.querySelector('script[src*="MathJax.js"]');
  if (mathjax_script) {
    // MathJax 2 loads asynchronously: wait for it, then for its queue to drain.
    // A script that failed to load (HTTP 404) will never define MathJax: stop at once.
    const failed = () => performance.getEntriesByName(mathjax_script.src)
                                    .some(e => e.responseStatus >= 400);
    const deadline = Date.now() + MATHJAX_TIMEOUT_MS;
    while (!(window.MathJax && window.MathJax.Hub && window.MathJax.Hub.Queue) && Date.now() < deadline
           && !failed())
      await new Promise(r => setTimeout(r, 50));
    if (!(window.MathJax && window.MathJax.Hub && window.MathJax.Hub.Queue)) {
      result.mathjax = 'not loaded';
    } else {
      const done = await Promise.race([
        new Promise(r => MathJax.Hub.Queue(() => r(true))),
        new Promise(r => setTimeout(() => r(false), Math.max(0, deadline - Date.now())))]);
      result.mathjax = done ? 'done' : 'timeout';
    }
  }
  // Typesetting errors: MathJax 2 renders a TeX error as an <merror> element
  // (class "merror" in HTML-CSS output), a crash as "[Math Processing Error]".
  for (const el of document.querySelectorAll('.merror, .MathJax_Error, mjx-merror')) {
    result.math_errors.push(el.textContent.trim().slice(0, 160));
  }
  const text = document.body ? document.body.innerText : '';
  for (const phrase of ['Math Processing Error', 'Math input error']) {
    if (text.includes(phrase) && result.math_errors.length === 0) result.math_errors.push(phrase);
  }
  // Formulas found by tex2jax become <script type="math/tex">; each must have
  // been turned into rendered output.
  const scripts = document.querySelectorAll('script[type^="math/tex"]');
  result.formulas = scripts.length;
  for (const s of scripts) {
    const jax = window.MathJax && MathJax.Hub && MathJax.Hub.getJaxFor ? MathJax.Hub.getJaxFor(s) : null;
    const shown = s.previousElementSibling;
    if (!jax || !shown || !/MathJax/.test(shown.className || '')) result.unprocessed += 1;
  }
  if (page_has_tex && result.formulas === 0) result.unprocessed += 1;
  // Images and figures still loading (the page's load event does not wait for
  // images added by scripts, such as the search box's): give them a few seconds.
  const settle = Date.now() + 5000;
  const pending = () => [...document.images].some(i => !i.complete) ||
      [...document.querySelectorAll('object[data]')].some(o => !o.contentDocument);
  while (pending() && Date.now() < settle) await new Promise(r => setTimeout(r, 50));
  // Images: an <img> that did not decode has naturalWidth 0.
  for (const img of document.images) {
    if (!img.complete || img.naturalWidth === 0)
      result.images.push(img.getAttribute('src') || '(no src)');
  }
  // SVG figures: Doxygen embeds them as <object type="image/svg+xml">; one that
  // failed to load, or is not well-formed SVG, has no SVG document inside.
  for (const obj of document.querySelectorAll('object[data]')) {
    let why = '';
    const doc = obj.contentDocument;
    if (!doc || !doc.documentElement) why = 'did not load';
    else if (doc.getElementsByTagName('parsererror').length) why = 'is not well-formed XML';
    else if (doc.documentElement.localName !== 'svg') why = 'is not an SVG document';
    if (why) result.objects.push(obj.getAttribute('data') + ' ' + why);
  }
  // Markdown that Doxygen passed through as text: a literal ** in the body of a
  // page (bold that starts with code or holds a formula is not recognised), or a
  // literal backtick (a code span Doxygen did not close, e.g. one holding a quote).
  result.raw_markdown = [];
  const reported = new Set();  // one report per element, however many text nodes hold **
  for (const block of document.querySelectorAll('.textblock')) {
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('pre, code, .fragment, script, .MathJax, .MathJax_Display')) continue;
      const mark = node.textContent.includes('**') ? '**' : node.textContent.includes('`') ? '`' : '';
      if (!mark || reported.has(node.parentElement)) continue;
      reported.add(node.parentElement);
      const text = node.parentElement.textContent, i = text.indexOf(mark);
      result.raw_markdown.push(text.slice(Math.max(0, i - 30), i + 40).trim());
    }
  }
  for (const a of document.querySelectorAll('a[href]')) result.links.push(a.href);
  // Links inside SVG figures (Doxygen's dependency graphs, in iframes, link to pages from there).
  for (const obj of document.querySelectorAll('object[data], iframe')) {
    let doc = null;
    try { doc = obj.contentDocument; } catch (e) { continue; }  // another origin
    if (!doc) continue;
    for (const a of doc.querySelectorAll('a')) {
      const href = a.getAttribute('href') || a.getAttributeNS('http://www.w3.org/1999/xlink', 'href');
      if (href) result.links.push(new URL(href, doc.URL).href);
    }
  }
  for (const el of document.querySelectorAll('[id]')) result.ids.push(el.id);
  for (const el of document.querySelectorAll('a[name]')) result.ids.push(el.getAttribute('name'));
  return result;
})()
"""


# The widths at which the text column must hold its content (a laptop, a small one).
WIDTHS = (1280, 1024)

# What sticks out of the text column at the current viewport width: the page's
# scrolling box (Doxygen's #doc-content next to the navigation tree, or the
# document) must not scroll sideways, and no element may reach past its right
# edge, clipped or not, unless it lies inside a box of its own that scrolls
# (a wide table in an overflow-x: auto box is fine; a figure cut off is not).
OVERFLOW_PROBE = r"""
(async () => {
  // The tree view's resize handler runs before the next frame: let it.
  await new Promise(r => requestAnimationFrame(r));
  const box = document.getElementById('doc-content') || document.scrollingElement || document.documentElement;
  const root = document.querySelector('div.contents') || document.body;
  if (!box || !root) return [];
  const edge = box.getBoundingClientRect().left + box.clientWidth + 1;
  const scrolls = el => /(auto|scroll)/.test(getComputedStyle(el).overflowX);
  const name = el => {
    let n = el.localName;
    if (el.id) n += '#' + el.id;
    else if (el.classList.length) n += '.' + [...el.classList].slice(0, 2).join('.');
    const what = el.getAttribute('data') || el.getAttribute('src') || (el.textContent || '').trim();
    return n + (what ? ' "' + what.replace(/\s+/g, ' ').slice(0, 50) + '"' : '');
  };
  const out = [];
  const seen = new Set();
  for (const el of root.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= edge) continue;
    let inner = false;  // inside a scrolling box, or inside an element already reported
    for (let a = el.parentElement; a && a !== root && a !== box; a = a.parentElement)
      if (seen.has(a) || scrolls(a)) { inner = true; break; }
    if (inner) continue;
    seen.add(el);
    out.push(name(el) + ' reaches ' + Math.round(r.right - edge + 1) + ' px past the text column');
    if (out.length >= 3) break;
  }
  if (!out.length && box.scrollWidth > box.clientWidth + 1)
    out.push('the page scrolls sideways by ' + (box.scrollWidth - box.clientWidth) + ' px');
  return out;
})()
"""

# The navigation that every page shows (Doxygen's tree view and menu, built by
# script from these files) counts as a link to the pages it lists.
NAV_SCRIPTS = re.compile(r'^(navtreedata|navtreeindex\d+|menudata)\.js$')


class CheckError(Exception):
    """The check could not run (as opposed to: a page has a problem)."""


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe: JSON messages
    separated by NUL bytes, commands on the child's fd 3, replies on its fd 4."""

    def __init__(self, chromium, profile_dir):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def child_fds():  # runs in the child before exec: the pipes become fds 3 and 4
            # Move both ends above 4 first: either may itself be fd 3 or 4, and
            # dup2 onto itself would keep the close-on-exec flag of os.pipe().
            r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)  # dup2 clears close-on-exec on the copy
            os.dup2(w, 4)
            os.close(r)
            os.close(w)

        args = [chromium, '--headless=new', '--remote-debugging-pipe', '--no-first-run',
                '--no-default-browser-check', '--disable-gpu', '--disable-extensions',
                '--disable-background-networking', '--disable-component-update', '--disable-sync',
                '--mute-audio', '--hide-scrollbars', '--user-data-dir=' + profile_dir,
                '--window-size=1280,1000', 'about:blank']
        if hasattr(os, 'geteuid') and os.geteuid() == 0:
            args.insert(1, '--no-sandbox')  # Chromium refuses to run as root with its sandbox
        try:
            self._proc = subprocess.Popen(args, preexec_fn=child_fds, close_fds=False,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as e:
            raise CheckError(f'cannot start {chromium}: {e}') from e
        os.close(to_child_r)
        os.close(from_child_w)
        self.width = None  # the viewport width the pages are laid out at (check_page sets it)
        self._next_id = 0
        self._replies = {}
        self._events = queue.Queue()
        self._cond = threading.Condition()
        self._closed = False
        self._stderr_tail = []
        threading.Thread(target=self._read_loop, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self):
        for line in self._proc.stderr:
            self._stderr_tail = (self._stderr_tail + [line.decode(errors='replace').rstrip()])[-20:]

    def _read_loop(self):
        buf = b''
        while True:
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                break
            buf += chunk
            while b'\0' in buf:
                raw, buf = buf.split(b'\0', 1)
                msg = json.loads(raw)
                if 'id' in msg:
                    with self._cond:
                        self._replies[msg['id']] = msg
                        self._cond.notify_all()
                else:
                    self._events.put(msg)
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def send(self, method, params=None, session=None, timeout=60):
        self._next_id += 1
        msg = {'id': self._next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self._to_child, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._next_id not in self._replies:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    why = 'exited' if self._closed else f'did not answer {method} within {timeout} s'
                    raise CheckError(f'Chromium {why}' + self.stderr_note())
                self._cond.wait(left)
            reply = self._replies.pop(self._next_id)
        if 'error' in reply:
            raise CheckError(f'{method}: {reply["error"].get("message")}')
        return reply.get('result', {})

    def stderr_note(self):
        tail = [l for l in self._stderr_tail if l.strip()]
        return ('; its last messages:\n  ' + '\n  '.join(tail[-5:])) if tail else ''

    def events(self):
        """Events received since the last call."""
        out = []
        while True:
            try:
                out.append(self._events.get_nowait())
            except queue.Empty:
                return out

    def wait_event(self, method, session, timeout):
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            try:
                ev = self._events.get(timeout=min(0.2, max(0.01, deadline - time.monotonic())))
            except queue.Empty:
                continue
            seen.append(ev)
            if ev.get('method') == method and ev.get('sessionId') == session:
                return seen, True
        return seen, False

    def close(self):
        try:
            self.send('Browser.close', timeout=10)
        except CheckError:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(QuietHandler, directory=root)
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def html_pages(root):
    pages = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith('.html'):
                pages.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, '/'))
    return pages


def check_page(browser, session, base, page, timeout):
    """Loads one page; returns (problems, probe result, network failures)."""
    browser.events()  # forget the previous page's events
    url = base + urllib.parse.quote(page)
    nav = browser.send('Page.navigate', {'url': url}, session)
    if nav.get('errorText'):
        return [f'did not load: {nav["errorText"]}'], None
    seen, loaded = browser.wait_event('Page.loadEventFired', session, timeout)
    if not loaded:
        return [f'did not finish loading within {timeout} s'], None
    probe = PAGE_PROBE.replace('MATHJAX_TIMEOUT_MS', str(int(timeout * 1000)))
    res = browser.send('Runtime.evaluate', {'expression': probe, 'awaitPromise': True, 'returnByValue': True},
                       session, timeout=timeout + 30)
    if 'exceptionDetails' in res:
        return [f'the page probe failed: {res["exceptionDetails"].get("text")}'], None
    r = res['result']['value']
    seen += browser.events()
    problems = []
    urls = {ev['params']['requestId']: ev['params']['request']['url'] for ev in seen
            if ev.get('method') == 'Network.requestWillBeSent' and ev.get('sessionId') == session}
    # Resources that failed: a missing image, stylesheet, script or figure.
    for ev in seen:
        if ev.get('sessionId') != session:
            continue
        if ev.get('method') == 'Network.responseReceived':
            resp = ev['params']['response']
            if resp.get('status', 200) >= 400 and not resp['url'].endswith('/favicon.ico'):
                problems.append(f'{ev["params"].get("type", "resource")} {short(resp["url"], base)}: '
                                f'HTTP {resp["status"]}')
        elif ev.get('method') == 'Network.loadingFailed':
            p = ev['params']
            what = urls.get(p.get('requestId'), '')
            # MathJax probes for fonts with about:blank; only the site's own files count.
            if not p.get('canceled') and what.startswith(base):
                problems.append(f'{p.get("type", "resource")} {short(what, base)} failed to load: '
                                f'{p.get("errorText")}')
        elif ev.get('method') == 'Runtime.exceptionThrown':
            d = ev['params']['exceptionDetails']
            msg = d.get('exception', {}).get('description') or d.get('text', '')
            problems.append('JavaScript error: ' + msg.splitlines()[0][:200])
    if r['mathjax'] in ('not loaded', 'timeout'):
        problems.append(f'MathJax {r["mathjax"]} (is the MathJax copy next to the pages complete?)')
    for e in r['math_errors']:
        problems.append(f'MathJax error: {e}')
    if r['unprocessed']:
        problems.append(f'{r["unprocessed"]} formula(s) not typeset by MathJax')
    for text in r['raw_markdown']:
        mark = '**' if '**' in text else '`'
        problems.append(f'Markdown not rendered (literal {mark}): "{text}"')
    for src in r['images']:
        problems.append(f'broken image: {src}')
    for o in r['objects']:
        problems.append(f'broken figure: {o}')
    # The width the page was loaded at first, then the other: one relayout per page.
    for width in sorted(WIDTHS, key=lambda w: w != browser.width):
        if width != browser.width:
            browser.send('Emulation.setDeviceMetricsOverride',
                         {'width': width, 'height': 900, 'deviceScaleFactor': 1, 'mobile': False}, session)
            browser.width = width
        res = browser.send('Runtime.evaluate', {'expression': OVERFLOW_PROBE, 'awaitPromise': True,
                                                'returnByValue': True}, session, timeout=timeout)
        if 'exceptionDetails' in res:
            problems.append(f'the overflow probe failed: {res["exceptionDetails"].get("text")}')
            break
        for what in sorted(res['result']['value']):
            problems.append(f'too wide at {width} px: {what}')
    return problems, r


def short(url, base):
    return url[len(base):] if url.startswith(base) else url


def check_links(root, base, results):
    """Internal links: the target file must exist and, for an HTML page with a
    fragment, the page must have an element with that id or name."""
    problems = {}
    for page, r in results.items():
        for href in r['links']:
            if not href.startswith(base):
                continue  # external (http, mailto) or javascript: links are not checked
            parts = urllib.parse.urlsplit(href[len(base):])
            target = urllib.parse.unquote(parts.path) or page
            if target.endswith('/'):
                target += 'index.html'
            path = os.path.normpath(os.path.join(root, target))
            if not os.path.isfile(path):
                problems.setdefault(page, []).append(f'dead link: {target} does not exist')
                continue
            if parts.fragment and target in results:
                frag = urllib.parse.unquote(parts.fragment)
                if frag not in results[target]['id_set']:
                    problems.setdefault(page, []).append(f'dead link: {target}#{frag} (no such anchor)')
    return problems


def orphan_pages(root, base, results):
    """Pages that no other page links to, and that the navigation does not list:
    a reader can reach them only by typing their address. The site's index.html
    is where a reader starts, so it needs no link; the search box's result lists
    (search/) are opened by its script."""
    linked = set()
    for page, r in results.items():
        for href in r['links']:
            if href.startswith(base):
                target = urllib.parse.unquote(urllib.parse.urlsplit(href[len(base):]).path) or page
                if target != page:
                    linked.add(target)
    for name in os.listdir(root):
        if NAV_SCRIPTS.match(name):
            with open(os.path.join(root, name), encoding='utf-8', errors='replace') as f:
                linked.update(re.findall(r'"([^"#?:]+\.html)', f.read()))
    # search/ holds the search box's result lists, which its script opens.
    return sorted(p for p in results if p != 'index.html' and not p.startswith('search/') and p not in linked)


def missing_scripts(root):
    """The first local MathJax.js that index.html loads and that does not exist."""
    index = os.path.join(root, 'index.html')
    if not os.path.isfile(index):
        return None
    with open(index, encoding='utf-8', errors='replace') as f:
        html = f.read()
    for src in re.findall(r'<script[^>]+src="([^"]*MathJax\.js)"', html):
        if '://' not in src and not os.path.isfile(os.path.join(root, src)):
            return src
    return None


def find_chromium(explicit):
    for c in ([explicit] if explicit else []) + ['chromium', 'chromium-browser', 'google-chrome', 'chrome']:
        if c and (os.path.isfile(c) or shutil.which(c)):
            return shutil.which(c) or c
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('html_dir')
    ap.add_argument('--chromium', help='the browser (default: chromium on PATH, or $CHROMIUM)')
    ap.add_argument('--timeout', type=float, default=30, help='seconds per page (default 30)')
    ap.add_argument('--jobs', type=int, default=min(4, os.cpu_count() or 1),
                    help='browsers loading pages in parallel (default: the CPU count, at most 4)')
    ap.add_argument('--quiet', action='store_true', help='print only problems and the summary')
    a = ap.parse_args(argv)

    root = os.path.abspath(a.html_dir)
    if not os.path.isdir(root):
        print(f'check_site: {a.html_dir} is not a folder (build the docs first)', file=sys.stderr)
        return 2
    pages = html_pages(root)
    if not pages:
        print(f'check_site: no HTML page under {root} (build the docs first)', file=sys.stderr)
        return 2
    # Formulas need the MathJax copy that the pages load; without it every
    # formula would be reported, so say what is missing instead.
    missing = missing_scripts(root)
    if missing:
        print(f'check_site: the pages load {missing}, which is not there: build the docs target '
              '(it copies MathJax next to the pages)', file=sys.stderr)
        return 2
    chromium = find_chromium(a.chromium or os.environ.get('CHROMIUM'))
    if not chromium:
        print('check_site: no Chromium found (apt-get install chromium, or pass --chromium PATH)', file=sys.stderr)
        return 2

    start = time.monotonic()
    server = serve(root)
    base = f'http://127.0.0.1:{server.server_address[1]}/'
    results, problems, failures = {}, {}, []
    todo = queue.Queue()
    for page in pages:
        todo.put(page)
    lock = threading.Lock()
    done = [0]

    def worker():
        # One browser per worker: the pages are independent, and MathJax's
        # start-up on every page is what takes the time, so they run in parallel.
        profile = tempfile.mkdtemp(prefix='check-site-')
        browser = None
        try:
            browser = Browser(chromium, profile)
            target = browser.send('Target.createTarget', {'url': 'about:blank'})['targetId']
            session = browser.send('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
            for domain in ('Page', 'Network', 'Runtime'):
                browser.send(f'{domain}.enable', {}, session)
            while True:
                try:
                    page = todo.get_nowait()
                except queue.Empty:
                    return
                found, r = check_page(browser, session, base, page, a.timeout)
                with lock:
                    if r is not None:
                        r['id_set'] = set(r['ids'])
                        results[page] = r
                    if found:
                        problems[page] = found
                    done[0] += 1
                    if not a.quiet:
                        print(f'[{done[0]}/{len(pages)}] {page}: ' + (f'{len(found)} problem(s)' if found else
                              f'ok ({r["formulas"]} formulas)' if r else 'ok'), flush=True)
        except CheckError as e:
            with lock:
                failures.append(str(e))
        finally:
            if browser:
                browser.close()
            shutil.rmtree(profile, ignore_errors=True)

    jobs = max(1, min(a.jobs, len(pages)))
    threads = [threading.Thread(target=worker) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    server.shutdown()
    if failures:
        for f in dict.fromkeys(failures):
            print(f'check_site: {f}', file=sys.stderr)
        return 2
    for page, found in check_links(root, base, results).items():
        problems.setdefault(page, []).extend(found)
    for page in orphan_pages(root, base, results):
        problems.setdefault(page, []).append('no other page links to it (reachable only by its address)')

    n = sum(len(v) for v in problems.values())
    for page in sorted(problems):
        for p, count in collections.Counter(problems[page]).items():  # in order, each once
            print(f'{page}: {p}' + (f' ({count} times)' if count > 1 else ''))
    formulas = sum(r['formulas'] for r in results.values())
    print(f'check_site: {len(pages)} pages, {formulas} formulas, {n} problem(s) on {len(problems)} page(s), '
          f'{time.monotonic() - start:.0f} s')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
