// End-to-end test of almanac's editors' pages (/manage/) in the system's headless Chromium; run by
// tests/manage_browser.rs, which starts `almanac serve --demo` with an administrator and passes
// the configuration as JSON on stdin:
//
//   {"base": "http://127.0.0.1:PORT",     // the server (no trailing slash needed)
//    "user": "admin", "password": "…",     // an administrator (also used for the API, Basic auth)
//    "chromium": "/usr/bin/chromium",      // optional
//    "screenshots": "/abs/dir",            // full-page PNGs of the filled forms go here
//    "flow_timeout_ms": 180000}            // optional: the budget of one flow
//
// It prints one JSON report on stdout (nothing else goes to stdout; progress goes to stderr):
//
//   {"ok": bool, "browser": "…", "base": "…", "word": "…",
//    "steps":    [{"flow", "name", "ok", "info"}],
//    "failures": [{"flow", "step", "rule", "message", "url", "nodes": [{"target", "html", "summary"}]}],
//    "screenshots": ["/abs/dir/manage-….png", …]}
//
// Exit status: 0 when there is no failure, 1 when there are failures, 2 when the configuration is
// unusable or the browser does not start (a report with the reason is still printed).
//
// Two flows, each on its own browser context (its own cookies) and time budget:
//
//   mouse     sign in; "New event"; fill the title (with a unique word), the start and end
//             (page.fill on the datetime-local fields), a new venue and a new category, status
//             Published; Save → "Saved."; "View its page" shows the title; the public month view
//             of June 2027 shows it; the JSON API lists it with the venue and category; the
//             dashboard's search finds it, its title leads to its form, a new title is saved;
//             the bulk form moves it to the trash (the API: 403 event-no-longer-available, and
//             listed under status=trash) and restores it (filtered by status Trash; the API:
//             published again).
//   keyboard  the same sign-in and a new event with page.keyboard alone (Tab, Shift+Tab, typing,
//             Enter, Space, ArrowDown): no clicks, no fill, no element.focus(). After every Tab
//             the focused element must show a focus indicator (outline or box-shadow), as
//             check.mjs's month-keyboard check requires. The API then has the event with its
//             title, dates and status.
//
// A step that fails ends its flow (the later steps depend on it); the checks that need not stop
// it (focus indicators, requests to other origins, broken subresources, CSP violations, uncaught
// exceptions) are recorded and the flow goes on. Requests to other origins than base are aborted.
// Failure rules ("rule" in the report): step (the step threw: what it expected did not happen),
// api, focus-visible, keyboard-reach, foreign-request, broken-subresource, http-status,
// csp-violation, page-error, screenshot, timeout, config, browser-launch, harness.

import { chromium } from 'playwright-core';
import fs from 'node:fs/promises';
import path from 'node:path';

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
const NS = '/cal/events/v1';
const MAX_NODES = 10;
const HTML_CHARS = 300;
/** Tab presses allowed to reach one element (the event form has about 150 stops). */
const MAX_TABS = 400;

const log = (...a) => console.error('[manage]', ...a);

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const report = { ok: false, browser: null, base: null, word: null, steps: [], failures: [], screenshots: [] };

function failure(flow, step, rule, message, { url = null, nodes = [] } = {}) {
  report.failures.push({
    flow,
    step,
    rule,
    message: String(message),
    url,
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
  return clip((e && (e.message || String(e))) || 'unknown error', 800);
}

function finish(code) {
  report.ok = code === 0 && report.failures.length === 0;
  process.stdout.write(JSON.stringify(report, null, 1) + '\n');
  process.exitCode = code !== 0 ? code : report.failures.length ? 1 : 0;
}

/** A step's expectation that did not hold: ends the step (and its flow) with this message. */
class Expectation extends Error {}

function expect(cond, message) {
  if (!cond) throw new Expectation(message);
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
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

/** A word only this run's events carry: `zq` and twelve random consonants (as tests/common). */
function uniqueWord() {
  const consonants = 'bcdfghjkmnpqrstvwxz';
  let w = 'zq';
  for (let i = 0; i < 12; i++) w += consonants[Math.floor(Math.random() * consonants.length)];
  return w;
}

/**
 * One flow: a browser context whose requests to other origins are aborted and recorded, whose
 * broken subresources, error statuses of documents, CSP violations and uncaught exceptions are
 * recorded as failures; `steps` run in order until one fails.
 */
class Flow {
  constructor(browser, cfg, name) {
    this.browser = browser;
    this.cfg = cfg;
    this.name = name;
    this.current = null; // the running step's name
    this.stopped = false; // the flow's deadline passed
  }

  fail(rule, message, extra = {}) {
    if (this.stopped) return;
    failure(this.name, this.current ?? '(flow)', rule, message, { url: this.page?.url() ?? null, ...extra });
  }

  async open() {
    const cfg = this.cfg;
    this.context = await this.browser.newContext({
      viewport: { width: 1280, height: HEIGHT },
      // The datetime-local fields follow the locale: en-US shows mm/dd/yyyy, hh:mm AM/PM.
      locale: 'en-US',
      timezoneId: 'UTC',
      serviceWorkers: 'block',
    });
    this.context.setDefaultTimeout(15000);
    this.context.setDefaultNavigationTimeout(15000);
    const isForeign = (u) => !isLocalScheme(u) && originOf(u) !== cfg.origin;
    await this.context.route(
      (u) => isForeign(u.href),
      (route) => route.abort('blockedbyclient').catch(() => {}),
    );
    this.context.on('request', (req) => {
      if (isForeign(req.url())) this.fail('foreign-request', `a request to another origin than ${cfg.origin}: ${req.resourceType()} ${req.url()}`);
    });
    this.context.on('response', (r) => {
      const req = r.request();
      if (r.status() < 400 || originOf(r.url()) !== cfg.origin) return;
      if (req.resourceType() === 'document') {
        this.fail('http-status', `${req.method()} ${r.url()} answered ${r.status()}`);
      } else if (new URL(r.url()).pathname !== '/favicon.ico') {
        this.fail('broken-subresource', `${req.resourceType()} ${r.url()} answered ${r.status()}`);
      }
    });
    this.page = await this.context.newPage();
    this.page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) this.fail('csp-violation', m.text());
    });
    this.page.on('pageerror', (e) => this.fail('page-error', `uncaught exception: ${errText(e)}`));
  }

  async close() {
    await this.context?.close().catch(() => {});
  }

  /** Runs the steps in order within the flow's deadline; a failing step ends the flow. */
  async run(steps) {
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the flow did not finish within ${this.cfg.flowTimeout / 1000} s`)), this.cfg.flowTimeout);
    });
    let next = 0; // the index of the next step
    const skipRest = (why) => {
      for (const [skipped] of steps.slice(next)) {
        report.steps.push({ flow: this.name, name: skipped, ok: false, info: { skipped: why } });
      }
      next = steps.length;
    };
    const work = (async () => {
      while (next < steps.length) {
        const [name, fn] = steps[next++];
        if (this.stopped) return;
        const entry = { flow: this.name, name, ok: false, info: {} };
        report.steps.push(entry);
        this.current = name;
        const before = report.failures.length;
        const started = Date.now();
        try {
          await fn(entry.info);
        } catch (e) {
          if (this.stopped) return;
          this.fail(e instanceof ApiError ? 'api' : 'step', `${name}: ${e instanceof Expectation || e instanceof ApiError ? e.message : errText(e)}`);
          entry.info.seconds = (Date.now() - started) / 1000;
          log(`FAIL ${this.name}: ${name}`);
          skipRest(`an earlier step (${name}) failed`);
          return;
        }
        entry.info.seconds = (Date.now() - started) / 1000;
        entry.ok = report.failures.length === before;
        log(`${entry.ok ? 'ok  ' : 'FAIL'} ${this.name}: ${name}`);
      }
    })();
    try {
      await Promise.race([work, deadline]);
    } catch (e) {
      this.fail('timeout', `${this.current ?? '(flow)'}: ${errText(e)}`);
      this.stopped = true;
      skipRest(`the flow ran out of time in the step ${this.current}`);
      work.catch(() => {});
    } finally {
      clearTimeout(timer);
      await this.close();
    }
  }

  /** Runs `action` (which makes the page load another document) and waits for that load. */
  async navigates(action) {
    const loaded = this.page.waitForEvent('load');
    await action();
    await loaded;
  }

  async screenshot(file) {
    const full = path.join(this.cfg.screenshots, file);
    try {
      await this.page.screenshot({ path: full, fullPage: true, timeout: 10000 });
      report.screenshots.push(full);
      return full;
    } catch (e) {
      this.fail('screenshot', `no screenshot ${full}: ${errText(e)}`);
      return null;
    }
  }
}

class ApiError extends Error {}

/** A request to the JSON API: `{status, body}` (body parsed when JSON). */
async function api(cfg, method, p, { auth = false, body } = {}) {
  const headers = { accept: 'application/json' };
  if (auth) headers.authorization = 'Basic ' + Buffer.from(`${cfg.user}:${cfg.password}`).toString('base64');
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(cfg.base + NS + p, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: 'manual',
    signal: AbortSignal.timeout(15000),
  });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, body: json, text };
}

function apiExpect(cond, what, r) {
  if (!cond) throw new ApiError(`${what}; the API answered ${r.status} ${clip(r.text, 600)}`);
}

/** The events of `GET /events?query` (with Basic auth when `auth`), asserting a 200. */
async function apiList(cfg, query, auth = false) {
  const r = await api(cfg, 'GET', `/events?${query}`, { auth });
  apiExpect(r.status === 200 && Array.isArray(r.body?.events), `GET ${NS}/events?${query} should list events`, r);
  return r.body.events;
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
    parts.unshift(s);
  }
  const label = el.labels?.[0]?.textContent ?? el.getAttribute('aria-label') ?? el.textContent ?? '';
  // The focus is inside the element's own (closed) shadow tree, as on the calendar button of a
  // date field: the element matches :focus-within but not :focus (nor :focus-visible).
  const inside = el.matches(':focus-within') && !el.matches(':focus');
  return {
    id: w.map.get(el),
    selector: parts.join(' > '),
    tag: el.localName,
    type: el.getAttribute('type'),
    name: el.getAttribute('name'),
    elementId: el.id || null,
    label: label.replace(/\s+/g, ' ').trim().slice(0, 80),
    html: el.outerHTML.slice(0, 300),
    style: `outline: ${cs.outlineStyle} ${cs.outlineWidth} ${cs.outlineColor}; box-shadow: ${cs.boxShadow}` +
      (inside ? '; the focus is inside the element (its calendar button): it matches :focus-within, not :focus or :focus-visible' : ''),
    visibleFocus: outline || shadow,
  };
}

/**
 * Keyboard navigation of one flow: every Tab (or Shift+Tab) is followed by a check that the
 * focused element shows a focus indicator; each element without one is reported once.
 */
class Keyboard {
  constructor(flow) {
    this.flow = flow;
    this.page = flow.page;
    this.presses = 0;
    this.reported = new Set(); // selectors reported without a focus indicator
  }

  /** Presses Tab (Shift+Tab when `back`) once; returns the focused element's description. */
  async tab(back = false) {
    await this.page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    this.presses++;
    const el = await this.page.evaluate(describeFocus);
    if (el && !el.visibleFocus && !this.reported.has(`${this.page.url()} ${el.selector}`)) {
      this.reported.add(`${this.page.url()} ${el.selector}`);
      this.flow.fail('focus-visible', `${el.selector} (${el.label || el.tag}) shows no focus indicator (outline or box-shadow) when reached with ${back ? 'Shift+Tab' : 'Tab'}`,
        { nodes: [{ target: [el.selector], html: el.html, summary: el.style }] });
    }
    return el;
  }

  /**
   * Tabs until the focused element matches the CSS `selector` (checked in the page); returns
   * the number of presses. Fails the step when it is not reached within MAX_TABS presses or
   * when Tab goes round the page without reaching it.
   */
  async tabTo(selector, what, { back = false } = {}) {
    const seen = [];
    for (let i = 1; i <= MAX_TABS; i++) {
      const el = await this.tab(back);
      const on = await this.page.evaluate((s) => !!document.activeElement?.matches(s), selector);
      if (on) return i;
      if (el && !seen.some((e) => e.id === el.id)) seen.push(el);
      // Back at the first element: went round the page.
      if (el && seen.length > 1 && el.id === seen[0].id && seen.at(-1).id !== el.id) break;
      if (!el && seen.length > 1) break;
    }
    throw new Expectation(`${back ? 'Shift+Tab' : 'Tab'} never reached ${what} (${selector}) on ${this.page.url()}; ` +
      `it went through ${seen.length} elements: ${seen.map((e) => e.label ? `${e.selector} "${e.label}"` : e.selector).slice(0, 60).join(', ')}`);
  }

  /** The focused element must match `selector` (after a Tab that should land there). */
  async expectFocus(selector, what) {
    const el = await this.page.evaluate(describeFocus);
    const on = await this.page.evaluate((s) => !!document.activeElement?.matches(s), selector);
    expect(on, `the focus should be on ${what} (${selector}), it is on ${el ? el.selector : 'nothing'}`);
  }
}

/** The value of a form field (read from the DOM). */
function fieldValue(page, selector) {
  return page.locator(selector).inputValue();
}

/** The text of the page's notices (p.notice) and alerts. */
async function notices(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.notice, [role=alert], [role=status]')].map((n) => n.textContent.replace(/\s+/g, ' ').trim()));
}

/** The errors the event form shows (after a refused Save), for failure messages. */
async function formErrors(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.error')].map((n) => `${n.id || n.localName}: ${n.textContent.replace(/\s+/g, ' ').trim()}`));
}

/** The id of the event whose form is at `url` (/manage/events/{id}). */
function eventIdOf(url) {
  const m = new URL(url).pathname.match(/\/manage\/events\/(\d+)$/);
  return m ? Number(m[1]) : null;
}

// ---------------------------------------------------------------------------------------------
// The mouse flow
// ---------------------------------------------------------------------------------------------

async function mouseFlow(browser, cfg) {
  const flow = new Flow(browser, cfg, 'mouse');
  const word = cfg.word;
  const title = `Rooftop choir ${word}`;
  const renamed = `Rooftop choir moved ${word}`;
  const venue = `Venue ${word}`;
  const category = `Category ${word}`;
  let id = null;
  let page;

  /** On the dashboard: shows the events the search finds (status "" = all but the trash). */
  const filter = async (status, info) => {
    await flow.navigates(() => page.goto(cfg.base + '/manage/'));
    await page.getByLabel('Status', { exact: true }).selectOption(status);
    await page.getByLabel('Search', { exact: true }).fill(word);
    await flow.navigates(() => page.getByRole('button', { name: 'Filter', exact: true }).click());
    info.dashboard = page.url();
    const url = new URL(page.url());
    expect(url.searchParams.get('s') === word, `the filter should search for ${word}: the dashboard is ${page.url()}`);
  };

  /** Selects the event's row, chooses `action` in the bulk form and applies it. */
  const bulk = async (label, currentTitle, info) => {
    const box = page.getByLabel(`Select ${currentTitle}`, { exact: true });
    expect((await box.count()) === 1,
      `the dashboard (${page.url()}) should have one checkbox labelled "Select ${currentTitle}", it has ${await box.count()}`);
    await box.check();
    await page.getByLabel('With those selected', { exact: true }).selectOption({ label });
    await flow.navigates(() => page.getByRole('button', { name: 'Apply', exact: true }).click());
    info.after = page.url();
    const shown = await notices(page);
    info.notices = shown;
    expect(shown.some((n) => n.includes('Done for 1 events')),
      `after "${label}" the dashboard should say "Done for 1 events.", it says ${JSON.stringify(shown)} (${page.url()})`);
  };

  await flow.open();
  page = flow.page;
  await flow.run([
    ['sign in', async (info) => {
      await flow.navigates(() => page.goto(cfg.base + '/manage/'));
      await page.getByLabel('User name', { exact: true }).fill(cfg.user);
      await page.getByLabel('Password', { exact: true }).fill(cfg.password);
      await flow.navigates(() => page.getByRole('button', { name: 'Sign in', exact: true }).click());
      info.url = page.url();
      const h1 = await page.locator('h1').first().textContent();
      expect(h1?.trim() === 'Events', `after signing in, the page's h1 should be "Events", it is ${JSON.stringify(h1)} (${page.url()}; ${JSON.stringify(await notices(page))})`);
      expect(await page.getByText(`Signed in as ${cfg.user}`).count() === 1, `the dashboard should say "Signed in as ${cfg.user}"`);
    }],
    ['new event form', async (info) => {
      await flow.navigates(() => page.getByRole('link', { name: 'New event', exact: true }).click());
      info.url = page.url();
      expect(new URL(page.url()).pathname === '/manage/events/new', `"New event" should lead to /manage/events/new, it led to ${page.url()}`);
      const h1 = await page.locator('h1').first().textContent();
      expect(h1?.trim() === 'New event', `the form's h1 should be "New event", it is ${JSON.stringify(h1)}`);
    }],
    ['fill and save', async (info) => {
      await page.getByLabel('Title', { exact: true }).fill(title);
      await page.getByLabel('Starts', { exact: true }).fill('2027-06-10T19:00');
      await page.getByLabel('Ends', { exact: true }).fill('2027-06-10T21:00');
      await page.getByLabel('Or a new venue, by name', { exact: true }).fill(venue);
      await page.getByLabel('New categories (separated by commas)', { exact: true }).fill(category);
      await page.getByLabel('Status', { exact: true }).selectOption({ label: 'Published' });
      info.values = {
        title: await fieldValue(page, '#title'),
        start_date: await fieldValue(page, '#start_date'),
        end_date: await fieldValue(page, '#end_date'),
        new_venue: await fieldValue(page, '#new_venue'),
        new_categories: await fieldValue(page, '#new_categories'),
        status: await fieldValue(page, '#status'),
      };
      info.screenshot = await flow.screenshot('manage-mouse-new-event.png');
      await flow.navigates(() => page.getByRole('button', { name: 'Save', exact: true }).click());
      info.url = page.url();
      id = eventIdOf(page.url());
      const shown = await notices(page);
      expect(id !== null && new URL(page.url()).searchParams.get('saved') === '1',
        `Save should lead to /manage/events/{id}?saved=1, it led to ${page.url()}; the page says ${JSON.stringify(shown)}; field errors: ${JSON.stringify(await formErrors(page))}`);
      info.id = id;
      expect(shown.some((n) => n.startsWith('Saved.')), `the saved form should say "Saved.", it says ${JSON.stringify(shown)}`);
      expect((await fieldValue(page, '#title')) === title, `the saved form's title should be ${JSON.stringify(title)}`);
    }],
    ['view its page', async (info) => {
      await flow.navigates(() => page.getByRole('link', { name: 'View its page', exact: true }).click());
      info.url = page.url();
      const h1 = (await page.locator('h1').first().textContent())?.replace(/\s+/g, ' ').trim();
      info.h1 = h1;
      expect(h1 === title, `the event's page (${page.url()}) should have the h1 ${JSON.stringify(title)}, it has ${JSON.stringify(h1)}`);
      const text = await page.locator('main').innerText();
      expect(text.includes(venue), `the event's page should name the venue ${JSON.stringify(venue)}`);
      expect(text.includes(category), `the event's page should name the category ${JSON.stringify(category)}`);
    }],
    ['month view of June 2027', async (info) => {
      const url = cfg.base + '/events/month/2027-06/';
      await flow.navigates(() => page.goto(url));
      info.url = page.url();
      const link = page.locator('table.month a', { hasText: title });
      if ((await link.count()) === 0) {
        // The cell shows the day's first events: ours may be behind "+ N more" when the demo
        // calendar has many events on that day; then the day it leads to must show it.
        const more = page.locator('table.month td', { has: page.locator('a[href*="2027-06-10"]') }).locator('a.more');
        expect((await more.count()) === 1,
          `the month view ${url} should show ${JSON.stringify(title)} on June 10 (or a "+ N more" link there); it has neither`);
        info.through_more = await more.getAttribute('href');
        await flow.navigates(() => more.click());
        expect((await page.locator('main a', { hasText: title }).count()) > 0,
          `June 10's "+ N more" link (${page.url()}) should lead to a page showing ${JSON.stringify(title)}`);
      } else {
        info.href = await link.first().getAttribute('href');
        expect(await link.first().isVisible(), `the month view's link to ${JSON.stringify(title)} should be visible`);
      }
    }],
    ['API lists it with its venue and category', async (info) => {
      const events = await apiList(cfg, `search=${word}&start_date=2027-06-01`);
      info.found = events.map((e) => ({ id: e.id, title: e.title, start_date: e.start_date }));
      const e = events.find((x) => x.id === id);
      expect(e, `GET ${NS}/events?search=${word}&start_date=2027-06-01 should list the event ${id}: it lists ${JSON.stringify(info.found)}`);
      expect(events.length === 1, `the search for ${word} should find one event, it finds ${events.length}`);
      const got = {
        title: e.title,
        status: e.status,
        start_date: e.start_date,
        end_date: e.end_date,
        venue: e.venue?.venue ?? null,
        categories: (e.categories ?? []).map((c) => c.name),
      };
      info.event = got;
      const want = { title, status: 'publish', start_date: '2027-06-10 19:00:00', end_date: '2027-06-10 21:00:00', venue };
      for (const [k, v] of Object.entries(want)) {
        expect(got[k] === v, `the API's ${k} of the event ${id} should be ${JSON.stringify(v)}, it is ${JSON.stringify(got[k])}`);
      }
      expect(got.categories.includes(category), `the API's categories of the event ${id} should include ${JSON.stringify(category)}: ${JSON.stringify(got.categories)}`);
    }],
    ['edit it from the dashboard', async (info) => {
      await filter('', info);
      const link = page.locator('table.manage-events a', { hasText: title });
      expect((await link.count()) === 1, `the dashboard searched for ${word} (${page.url()}) should have one link ${JSON.stringify(title)}, it has ${await link.count()}`);
      await flow.navigates(() => link.click());
      info.form = page.url();
      expect(eventIdOf(page.url()) === id, `the title on the dashboard should lead to /manage/events/${id}, it led to ${page.url()}`);
      expect((await fieldValue(page, '#title')) === title, `the edit form's title should be ${JSON.stringify(title)}`);
      expect((await fieldValue(page, '#start_date')) === '2027-06-10T19:00', `the edit form's start should be 2027-06-10T19:00, it is ${await fieldValue(page, '#start_date')}`);
      await page.getByLabel('Title', { exact: true }).fill(renamed);
      await flow.navigates(() => page.getByRole('button', { name: 'Save', exact: true }).click());
      info.saved = page.url();
      const shown = await notices(page);
      expect(eventIdOf(page.url()) === id && new URL(page.url()).searchParams.get('saved') === '1',
        `Save should lead to /manage/events/${id}?saved=1, it led to ${page.url()}; the page says ${JSON.stringify(shown)}; field errors: ${JSON.stringify(await formErrors(page))}`);
      expect(shown.some((n) => n.startsWith('Saved.')), `the saved form should say "Saved.", it says ${JSON.stringify(shown)}`);
      const r = await api(cfg, 'GET', `/events/${id}`);
      apiExpect(r.status === 200 && r.body?.title === renamed, `GET ${NS}/events/${id} should have the title ${JSON.stringify(renamed)}`, r);
      apiExpect(r.body?.venue?.venue === venue, `editing the title should keep the venue ${JSON.stringify(venue)}`, r);
      apiExpect((r.body?.categories ?? []).some((c) => c.name === category), `editing the title should keep the category ${JSON.stringify(category)}`, r);
    }],
    ['trash it with the bulk form', async (info) => {
      await filter('', info);
      await bulk('Move to the trash', renamed, info);
      const r = await api(cfg, 'GET', `/events/${id}`, { auth: true });
      info.get = { status: r.status, code: r.body?.code ?? null };
      apiExpect(r.status === 403 && r.body?.code === 'event-no-longer-available',
        `GET ${NS}/events/${id} (administrator) should answer 403 event-no-longer-available after the trash`, r);
      const trashed = await apiList(cfg, `search=${word}&start_date=2027-06-01&status=trash`, true);
      info.trash_list = trashed.map((e) => ({ id: e.id, status: e.status }));
      expect(trashed.some((e) => e.id === id && e.status === 'trash'),
        `GET ${NS}/events?status=trash (administrator) should list the event ${id} as trash: ${JSON.stringify(info.trash_list)}`);
      const now = await apiList(cfg, `search=${word}&start_date=2027-06-01`);
      expect(!now.some((e) => e.id === id), `the public list should no longer have the event ${id}`);
    }],
    ['restore it with the bulk form', async (info) => {
      await filter('trash', info);
      expect(new URL(page.url()).searchParams.get('status') === 'trash', `the filter should be status=trash: ${page.url()}`);
      await bulk('Restore', renamed, info);
      const r = await api(cfg, 'GET', `/events/${id}`);
      info.get = { status: r.status, event_status: r.body?.status ?? null };
      apiExpect(r.status === 200 && r.body?.status === 'publish', `GET ${NS}/events/${id} should show the event published again after Restore`, r);
      const events = await apiList(cfg, `search=${word}&start_date=2027-06-01`);
      expect(events.some((e) => e.id === id), `the public list should have the event ${id} again`);
    }],
    ['the restored form', async (info) => {
      await flow.navigates(() => page.goto(`${cfg.base}/manage/events/${id}`));
      info.url = page.url();
      expect((await fieldValue(page, '#title')) === renamed, `the form of the event ${id} should hold ${JSON.stringify(renamed)}`);
      expect((await fieldValue(page, '#status')) === 'publish', `the form of the event ${id} should show it Published`);
      info.screenshot = await flow.screenshot('manage-mouse-end.png');
    }],
  ]);
}

// ---------------------------------------------------------------------------------------------
// The keyboard flow
// ---------------------------------------------------------------------------------------------

// Typing into a datetime-local field (Chromium 156, locale en-US): the field shows
// mm/dd/yyyy, hh:mm AM/PM and Tab walks through its parts (month, day, year, hour, minute,
// AM/PM, then the calendar button: seven stops on the one element) before leaving it. Reached
// with Tab, the focus is on the month. Typing two digits fills the month and moves to the day,
// two more the day and move to the year; the year takes four digits and stays there (it could
// take more), so Tab (or ArrowRight) moves on to the hour. Then "0700PM": two digits the hour,
// two the minute, and P sets PM. "07142027", Tab, "0700PM" gives 2027-07-14T19:00. Leaving
// the field takes Tab presses until the next element has the focus (tabTo counts them).
const KEYBOARD_START = { typed: ['07142027', '0700PM'], value: '2027-07-14T19:00', api: '2027-07-14 19:00:00' };
const KEYBOARD_END = { typed: ['07142027', '0930PM'], value: '2027-07-14T21:30', api: '2027-07-14 21:30:00' };

async function keyboardFlow(browser, cfg) {
  const flow = new Flow(browser, cfg, 'keyboard');
  const word = cfg.word;
  const title = `Keyboard lecture ${word}`;
  let id = null;
  let page;
  let kb;

  /** Types a date and a time into the focused datetime-local field, the way KEYBOARD_* says. */
  const typeDateTime = async (spec, selector, info) => {
    const [date, time] = spec.typed;
    await page.keyboard.type(date);
    await kb.tab();
    // Still the same field (its hour part), with its focus indicator (kb.tab checks it).
    await kb.expectFocus(selector, `the hour of ${selector}`);
    await page.keyboard.type(time);
    const value = await fieldValue(page, selector);
    info[selector] = value;
    expect(value === spec.value, `typing ${date}, Tab, ${time} into ${selector} should give ${spec.value}, it gives ${JSON.stringify(value)}`);
  };

  await flow.open();
  page = flow.page;
  kb = new Keyboard(flow);
  await flow.run([
    ['sign in with the keyboard', async (info) => {
      await flow.navigates(() => page.goto(cfg.base + '/manage/'));
      info.tabs_to_name = await kb.tabTo('input#name', 'the user name field');
      await page.keyboard.type(cfg.user);
      await kb.tab();
      await kb.expectFocus('input#password', 'the password field');
      await page.keyboard.type(cfg.password);
      await flow.navigates(() => page.keyboard.press('Enter'));
      info.url = page.url();
      const h1 = await page.locator('h1').first().textContent();
      expect(h1?.trim() === 'Events', `Enter in the password field should sign in and show the dashboard; the h1 is ${JSON.stringify(h1)} (${page.url()}; ${JSON.stringify(await notices(page))})`);
    }],
    ['reach "New event" with the keyboard', async (info) => {
      info.tabs = await kb.tabTo('a[href$="/manage/events/new"]', 'the "New event" link');
      await flow.navigates(() => page.keyboard.press('Enter'));
      info.url = page.url();
      expect(new URL(page.url()).pathname === '/manage/events/new', `Enter on "New event" should open /manage/events/new, it opened ${page.url()}`);
    }],
    ['fill the form with the keyboard', async (info) => {
      info.tabs_to_title = await kb.tabTo('input#title', 'the title field');
      await page.keyboard.type(title);
      expect((await fieldValue(page, '#title')) === title, 'typing into the title field should fill it');
      info.tabs_to_start = await kb.tabTo('input#start_date', 'the start field');
      await typeDateTime(KEYBOARD_START, '#start_date', info);
      info.tabs_to_end = await kb.tabTo('input#end_date', 'the end field');
      await typeDateTime(KEYBOARD_END, '#end_date', info);
      // Shift+Tab goes back through the end field's parts to the start field, and Tab forward
      // again to the end field: the values stay.
      info.shift_tabs_to_start = await kb.tabTo('input#start_date', 'the start field', { back: true });
      info.tabs_back_to_end = await kb.tabTo('input#end_date', 'the end field');
      expect((await fieldValue(page, '#start_date')) === KEYBOARD_START.value && (await fieldValue(page, '#end_date')) === KEYBOARD_END.value,
        `moving through the date fields with Tab and Shift+Tab should not change them: ${await fieldValue(page, '#start_date')}, ${await fieldValue(page, '#end_date')}`);
      // The status: a closed select changes its value with ArrowDown (Chromium on Linux).
      info.tabs_to_status = await kb.tabTo('select#status', 'the status select');
      const statuses = [];
      for (let i = 0; i < 6 && (await fieldValue(page, '#status')) !== 'publish'; i++) {
        await page.keyboard.press('ArrowDown');
        statuses.push(await fieldValue(page, '#status'));
      }
      info.statuses = statuses;
      expect((await fieldValue(page, '#status')) === 'publish', `ArrowDown on the status select should reach Published; it went through ${JSON.stringify(statuses)}`);
      info.values = {
        title: await fieldValue(page, '#title'),
        start_date: await fieldValue(page, '#start_date'),
        end_date: await fieldValue(page, '#end_date'),
        status: await fieldValue(page, '#status'),
      };
      info.screenshot = await flow.screenshot('manage-keyboard-form.png');
    }],
    ['submit with the keyboard', async (info) => {
      info.tabs_to_save = await kb.tabTo('form.event-form button[type=submit]', 'the Save button');
      // Space presses a button as a click does.
      await flow.navigates(() => page.keyboard.press('Space'));
      info.url = page.url();
      id = eventIdOf(page.url());
      const shown = await notices(page);
      expect(id !== null && new URL(page.url()).searchParams.get('saved') === '1',
        `Space on Save should lead to /manage/events/{id}?saved=1, it led to ${page.url()}; the page says ${JSON.stringify(shown)}; field errors: ${JSON.stringify(await formErrors(page))}`);
      info.id = id;
      expect(shown.some((n) => n.startsWith('Saved.')), `the saved form should say "Saved.", it says ${JSON.stringify(shown)}`);
      info.total_tab_presses = kb.presses;
      info.screenshot = await flow.screenshot('manage-keyboard-saved.png');
    }],
    ['the API has the event', async (info) => {
      const r = await api(cfg, 'GET', `/events/${id}`, { auth: true });
      apiExpect(r.status === 200, `GET ${NS}/events/${id} (administrator) should answer 200`, r);
      const got = { title: r.body.title, start_date: r.body.start_date, end_date: r.body.end_date, status: r.body.status };
      info.event = got;
      const want = { title, start_date: KEYBOARD_START.api, end_date: KEYBOARD_END.api, status: 'publish' };
      for (const [k, v] of Object.entries(want)) {
        expect(got[k] === v, `the API's ${k} of the event ${id} should be ${JSON.stringify(v)}, it is ${JSON.stringify(got[k])}`);
      }
      const listed = await apiList(cfg, `search=${word}&start_date=2027-07-01`);
      info.listed = listed.map((e) => ({ id: e.id, title: e.title }));
      expect(listed.some((e) => e.id === id && e.title === title), `GET ${NS}/events?search=${word}&start_date=2027-07-01 should list the event ${id}: ${JSON.stringify(info.listed)}`);
    }],
  ]);
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main() {
  let cfg;
  try {
    const raw = JSON.parse(await readStdin());
    const base = new URL(raw.base);
    for (const k of ['user', 'password']) {
      if (typeof raw[k] !== 'string' || !raw[k]) throw new Error(`no "${k}"`);
    }
    cfg = {
      origin: base.origin,
      base: raw.base.replace(/\/+$/, ''),
      user: raw.user,
      password: raw.password,
      chromium: raw.chromium ?? '/usr/bin/chromium',
      screenshots: path.resolve(raw.screenshots ?? 'screenshots'),
      flowTimeout: raw.flow_timeout_ms ?? 180000,
      word: uniqueWord(),
    };
    report.base = cfg.base;
    report.word = cfg.word;
    await fs.mkdir(cfg.screenshots, { recursive: true });
  } catch (e) {
    failure('config', 'config', 'config', `unusable configuration on stdin: ${errText(e)}`);
    return finish(2);
  }

  let browser;
  try {
    browser = await chromium.launch({ executablePath: cfg.chromium, args: CHROMIUM_ARGS, timeout: 60000 });
    report.browser = `Chromium ${browser.version()}`;
    log(`${report.browser} at ${cfg.base}; the unique word is ${cfg.word}`);
  } catch (e) {
    failure('browser', 'launch', 'browser-launch', `cannot start ${cfg.chromium}: ${errText(e)}`);
    return finish(2);
  }

  // One after the other (the server and the machine are shared with other tests); a flow that
  // breaks down does not stop the other.
  for (const [name, flow] of [['mouse', mouseFlow], ['keyboard', keyboardFlow]]) {
    try {
      await flow(browser, cfg);
    } catch (e) {
      failure(name, 'harness', 'harness', `manage.mjs itself failed in the ${name} flow: ${e && e.stack ? clip(e.stack, 1500) : errText(e)}`);
    }
  }
  await browser.close().catch(() => {});
  finish(0);
}

await main();
