// Checks almanac's public HTML pages in the system's headless Chromium; run by
// tests/pages_browser.rs, which starts `almanac serve --demo` and passes the configuration as JSON
// on stdin:
//
//   {"base": "http://127.0.0.1:PORT",            // the server (no trailing slash needed)
//    "screenshots": "/abs/dir",                   // full-page PNGs go here
//    "pages": [{"lang": "en", "name": "list", "url": "http://…/events/", "status": 200}, …],
//                                                 // a page may carry "cookie": {"name", "value"}
//                                                 // (an editor's session, for the manage pages)
//    "embed_host_port": 41234,                    // where to serve the page that embeds the calendar
//    "category_slug": "music",                    // the list embed's data-categories
//    "chromium": "/usr/bin/chromium",             // optional
//    "widths": [1280, 390],                       // optional
//    "page_timeout_ms": 20000,                    // optional: the budget of one page at one width
//    "concurrency": 3}                            // optional: pages checked at once
//
// It prints one JSON report on stdout (nothing else goes to stdout; progress goes to stderr):
//
//   {"ok": bool, "browser": "…", "base": "…",
//    "pages":  [{"lang", "name", "url", "width", "status", "content_type", "screenshot",
//                "axe_violations", "requests", "seconds", "ok"}],       // one per page and width
//    "checks": [{"name", "ok", "info"}],                                 // the specific checks
//    "failures": [{"page", "url", "width", "rule", "impact", "message",
//                  "node_count", "nodes": [{"target", "html", "summary"}]}]}
//
// Exit status: 0 when there is no failure, 1 when there are failures, 2 when the configuration is
// unusable or the browser does not start (a report with the reason is still printed).
//
// Every page and every check runs on its own browser context, inside its own time budget, so one
// failure never stops the others. Nothing is fetched from outside `base` (and the embedding host):
// such requests are recorded as failures and aborted.
//
// Failure rules ("rule" in the report). Each page at each width (height 900):
//   load, http-status, content-type  the page loads with its expected status, as text/html
//   axe/<rule id>                    axe-core violations of the WCAG 2.0/2.1 A+AA and 2.2 AA rules
//   foreign-request                  a request (or WebSocket) to another origin than base
//   horizontal-scroll                scrollWidth > clientWidth + 1 (nodes: what sticks out)
//   broken-subresource               a stylesheet, script, image… of base answering >= 400
//   csp-violation, page-error        the page breaks its own CSP / throws (before axe is injected)
//   xss                              an element carries data-xss: stored text became markup
//   screenshot, timeout, axe         the harness could not do its part for this page
// The specific checks (English), each reported under "check/<name>":
//   month-no-js      without JavaScript: a <table> with 7 <th> column headers, and a[rel=next]
//                    leads to a 200 page showing another month
//   month-keyboard   Tab from the top: every focused element has an outline or box-shadow
//                    (focus-visible), a[rel=prev], a[rel=next] and an a.more are reached
//                    (keyboard-reach); without an a.more this month, also the first next month with one
//   subscribe        [data-subscribe] has webcal://, Google, Outlook and .ics links
//                    (subscribe-links); the .ics feed answers 200 text/calendar (subscribe-ics)
//   frame-ancestors  CSP frame-ancestors: 'self' only on /events/month/, the embedding origin
//                    listed on /embed/events/month/
//   embed            a page on 127.0.0.1:embed_host_port with embed.js and two data-almanac-view
//                    divs gets two iframes under base/embed/ (embed-iframes), each loads
//                    (embed-frame-load) and is more than 100 px high (embed-height)
//   frame-refused    the same host framing /events/month/ directly is refused by the browser

import { chromium } from 'playwright-core';
import { createRequire } from 'node:module';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

const require = createRequire(import.meta.url);
const AXE_PATH = require.resolve('axe-core/axe.min.js');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const HEIGHT = 900;
const MAX_NODES = 10; // nodes kept per failure in the report
const HTML_CHARS = 300; // characters kept of a node's HTML

const log = (...a) => console.error('[check]', ...a);

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const fail = (...a) => failAlways(...a);
const report = { ok: false, browser: null, base: null, pages: [], checks: [], failures: [] };

/** Records one failure. `where` = {page, url, width}. */
function failAlways(where, rule, message, { impact = null, nodes = [] } = {}) {
  report.failures.push({
    page: where.page ?? null,
    url: where.url ?? null,
    width: where.width ?? null,
    rule,
    impact,
    message: String(message),
    node_count: nodes.length,
    nodes: nodes.slice(0, MAX_NODES).map((n) => ({
      target: n.target ?? [],
      html: clip(n.html ?? ''),
      summary: n.summary ? clip(n.summary) : null,
    })),
  });
}

function clip(s, n = HTML_CHARS) {
  s = String(s).replace(/\s+/g, ' ').trim();
  return s.length > n ? s.slice(0, n) + '…' : s;
}

function errText(e) {
  return clip((e && (e.message || String(e))) || 'unknown error', 600);
}

function finish(code) {
  report.ok = code === 0 && report.failures.length === 0;
  process.stdout.write(JSON.stringify(report, null, 1) + '\n');
  process.exitCode = code !== 0 ? code : report.failures.length ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs `fn` with a deadline; on timeout calls `onTimeout` (which should abort `fn`'s work). */
async function withDeadline(ms, fn, onTimeout) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(ms)), ms);
  });
  const work = fn();
  try {
    return await Promise.race([work, deadline]);
  } catch (e) {
    if (e instanceof DeadlineError) {
      await onTimeout?.().catch(() => {});
      work.catch(() => {}); // its rejection after the context closed is expected
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

class DeadlineError extends Error {
  constructor(ms) {
    super(`did not finish within ${ms / 1000} s`);
  }
}

/** Runs `tasks` (functions returning promises) with at most `n` at once. */
async function pool(n, tasks) {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.max(1, n) }, worker));
}

function isLocalScheme(u) {
  return /^(data|blob|about|javascript|chrome-error|chrome):/i.test(u);
}

function originOf(u) {
  try {
    return new URL(u).origin;
  } catch {
    return null;
  }
}

/** Parses a Content-Security-Policy value into {directive: [sources]}. */
function parseCsp(value) {
  const out = {};
  for (const policy of String(value ?? '').split(',')) {
    for (const part of policy.split(';')) {
      const [name, ...sources] = part.trim().split(/\s+/);
      if (name) (out[name.toLowerCase()] ??= []).push(...sources);
    }
  }
  return out;
}

async function fetchHead(url, timeoutMs = 10000) {
  const r = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  const body = await r.arrayBuffer().catch(() => new ArrayBuffer(0));
  return { status: r.status, headers: r.headers, bytes: body.byteLength };
}

/**
 * A browser context whose requests are recorded; those to other origins than `allowed` are
 * recorded in `foreign` and aborted (the network is closed anyway; aborting keeps the check fast).
 */
async function newContext(browser, allowed, options = {}) {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: HEIGHT },
    javaScriptEnabled: options.javaScriptEnabled ?? true,
    locale: 'en-US',
    timezoneId: 'UTC',
    serviceWorkers: 'block',
  });
  context.setDefaultTimeout(15000);
  context.setDefaultNavigationTimeout(15000);
  const rec = { requests: [], foreign: [], broken: [], consoleErrors: [], pageErrors: [] };
  const isForeign = (u) => !isLocalScheme(u) && !allowed.includes(originOf(u));
  context.on('request', (req) => {
    const u = req.url();
    rec.requests.push(u);
    if (isForeign(u)) rec.foreign.push({ url: u, type: req.resourceType() });
  });
  // Subresources of the calendar's own origin that fail (the documents' statuses are checked
  // where they are loaded; a missing favicon is the browser's own guess, not the page's).
  const own = (u) => originOf(u) === allowed[0] && new URL(u).pathname !== '/favicon.ico';
  context.on('response', (r) => {
    const req = r.request();
    if (req.resourceType() !== 'document' && r.status() >= 400 && own(r.url())) {
      rec.broken.push({ url: r.url(), type: req.resourceType(), status: String(r.status()) });
    }
  });
  context.on('requestfailed', (req) => {
    const why = req.failure()?.errorText ?? 'failed';
    if (req.resourceType() !== 'document' && own(req.url()) && !/ERR_ABORTED/.test(why)) {
      rec.broken.push({ url: req.url(), type: req.resourceType(), status: why });
    }
  });
  await context.route(
    (u) => isForeign(u.href),
    (route) => route.abort('blockedbyclient').catch(() => {}),
  );
  context.on('page', (page) => {
    page.on('websocket', (ws) => {
      const u = ws.url();
      if (!allowed.includes(originOf(u.replace(/^ws/, 'http')))) rec.foreign.push({ url: u, type: 'websocket' });
    });
    page.on('console', (m) => {
      if (m.type() === 'error') rec.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => rec.pageErrors.push(errText(e)));
  });
  return { context, rec };
}

/** Waits for the network to settle a little after `load` (never fails). */
async function settle(page) {
  await page.waitForLoadState('networkidle', { timeout: 3000 }).catch(() => {});
  await page.evaluate(() => document.fonts && document.fonts.ready.then(() => true)).catch(() => {});
}

async function injectAxe(page) {
  // The pages' own CSP may refuse an inline script; axe is then evaluated through the DevTools
  // protocol, which CSP does not govern.
  await page.addScriptTag({ path: AXE_PATH }).catch(() => {});
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) {
    const source = await fs.readFile(AXE_PATH, 'utf8');
    await page.evaluate(source);
  }
}

async function runAxe(page) {
  await injectAxe(page);
  return page.evaluate(async (tags) => {
    const r = await window.axe.run(document, {
      runOnly: { type: 'tag', values: tags },
      resultTypes: ['violations'],
    });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      helpUrl: v.helpUrl,
      nodes: v.nodes.map((n) => ({ target: n.target, html: n.html, summary: n.failureSummary })),
    }));
  }, AXE_TAGS);
}

/** The elements that stick out to the right of the viewport (innermost first, at most 5). */
async function overflowing(page) {
  return page.evaluate(() => {
    const cw = document.documentElement.clientWidth;
    const out = [];
    for (const el of document.body ? document.body.querySelectorAll('*') : []) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > cw + 1) {
        const inner = [...el.children].some((c) => c.getBoundingClientRect().right > cw + 1);
        if (!inner) out.push(el);
      }
    }
    const sel = (el) => {
      const parts = [];
      for (let e = el; e && e.nodeType === 1 && parts.length < 4; e = e.parentElement) {
        let s = e.localName;
        if (e.id) { parts.unshift(`${s}#${e.id}`); break; }
        if (e.classList.length) s += '.' + [...e.classList].join('.');
        parts.unshift(s);
      }
      return parts.join(' > ');
    };
    return out.slice(0, 5).map((el) => ({
      target: [sel(el)],
      html: el.outerHTML.slice(0, 400),
      summary: `right edge at ${Math.round(el.getBoundingClientRect().right)} px, viewport ${cw} px`,
    }));
  });
}

// ---------------------------------------------------------------------------------------------
// One page at one width
// ---------------------------------------------------------------------------------------------

async function checkPage(browser, cfg, p, width) {
  const where = { page: `${p.lang}/${p.name}`, url: p.url, width };
  // After the deadline the abandoned work only reports the closing of its context: ignored.
  let expired = false;
  const fail = (...a) => expired || failAlways(...a);
  const result = {
    lang: p.lang, name: p.name, url: p.url, width,
    status: null, content_type: null, screenshot: null,
    axe_violations: null, requests: 0, seconds: 0, ok: false,
  };
  report.pages.push(result);
  const started = Date.now();
  const { context, rec } = await newContext(browser, [cfg.origin], { width });
  try {
    if (p.cookie) await context.addCookies([{ ...p.cookie, url: cfg.origin }]);
    await withDeadline(cfg.pageTimeout, async () => {
      const page = await context.newPage();
      let response;
      try {
        response = await page.goto(p.url, { waitUntil: 'load' });
      } catch (e) {
        fail(where, 'load', `the page did not load: ${errText(e)}`);
        return;
      }
      const expected = p.status ?? 200;
      result.status = response ? response.status() : null;
      result.content_type = response ? response.headers()['content-type'] ?? null : null;
      if (result.status !== expected) {
        fail(where, 'http-status', `status ${result.status}, expected ${expected}`);
      }
      if (!/^text\/html\b/i.test(result.content_type ?? '')) {
        fail(where, 'content-type', `content-type ${JSON.stringify(result.content_type)}, expected text/html`);
        return; // nothing to check in a page that is not HTML
      }
      await settle(page);

      const sizes = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
      }));
      if (sizes.scrollWidth > sizes.clientWidth + 1) {
        fail(where, 'horizontal-scroll',
          `the page scrolls horizontally: scrollWidth ${sizes.scrollWidth} > clientWidth ${sizes.clientWidth}`,
          { nodes: await overflowing(page).catch(() => []) });
      }

      // Stored or asked-for text that became markup (tests/pages_browser.rs, HOSTILE).
      const injected = await page.evaluate(() => document.querySelectorAll('[data-xss]').length);
      if (injected) fail(where, 'xss', `${injected} element(s) carrying data-xss: text became markup`);

      // Console errors so far are the page's own (axe is not injected yet).
      for (const m of rec.consoleErrors.filter((m) => /Content Security Policy/i.test(m))) {
        fail(where, 'csp-violation', m);
      }
      for (const m of rec.pageErrors) fail(where, 'page-error', `uncaught exception: ${m}`);

      try {
        const violations = await runAxe(page);
        result.axe_violations = violations.length;
        for (const v of violations) {
          fail(where, `axe/${v.id}`, `${v.help} (${v.helpUrl})`, { impact: v.impact, nodes: v.nodes });
        }
      } catch (e) {
        fail(where, 'axe', `axe-core did not run: ${errText(e)}`);
      }

      const file = path.join(cfg.screenshots, `${p.lang}-${p.name}-${width}.png`);
      try {
        await page.screenshot({ path: file, fullPage: true, timeout: 10000 });
        result.screenshot = file;
      } catch (e) {
        fail(where, 'screenshot', `no screenshot: ${errText(e)}`);
      }
    }, () => ((expired = true), context.close()));
  } catch (e) {
    failAlways(where, 'timeout', `the checks of this page ${errText(e)} (status ${result.status})`);
  } finally {
    await context.close().catch(() => {});
  }
  result.requests = rec.requests.length;
  for (const f of rec.foreign) {
    fail(where, 'foreign-request', `a request to another origin than ${cfg.origin}: ${f.type} ${f.url}`);
  }
  for (const b of rec.broken) fail(where, 'broken-subresource', `${b.type} ${b.url} answered ${b.status}`);
  result.seconds = (Date.now() - started) / 1000;
  result.ok = !report.failures.some((f) => f.page === where.page && f.width === width);
  log(`${result.ok ? 'ok  ' : 'FAIL'} ${where.page} @${width} ${result.status} ${p.url} (${result.seconds.toFixed(1)} s)`);
}

// ---------------------------------------------------------------------------------------------
// Specific checks (English)
// ---------------------------------------------------------------------------------------------

/** Runs one named check on its own context and deadline; `body(ctx, where, info)` records failures. */
async function check(browser, cfg, name, url, options, body) {
  const where = { page: `check/${name}`, url, width: options.width ?? 1280 };
  const entry = { name, ok: false, info: {} };
  report.checks.push(entry);
  const allowed = [cfg.origin, ...(options.alsoAllowed ?? [])];
  const { context, rec } = await newContext(browser, allowed, options);
  let expired = false;
  const failHere = (...a) => expired || failAlways(...a);
  try {
    await withDeadline(options.timeout ?? cfg.pageTimeout, () => body(context, where, entry.info, failHere),
      () => ((expired = true), context.close()));
  } catch (e) {
    if (e instanceof DeadlineError) failAlways(where, 'timeout', `${name}: ${errText(e)}`);
    else if (!expired) failAlways(where, name, `${name}: ${errText(e)}`);
  } finally {
    await context.close().catch(() => {});
  }
  for (const f of rec.foreign) {
    fail(where, 'foreign-request', `a request to another origin than ${allowed.join(' or ')}: ${f.type} ${f.url}`);
  }
  for (const b of rec.broken) fail(where, 'broken-subresource', `${b.type} ${b.url} answered ${b.status}`);
  entry.ok = !report.failures.some((f) => f.page === where.page);
  log(`${entry.ok ? 'ok  ' : 'FAIL'} check ${name}`);
}

/** The month view without JavaScript: a 7-column table and a working "next" link. */
async function monthWithoutJs(browser, cfg) {
  const url = cfg.url('/events/month/');
  await check(browser, cfg, 'month-no-js', url, { javaScriptEnabled: false }, async (context, where, info, fail) => {
    const page = await context.newPage();
    const r = await page.goto(url, { waitUntil: 'load' });
    info.status = r?.status() ?? null;
    if (info.status !== 200) fail(where, 'month-no-js', `status ${info.status}, expected 200`);
    const grid = await page.evaluate(monthGrid);
    info.tables = grid.tables;
    info.label = grid.label;
    if (!grid.tables.some((n) => n === 7)) {
      fail(where, 'month-no-js',
        `no <table> with 7 column headers <th> (tables' header counts: ${JSON.stringify(grid.tables)})`);
    }
    const next = await page.evaluate(() => document.querySelector('a[rel~=next]')?.href ?? null);
    info.next = next;
    if (!next) {
      fail(where, 'month-no-js', 'no "next" link (a[rel=next])');
      return;
    }
    const r2 = await page.goto(next, { waitUntil: 'load' });
    info.next_status = r2?.status() ?? null;
    if (info.next_status !== 200) {
      fail({ ...where, url: next }, 'month-no-js', `the "next" link ${next} answered ${info.next_status}, expected 200`);
      return;
    }
    const grid2 = await page.evaluate(monthGrid);
    info.next_label = grid2.label;
    if (page.url() === r.url() || grid2.label === grid.label) {
      fail({ ...where, url: next }, 'month-no-js',
        `the "next" link shows the same month: ${JSON.stringify(grid.label)} at ${r.url()}, ${JSON.stringify(grid2.label)} at ${page.url()}`);
    }
    if (!grid2.tables.some((n) => n === 7)) {
      fail({ ...where, url: next }, 'month-no-js', `the next month has no <table> with 7 column headers (${JSON.stringify(grid2.tables)})`);
    }
  });
}

/** In the page: every table's count of column headers, and the month's label. */
function monthGrid() {
  const tables = [...document.querySelectorAll('table')].map((t) => {
    const head = t.tHead?.rows[0] ?? t.rows[0];
    return head ? head.querySelectorAll('th').length : 0;
  });
  const text = (el) => (el ? el.textContent.replace(/\s+/g, ' ').trim() : '');
  const label = text(document.querySelector('table caption')) || text(document.querySelector('h1')) || document.title;
  return { tables, label };
}

/**
 * Tabbing through the month view: visible focus everywhere, and the navigation is reachable. When
 * the current month has no "+ N more" link, the next months (up to 6, following rel=next) are
 * searched for one and that month is tabbed through too, so that the link is checked whenever the
 * calendar has one.
 */
async function monthKeyboard(browser, cfg) {
  const url = cfg.url('/events/month/');
  await check(browser, cfg, 'month-keyboard', url, { timeout: Math.max(cfg.pageTimeout, 90000) }, async (context, where, info, fail) => {
    const page = await context.newPage();
    info.months = [];
    let sawMore = await tabThrough(page, url, { ...where, url }, info, fail);
    // The page is still the current month: walk on with its "next" links.
    for (let i = 0; !sawMore && i < 6; i++) {
      const next = await page.evaluate(() => document.querySelector('a[rel~=next]')?.href ?? null);
      if (!next || (await page.goto(next, { waitUntil: 'load' }))?.status() !== 200) break;
      if (await page.evaluate(() => document.querySelectorAll('a.more').length)) {
        sawMore = await tabThrough(page, next, { ...where, url: next }, info, fail);
      }
    }
    info.more_link_checked = sawMore;
  });
}

/** Tabs through `url` from the top (up to 400 presses); true when the page had an a.more. */
async function tabThrough(page, url, where, info, fail) {
  await page.goto(url, { waitUntil: 'load' });
  await settle(page);
  const want = await page.evaluate(() => ({
    prev: document.querySelectorAll('a[rel~=prev]').length,
    next: document.querySelectorAll('a[rel~=next]').length,
    more: document.querySelectorAll('a.more').length,
  }));
  const seen = new Map(); // id → element description
  const invisible = [];
  let presses = 0;
  let first = null;
  while (presses < 400) {
    await page.keyboard.press('Tab');
    presses++;
    const el = await page.evaluate(describeFocus);
    if (!el) {
      if (seen.size) break; // back to the document: went round once
      continue;
    }
    // Back at the first element: went round once. (The same element twice in a row is not a
    // wrap: Tab walks through the fields of a date input, for one.)
    if (first === null) first = el.id;
    else if (el.id === first && seen.size > 1) break;
    if (seen.has(el.id)) continue;
    seen.set(el.id, el);
    if (!el.visibleFocus) invisible.push(el);
  }
  info.months.push({ url, on_page: want, tab_presses: presses, focused: seen.size });
  if (seen.size === 0) fail(where, 'keyboard-reach', 'Tab never focused anything');
  if (invisible.length) {
    fail(where, 'focus-visible',
      `${invisible.length} of ${seen.size} elements reached with Tab show no focus indicator (outline or box-shadow)`,
      { nodes: invisible.map((e) => ({ target: [e.selector], html: e.html, summary: e.style })) });
  }
  const reached = [...seen.values()];
  const missing = [];
  if (!reached.some((e) => e.prev)) missing.push(`the "previous" link a[rel=prev] (${want.prev} on the page)`);
  if (!reached.some((e) => e.next)) missing.push(`the "next" link a[rel=next] (${want.next} on the page)`);
  if (want.more > 0 && !reached.some((e) => e.more)) missing.push(`a "+ N more" link a.more (${want.more} on the page)`);
  if (missing.length) {
    fail(where, 'keyboard-reach', `Tab (${presses} presses, ${seen.size} elements) never reached ${missing.join('; ')}`);
  }
  return want.more > 0;
}

/** In the page: the focused element (null for none/body), with a stable id and its focus style. */
function describeFocus() {
  let el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const w = (window.__focusIds ??= { map: new WeakMap(), n: 0 });
  if (!w.map.has(el)) w.map.set(el, w.n++);
  const cs = getComputedStyle(el);
  const transparent = (c) => /^transparent$|rgba\([^)]*,\s*0\)$/.test(c.trim());
  const outline = cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0 && !transparent(cs.outlineColor);
  const shadow = cs.boxShadow && cs.boxShadow !== 'none';
  const parts = [];
  for (let e = el; e && e.nodeType === 1 && parts.length < 4; e = e.parentElement) {
    let s = e.localName;
    if (e.id) { parts.unshift(`${s}#${e.id}`); break; }
    if (e.classList.length) s += '.' + [...e.classList].join('.');
    if (e.getAttribute('rel')) s += `[rel=${e.getAttribute('rel')}]`;
    parts.unshift(s);
  }
  const rel = (el.getAttribute('rel') || '').split(/\s+/);
  return {
    id: w.map.get(el),
    selector: parts.join(' > '),
    html: el.outerHTML.slice(0, 300),
    style: `outline: ${cs.outlineStyle} ${cs.outlineWidth} ${cs.outlineColor}; box-shadow: ${cs.boxShadow}`,
    visibleFocus: outline || shadow,
    prev: el.matches('a') && rel.includes('prev'),
    next: el.matches('a') && rel.includes('next'),
    more: el.matches('a.more'),
  };
}

/** The list view's subscribe links, and the feed they point to. */
async function subscribeLinks(browser, cfg) {
  const url = cfg.url('/events/');
  await check(browser, cfg, 'subscribe', url, {}, async (context, where, info, fail) => {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    const hrefs = await page.evaluate(() =>
      [...document.querySelectorAll('[data-subscribe] a[href]')].map((a) => a.href));
    info.hrefs = hrefs;
    if (!(await page.evaluate(() => !!document.querySelector('[data-subscribe]')))) {
      fail(where, 'subscribe-links', 'no element with [data-subscribe]');
      return;
    }
    const host = (h) => {
      try { return new URL(h).hostname; } catch { return ''; }
    };
    const isThirdParty = (h) => /(^|\.)(google\.com|live\.com|office\.com)$/.test(host(h));
    const webcal = hrefs.find((h) => /^webcal:\/\//i.test(h));
    const google = hrefs.find((h) => h.includes('calendar.google.com'));
    const outlook = hrefs.find((h) => h.includes('outlook.live.com') || h.includes('outlook.office.com'));
    const feeds = hrefs.filter((h) => !isThirdParty(h) && (/\.ics$/i.test(h.split(/[?#]/)[0]) || h.includes('/events.ics')));
    const missing = [];
    if (!webcal) missing.push('a webcal:// link');
    if (!google) missing.push('a calendar.google.com link');
    if (!outlook) missing.push('an outlook.live.com or outlook.office.com link');
    if (!feeds.length) missing.push('a link to the .ics feed');
    if (missing.length) {
      fail(where, 'subscribe-links', `[data-subscribe] lacks ${missing.join(', ')}; its links: ${JSON.stringify(hrefs)}`);
    }
    if (!feeds.length) return;
    const feed = feeds.find((h) => /^https?:/i.test(h)) ?? feeds[0];
    const fetched = feed.replace(/^webcal:/i, 'http:');
    info.feed = fetched;
    if (originOf(fetched) !== cfg.origin) {
      fail(where, 'subscribe-ics', `the feed link ${feed} is not on ${cfg.origin}`);
      return;
    }
    const r = await fetchHead(fetched);
    info.feed_status = r.status;
    info.feed_content_type = r.headers.get('content-type');
    if (r.status !== 200 || !/^text\/calendar\b/i.test(r.headers.get('content-type') ?? '')) {
      fail({ ...where, url: fetched }, 'subscribe-ics',
        `the feed ${fetched} answered ${r.status} ${JSON.stringify(r.headers.get('content-type'))}, expected 200 text/calendar`);
    }
  });
}

/** Serves the pages that embed the calendar (and try to frame a page that must refuse it). */
function startEmbedHost(cfg) {
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const pages = {
    '/': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Embedding host</title></head>
<body><h1>Our events</h1>
<div data-almanac-view="month"></div>
<div data-almanac-view="list" data-categories="${esc(cfg.categorySlug ?? '')}"></div>
<script src="${esc(cfg.origin)}/assets/embed.js" defer></script>
</body></html>`,
    '/framed': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Framing host</title></head>
<body><h1>Framing a page that is not for embedding</h1>
<iframe id="framed" title="Month" src="${esc(cfg.url('/events/month/'))}" style="width:100%;height:600px"></iframe>
</body></html>`,
  };
  const server = http.createServer((req, res) => {
    const body = pages[req.url.split('?')[0]];
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body ?? 'not found');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.embedHostPort, '127.0.0.1', () => resolve(server));
  });
}

/** The embed script on another origin, and frame-ancestors on the pages. */
async function embedding(browser, cfg) {
  const hostOrigin = `http://127.0.0.1:${cfg.embedHostPort}`;
  const embedPrefix = cfg.origin + '/embed/';
  const opts = { alsoAllowed: [hostOrigin], timeout: Math.max(cfg.pageTimeout, 40000) };

  // Headers first: these need no browser.
  await check(browser, cfg, 'frame-ancestors', cfg.url('/events/month/'), {}, async (_context, where, info, fail) => {
    for (const [p, wanted] of [['/events/month/', "'self'"], ['/embed/events/month/', hostOrigin]]) {
      const u = cfg.url(p);
      const r = await fetchHead(u);
      const csp = r.headers.get('content-security-policy');
      info[p] = { status: r.status, csp };
      const sources = parseCsp(csp)['frame-ancestors'];
      if (r.status !== 200) fail({ ...where, url: u }, 'frame-ancestors', `${p} answered ${r.status}, expected 200`);
      if (!sources) {
        fail({ ...where, url: u }, 'frame-ancestors', `${p}: no frame-ancestors in content-security-policy ${JSON.stringify(csp)}`);
      } else if (!sources.map((s) => s.replace(/\/$/, '').toLowerCase()).includes(wanted.toLowerCase())) {
        fail({ ...where, url: u }, 'frame-ancestors',
          `${p}: frame-ancestors ${JSON.stringify(sources.join(' '))} does not list ${wanted}`);
      }
      if (p === '/events/month/' && sources && sources.some((s) => s !== "'self'")) {
        fail({ ...where, url: u }, 'frame-ancestors', `${p} may be framed by others than itself: frame-ancestors ${sources.join(' ')}`);
      }
    }
  });

  let server;
  try {
    server = await startEmbedHost(cfg);
  } catch (e) {
    fail({ page: 'check/embed', url: hostOrigin }, 'embed', `cannot serve the embedding page on ${hostOrigin}: ${errText(e)}`);
    return;
  }
  try {
    await check(browser, cfg, 'embed', hostOrigin + '/', opts, async (context, where, info, fail) => {
      const page = await context.newPage();
      await page.goto(hostOrigin + '/', { waitUntil: 'load' });
      const ok = await page
        .waitForFunction((prefix) => [...document.querySelectorAll('iframe')].filter((f) => f.src.startsWith(prefix)).length >= 2,
          embedPrefix, { timeout: 10000 })
        .then(() => true, () => false);
      const srcs = await page.evaluate(() => [...document.querySelectorAll('iframe')].map((f) => f.src));
      info.iframes = srcs;
      if (!ok) {
        fail(where, 'embed-iframes', `expected 2 iframes whose src starts with ${embedPrefix}, found ${JSON.stringify(srcs)}`);
        if (!srcs.length) return;
      }
      if (cfg.categorySlug && !srcs.some((s) => s.includes(cfg.categorySlug))) {
        fail(where, 'embed-iframes', `no iframe carries the list's category ${JSON.stringify(cfg.categorySlug)}: ${JSON.stringify(srcs)}`);
      }
      const frames = await page.$$('iframe');
      info.frames = [];
      for (const [i, handle] of frames.entries()) {
        const src = srcs[i];
        const frame = await handle.contentFrame();
        await frame?.waitForLoadState('load', { timeout: 10000 }).catch(() => {});
        const height = await page
          .waitForFunction((el) => el.getBoundingClientRect().height > 100, handle, { timeout: 5000 })
          .then(() => true, () => false)
          .then(() => handle.evaluate((el) => el.getBoundingClientRect().height));
        const furl = frame ? frame.url() : null;
        const content = frame ? await frame.evaluate(() => document.body?.innerText.trim().length ?? 0).catch(() => 0) : 0;
        info.frames.push({ src, url: furl, height, content });
        const fwhere = { ...where, url: src };
        if (!furl || !furl.startsWith(embedPrefix)) {
          fail(fwhere, 'embed-frame-load', `iframe ${i + 1} (${src}) did not load a page under ${embedPrefix}: its document is ${furl}`);
        } else if (!content) {
          fail(fwhere, 'embed-frame-load', `iframe ${i + 1} (${src}) shows an empty document`);
        }
        if (!(height > 100)) fail(fwhere, 'embed-height', `iframe ${i + 1} (${src}) is ${height} px high, expected more than 100`);
      }
    });

    await check(browser, cfg, 'frame-refused', hostOrigin + '/framed', opts, async (context, where, info, fail) => {
      const page = await context.newPage();
      const refusals = [];
      page.on('console', (m) => {
        if (/Refused to frame|frame-ancestors/i.test(m.text())) refusals.push(m.text());
      });
      await page.goto(hostOrigin + '/framed', { waitUntil: 'load' });
      await settle(page);
      const frame = await (await page.$('#framed'))?.contentFrame();
      const furl = frame ? frame.url() : null;
      // A refused frame shows Chromium's error page: nothing of the calendar is in it.
      const content = frame
        ? await frame.evaluate(() => ({
            origin: location.origin,
            tables: document.querySelectorAll('table').length,
            text: document.body?.innerText.trim().slice(0, 80) ?? '',
          })).catch((e) => ({ error: errText(e) }))
        : null;
      info.frame_url = furl;
      info.frame_content = content;
      info.console = refusals;
      // Refused: Chromium says so on the console and shows its error page in the frame.
      const shown = content && content.origin === cfg.origin;
      const refused = !shown && (refusals.length > 0 || (furl ?? '').startsWith('chrome-error:'));
      if (!refused) {
        fail(where, 'frame-refused',
          `${cfg.url('/events/month/')} inside a frame on ${hostOrigin} was not refused (frame document ${furl}, ${JSON.stringify(content)})`);
      }
    });
  } finally {
    await new Promise((r) => server.close(r));
    server.closeAllConnections?.();
  }
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main() {
  let cfg;
  try {
    const raw = JSON.parse(await readStdin());
    const base = new URL(raw.base);
    cfg = {
      raw,
      origin: base.origin,
      base: raw.base.replace(/\/+$/, ''),
      url: (p) => new URL(p, base.origin + '/').href,
      screenshots: path.resolve(raw.screenshots ?? 'screenshots'),
      pages: raw.pages ?? [],
      widths: raw.widths ?? [1280, 390],
      pageTimeout: raw.page_timeout_ms ?? 20000,
      concurrency: raw.concurrency ?? 3,
      embedHostPort: raw.embed_host_port ?? null,
      categorySlug: raw.category_slug ?? null,
      chromium: raw.chromium ?? '/usr/bin/chromium',
    };
    report.base = cfg.base;
    if (!Array.isArray(cfg.pages) || !cfg.pages.length) throw new Error('"pages" is empty');
    for (const p of cfg.pages) {
      if (!p.lang || !p.name || !p.url) throw new Error(`a page lacks lang, name or url: ${JSON.stringify(p)}`);
      p.url = new URL(p.url, base.origin + '/').href;
    }
    await fs.mkdir(cfg.screenshots, { recursive: true });
  } catch (e) {
    fail({ page: 'config' }, 'config', `unusable configuration on stdin: ${errText(e)}`);
    return finish(2);
  }

  let browser;
  try {
    browser = await chromium.launch({ executablePath: cfg.chromium, args: CHROMIUM_ARGS, timeout: 60000 });
    report.browser = `Chromium ${browser.version()}`;
    log(`${report.browser}; ${cfg.pages.length} pages × ${cfg.widths.length} widths at ${cfg.base}`);
  } catch (e) {
    fail({ page: 'browser' }, 'browser-launch', `cannot start ${cfg.chromium}: ${errText(e)}`);
    return finish(2);
  }

  try {
    const tasks = [];
    for (const p of cfg.pages) for (const w of cfg.widths) tasks.push(() => checkPage(browser, cfg, p, w));
    tasks.push(() => monthWithoutJs(browser, cfg));
    tasks.push(() => monthKeyboard(browser, cfg));
    tasks.push(() => subscribeLinks(browser, cfg));
    await pool(cfg.concurrency, tasks);
    if (cfg.embedHostPort) {
      await embedding(browser, cfg);
    } else {
      fail({ page: 'check/embed' }, 'embed', 'no "embed_host_port" in the configuration: the embedding was not checked');
    }
  } catch (e) {
    fail({ page: 'harness' }, 'harness', `check.mjs itself failed: ${e && e.stack ? clip(e.stack, 1500) : errText(e)}`);
  } finally {
    await browser.close().catch(() => {});
  }
  finish(0);
}

await main();
