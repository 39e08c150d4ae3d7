// Lighthouse scores of almanac's public HTML pages, in the system's headless Chromium.
//
//   node run.mjs [--runs N] [--out DIR] BASE_URL
//
// BASE_URL is a running almanac with data in it, e.g. `cargo run --release -- serve --demo`
// then `node run.mjs http://127.0.0.1:8080`. Audits three pages: the month view
// (/events/month/), the list view (/events/) and one event page (the first event that
// GET /cal/events/v1/events?per_page=1 returns), each with Lighthouse's mobile (default)
// and desktop presets, in the categories performance, accessibility, best-practices and seo.
// Throttling is Lighthouse's default, simulated: the page loads at full speed and Lighthouse
// estimates the metrics for its slow network and CPU (4x slowdown on mobile) from the trace.
//
// Prints a table of the scores (0-100), then, for every score under 95, the audits of that
// category that did not pass, with the elements or resources they name. Exits 1 if any
// score is under 95 (or missing), 2 on a usage or setup error.
//
// --runs N  audits every page and preset N times and reports the run with the median
//           performance score (Lighthouse's advice for noisy figures); default 3.
// --out DIR writes each reported run's full report as DIR/<page>-<preset>.json and .html.
//
// The browser is /usr/bin/chromium unless CHROME_PATH says otherwise; nothing is downloaded.

import fs from 'node:fs';
import path from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';

const THRESHOLD = 95;
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];
const CHROME_PATH = process.env.CHROME_PATH || '/usr/bin/chromium';
const CHROME_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const PRESETS = [
  { name: 'mobile', config: undefined },
  { name: 'desktop', config: desktopConfig },
];
const MAX_ITEMS = 8;

function usage(message) {
  if (message) console.error(`run.mjs: ${message}`);
  console.error('usage: node run.mjs [--runs N] [--out DIR] BASE_URL');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { runs: 3, out: null, base: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--runs') {
      opts.runs = Number(argv[++i]);
      if (!Number.isInteger(opts.runs) || opts.runs < 1) usage('--runs wants a whole number >= 1');
    } else if (a === '--out') {
      opts.out = argv[++i];
      if (!opts.out) usage('--out wants a directory');
    } else if (a === '-h' || a === '--help') {
      usage();
    } else if (a.startsWith('-')) {
      usage(`unknown option ${a}`);
    } else if (opts.base === null) {
      opts.base = a;
    } else {
      usage(`unexpected argument ${a}`);
    }
  }
  if (!opts.base) usage('no base URL');
  try {
    opts.base = new URL(opts.base);
  } catch {
    usage(`not a URL: ${opts.base}`);
  }
  return opts;
}

// The event page: the URL that the API gives for the first event, on the server under test.
async function eventPageUrl(base) {
  const api = new URL('/cal/events/v1/events?per_page=1', base);
  const res = await fetch(api, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`GET ${api} answered ${res.status}`);
  const body = await res.json();
  const url = body?.events?.[0]?.url;
  if (!url) throw new Error(`GET ${api} listed no event with a url (is there data? try serve --demo)`);
  const found = new URL(url, base);
  if (found.origin !== base.origin) {
    // The server's public base URL may differ from the address used here: keep the path.
    console.error(`note: event url ${found.href} is not on ${base.origin}; auditing its path there`);
    return new URL(found.pathname + found.search, base).href;
  }
  return found.href;
}

async function audit(url, preset) {
  const chrome = await chromeLauncher.launch({
    chromePath: CHROME_PATH,
    chromeFlags: CHROME_FLAGS,
    logLevel: 'silent',
  });
  try {
    const flags = {
      port: chrome.port,
      output: ['json', 'html'],
      logLevel: 'error',
      onlyCategories: CATEGORIES,
    };
    const result = await lighthouse(url, flags, preset.config);
    if (!result) throw new Error(`Lighthouse returned nothing for ${url}`);
    return result;
  } finally {
    await chrome.kill();
  }
}

function score100(category) {
  return category && typeof category.score === 'number' ? Math.round(category.score * 100) : null;
}

function medianRun(results) {
  if (results.length === 1) return results[0];
  const perf = (r) => r.lhr.categories.performance?.score ?? -1;
  const sorted = [...results].sort((a, b) => perf(a) - perf(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function pad(s, n) {
  s = String(s);
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function describeItem(item) {
  if (item.type === 'list-section' || item.type === 'table' || item.type === 'list') return '';
  const parts = [];
  const node = item.node && item.node.type === 'node' ? item.node : null;
  if (node) {
    if (node.selector) parts.push(`selector ${node.selector}`);
    if (node.snippet) parts.push(`snippet ${node.snippet.replace(/\s+/g, ' ').slice(0, 200)}`);
    if (node.explanation) parts.push(`explanation: ${node.explanation.replace(/\s+/g, ' ')}`);
  }
  for (const key of ['url', 'source', 'description', 'sourceLocation', 'label', 'cause', 'score', 'wastedMs', 'wastedBytes', 'totalBytes']) {
    const v = item[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'object') {
      if (v.type === 'source-location' && v.url) parts.push(`${key} ${v.url}:${v.line + 1}:${v.column + 1}`);
      else if (v.type === 'node' && v.selector) parts.push(`${key} ${v.selector}`);
      else if (v.type === 'code' || v.type === 'text') parts.push(`${key} ${v.value}`);
      continue;
    }
    const num = key === 'score' ? v.toFixed(3) : Math.round(v);
    parts.push(`${key} ${typeof v === 'number' ? num : v}`);
  }
  return parts.join('; ');
}

function failingAudits(lhr, categoryId) {
  const category = lhr.categories[categoryId];
  const out = [];
  for (const ref of category.auditRefs) {
    const a = lhr.audits[ref.id];
    if (!a) continue;
    if (['notApplicable', 'manual', 'informative'].includes(a.scoreDisplayMode)) continue;
    if (a.scoreDisplayMode === 'error') {
      out.push({ ref, a, error: true });
      continue;
    }
    if (a.score === null || a.score >= 1) continue;
    // A metric scored 0.9-0.99 is "passed" in Lighthouse's colours but still costs points.
    out.push({ ref, a });
  }
  // Heaviest first, then worst first.
  out.sort((x, y) => (y.ref.weight || 0) - (x.ref.weight || 0) || (x.a.score ?? 0) - (y.a.score ?? 0));
  return out;
}

function printFailing(label, lhr, categoryId, score) {
  console.log(`\n${label} — ${categoryId} ${score ?? 'n/a'}:`);
  if (lhr.categories[categoryId] === undefined) {
    console.log('  category missing from the report');
    return;
  }
  const failing = failingAudits(lhr, categoryId);
  if (failing.length === 0) console.log('  (no audit under 1: see runtime errors or warnings above)');
  for (const { ref, a, error } of failing) {
    const sc = error ? 'error' : a.score.toFixed(2);
    const w = ref.weight ? ` weight ${ref.weight}` : '';
    const dv = a.displayValue ? ` — ${a.displayValue}` : '';
    console.log(`  - ${a.id}: ${a.title} [score ${sc}${w}]${dv}`);
    if (error && a.errorMessage) console.log(`      error: ${a.errorMessage}`);
    if (a.explanation) console.log(`      ${a.explanation.replace(/\s+/g, ' ')}`);
    let items = a.details?.items ?? [];
    // Insights wrap their tables in a list: show the rows of the tables.
    if (a.details?.type === 'list') items = items.flatMap((i) => (i.type === 'table' ? i.items : [i]));
    for (const item of items.slice(0, MAX_ITEMS)) {
      const text = describeItem(item);
      if (text) console.log(`      * ${text}`);
      for (const sub of item.subItems?.items?.slice(0, 3) ?? []) {
        const t = describeItem(sub);
        if (t) console.log(`          · ${t}`);
      }
    }
    if (items.length > MAX_ITEMS) console.log(`      … and ${items.length - MAX_ITEMS} more`);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(CHROME_PATH)) {
    console.error(`run.mjs: no browser at ${CHROME_PATH} (set CHROME_PATH); nothing is downloaded`);
    process.exit(2);
  }
  let eventUrl;
  try {
    eventUrl = await eventPageUrl(opts.base);
  } catch (e) {
    console.error(`run.mjs: ${e.message}`);
    process.exit(2);
  }
  const pages = [
    { name: 'month', url: new URL('/events/month/', opts.base).href },
    { name: 'list', url: new URL('/events/', opts.base).href },
    { name: 'event', url: eventUrl },
  ];
  if (opts.out) fs.mkdirSync(opts.out, { recursive: true });

  const rows = [];
  let versions = null;
  for (const page of pages) {
    for (const preset of PRESETS) {
      const results = [];
      for (let i = 0; i < opts.runs; i++) {
        const run = opts.runs > 1 ? ` (run ${i + 1}/${opts.runs})` : '';
        console.error(`auditing ${page.url} as ${preset.name}${run} …`);
        results.push(await audit(page.url, preset));
      }
      const chosen = medianRun(results);
      const lhr = chosen.lhr;
      versions ??= {
        lighthouse: lhr.lighthouseVersion,
        browser: lhr.environment?.hostUserAgent,
        throttling: lhr.configSettings.throttlingMethod,
      };
      if (lhr.runtimeError) console.error(`  runtime error: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
      for (const w of lhr.runWarnings ?? []) console.error(`  warning: ${w}`);
      if (opts.out) {
        const stem = path.join(opts.out, `${page.name}-${preset.name}`);
        fs.writeFileSync(`${stem}.json`, chosen.report[0]);
        fs.writeFileSync(`${stem}.html`, chosen.report[1]);
      }
      const scores = Object.fromEntries(CATEGORIES.map((c) => [c, score100(lhr.categories[c])]));
      const allPerf = results.map((r) => score100(r.lhr.categories.performance));
      rows.push({ page, preset: preset.name, lhr, scores, allPerf });
    }
  }

  console.log(`Lighthouse ${versions.lighthouse}; ${versions.browser}`);
  console.log(`throttling: ${versions.throttling}; ${opts.runs} run(s) per page and preset` +
    (opts.runs > 1 ? ', the run with the median performance score reported' : ''));
  console.log(`event page: ${eventUrl}\n`);
  const header = ['page', 'preset', 'performance', 'accessibility', 'best-practices', 'seo', 'perf runs', 'cpu index'];
  const table = [header];
  for (const r of rows) {
    table.push([r.page.name, r.preset, ...CATEGORIES.map((c) => r.scores[c] ?? 'n/a'),
      r.allPerf.map((p) => p ?? 'n/a').join('/'), r.lhr.environment?.benchmarkIndex ?? 'n/a']);
  }
  const widths = header.map((_, i) => Math.max(...table.map((row) => String(row[i]).length)));
  for (const row of table) console.log(row.map((c, i) => pad(c, widths[i])).join('  ').trimEnd());
  console.log('(perf runs: the performance score of every run; cpu index: Lighthouse\'s benchmarkIndex ' +
    'of the reported run, lower when the machine is busy)');

  let failed = false;
  let robotsBlocked = false;
  for (const r of rows) {
    for (const c of CATEGORIES) {
      const s = r.scores[c];
      if (s === null || s < THRESHOLD) {
        failed = true;
        printFailing(`${r.page.name} (${r.preset}, ${r.lhr.finalDisplayedUrl})`, r.lhr, c, s);
      }
    }
    const robots = r.lhr.audits['robots-txt'];
    if (robots?.score === 0 && /unable to download/i.test(robots.explanation ?? '')) robotsBlocked = true;
  }

  // Scores of 95-99 pass, but say what keeps them from 100.
  const below100 = [];
  for (const r of rows) {
    for (const c of CATEGORIES) {
      const s = r.scores[c];
      if (s === null || s < THRESHOLD || s === 100) continue;
      const ids = failingAudits(r.lhr, c).filter(({ ref }) => ref.weight > 0).map(({ a }) => a.id);
      below100.push(`  ${r.page.name} (${r.preset}) ${c} ${s}: ${ids.join(', ') || '-'}`);
    }
  }
  if (below100.length) console.log(`\nAt ${THRESHOLD}-99 (weighted audits under 1):\n${below100.join('\n')}`);

  if (robotsBlocked) await explainRobots(opts.base, pages[0].url);

  if (failed) {
    console.log(`\nFAIL: some score is under ${THRESHOLD}`);
    process.exit(1);
  }
  console.log(`\nOK: every score is ${THRESHOLD} or more`);
}

// Lighthouse fetches /robots.txt from inside the page (Network.loadNetworkResource), which
// recent Chromium subjects to the page's Content-Security-Policy: without a connect-src that
// allows the page's own origin the fetch fails and the audit says "unable to download".
async function explainRobots(base, pageUrl) {
  try {
    const robots = await fetch(new URL('/robots.txt', base));
    const page = await fetch(pageUrl);
    const csp = page.headers.get('content-security-policy');
    console.log(`\nrobots-txt: GET /robots.txt answers ${robots.status} ${robots.headers.get('content-type') ?? ''}`);
    console.log(`  the page's Content-Security-Policy: ${csp ?? '(none)'}`);
    const directives = (csp ?? '').split(';').map((d) => d.trim().split(/\s+/));
    const connect = directives.find((d) => d[0] === 'connect-src') ?? directives.find((d) => d[0] === 'default-src');
    if (connect && !connect.includes("'self'") && !connect.includes('*')) {
      console.log(`  ${connect[0]} ${connect.slice(1).join(' ')} blocks Lighthouse's in-page fetch of /robots.txt; ` +
        "connect-src 'self' would let it through (a 404 then makes the audit not applicable).");
    }
  } catch (e) {
    console.log(`\nrobots-txt: could not check /robots.txt: ${e.message}`);
  }
}

main().catch((e) => {
  console.error(e?.stack || String(e));
  process.exit(2);
});
