// Benchmark: the trust panel with 10,000 log events. (1) The log view model in Node: events → rows, and the
// newest-first filter with a text search. (2) The real webview bundle (dist/webview/panel.js, with media/panel.css
// and codicons) in Debian's Chromium, served over loopback HTTP under the panel's own CSP, with the message
// channel of VS Code's webview host replaced by a stub: the time from the 10,000 events arriving to the frame that
// shows them painted, the time from navigation start to that frame, and frame times while scrolling the list.
// The Chromium rows are skipped (with a note) when there is no Chromium at /usr/bin/chromium (CHROMIUM overrides).
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { filterRows, toRows } from '../webview/common/log-model';
import { buildModel, panelHtml } from '../webview/node/model';
import type { LogEntry } from '../webview/common/protocol';
import type { BenchRow } from './gate';

const ROOT = path.resolve(__dirname, '..', '..');
export const EVENTS = 10_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}

/** A plausible log: exchanges with a dozen servers (every outcome), tool calls and results, gate events. */
export function syntheticLog(n: number, start = Date.parse('2026-11-30T08:00:00.000Z')): LogEntry[] {
  const servers = ['notion', 'github', 'everything', 'weather', 'db', 'search', 'files', 'slack', 'jira', 'sentry', 'linear', 'figma'];
  const outcomes = ['answered', 'answered', 'answered', 'answered', 'refused_by_policy', 'no_answer', 'refused_by_address', 'redirected'];
  const out: LogEntry[] = [];
  for (let i = 0; i < n; i++) {
    const server = servers[i % servers.length];
    const at = new Date(start + i * 1370).toISOString();
    let event: Record<string, unknown>;
    const k = i % 10;
    if (k === 0) event = { at, kind: 'tool.call', server, tool: `tool_${i % 7}` };
    else if (k === 1) event = { at, kind: 'tool.result', server, tool: `tool_${i % 7}`, ok: i % 13 !== 1, bytes: 100 + (i % 900) };
    else if (k === 2 && i % 50 === 2)
      event = { at, kind: i % 100 === 2 ? 'gate.approve' : 'gate.reject', server, source: '.vscode/mcp.json', project: '/work/project' };
    else {
      const outcome = outcomes[i % outcomes.length];
      event = {
        at,
        kind: 'mcp.request',
        server,
        host: i % 3 ? `mcp.${server}.com` : 'stdio',
        about: i % 4 ? `tool_${i % 7}` : 'discover',
        outcome,
      };
      if (outcome === 'answered') event.status = 200;
      else event.detail = `${outcome.replace(/_/g, ' ')} (exchange ${i})`;
    }
    out.push({ id: i, event });
  }
  return out;
}

function benchModel(): BenchRow[] {
  const entries = syntheticLog(EVENTS);
  const runs = (f: () => void, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = process.hrtime.bigint();
      f();
      out.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    return out;
  };
  runs(() => filterRows(toRows(entries), { server: '', outcome: '', kind: '', text: '' }), 5);
  const build = median(runs(() => filterRows(toRows(entries), { server: '', outcome: '', kind: '', text: '' }), 30));
  const rows = toRows(entries);
  const search = median(runs(() => filterRows(rows, { server: 'notion', outcome: '', kind: '', text: 'tool_3' }), 100));
  return [
    {
      name: `log view model: ${EVENTS} events → rows, newest first (Node)`,
      median: build,
      unit: 'ms',
      note: 'every row, as the first filter or search makes them (until then the panel makes only the rows in view)',
    },
    {
      name: `log filter + text search over ${EVENTS} rows (Node)`,
      median: search,
      unit: 'ms',
      note: 'server filter and a substring search, as at each keystroke',
    },
  ];
}

function serve(files: Record<string, string>): Promise<{ url: string; close: () => Promise<void> }> {
  const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.ttf': 'font/ttf', '.html': 'text/html' };
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    const file = files[p];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[path.extname(p) || '.html'] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(p.endsWith('.html') || p === '/' ? file : fs.readFileSync(file));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

/** The page the benchmark loads: the panel's own HTML and CSP, plus (with the nonce) a stub of VS Code's API. */
function page(origin: string): string {
  const nonce = randomBytes(18).toString('base64');
  const { model } = buildModel([], { restricted: false });
  const html = panelHtml({
    cspSource: origin,
    nonce,
    script: `${origin}/panel.js`,
    styles: [`${origin}/panel.css`],
    codicons: `${origin}/codicons/codicon.css`,
  });
  // The stub makes the events in the page (timed apart, so the load time is the panel's own) and answers "ready"
  // as the host does: the model, then the whole log in one message. It records when the log arrived and when the
  // frame after the panel handled it was painted (rAF, then a task after that frame).
  const stub = `<script nonce="${nonce}">
const g0 = performance.now();
const syntheticLog = ${syntheticLog.toString()};
const entries = syntheticLog(${EVENTS});
window.__bench = { batch: { firstId: 0, count: entries.length, lines: entries.map((e) => JSON.stringify(e.event)).join('\\n') }, model: ${JSON.stringify(model)} };
window.__bench.generate = performance.now() - g0;
// Registered before the panel's own listener, so it runs first: the moment the log message is dispatched (its
// data is deserialised on first access, after this timestamp).
window.addEventListener('message', (e) => {
  const arrived = performance.now();
  if (e.data.type !== 'log') return;
  requestAnimationFrame(() => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => { window.__painted = { posted: window.__bench.posted, arrived, painted: performance.now(), generate: window.__bench.generate, rows: document.querySelectorAll('.vlist-row:not([hidden])').length }; };
    ch.port2.postMessage(0);
  });
});
window.acquireVsCodeApi = () => ({
  getState: () => ({ tab: 'log', filter: { server: '', outcome: '', kind: '', text: '' }, expanded: {}, scroll: {} }),
  setState: () => {},
  postMessage: (m) => {
    if (m.type !== 'ready') return;
    window.postMessage({ type: 'model', model: window.__bench.model }, '*');
    window.__bench.posted = performance.now();
    window.postMessage({ type: 'log', reset: true, batch: window.__bench.batch }, '*');
  },
});
</script>`;
  return html.replace(/<script nonce=/, `${stub}\n<script nonce=`);
}

// Runs in the page: scrolls the log `steps` times by `by` pixels (wrapping), one step a frame; frame intervals.
const SCROLL = (steps: number, by: number) => `(async () => {
  const v = document.querySelector('.log-viewport');
  const out = [];
  let last = performance.now();
  for (let i = 0; i < ${steps}; i++) {
    v.scrollTop = ((i + 1) * ${by}) % (v.scrollHeight - v.clientHeight);
    await new Promise((r) => requestAnimationFrame(r));
    const now = performance.now();
    out.push(now - last);
    last = now;
  }
  return out;
})()`;

async function benchBrowser(): Promise<BenchRow[]> {
  const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  const skipped = (why: string): BenchRow[] => [
    { name: `trust panel first paint of ${EVENTS} log events (Chromium)`, median: NaN, unit: 'ms', note: `skipped: ${why}` },
  ];
  if (!fs.existsSync(chromiumPath)) return skipped(`no Chromium at ${chromiumPath}`);
  const bundle = path.join(ROOT, 'dist', 'webview', 'panel.js');
  if (!fs.existsSync(bundle)) return skipped('dist/webview/panel.js is missing (npm run build)');
  const { chromium } = require('playwright-core') as typeof import('playwright-core');
  const files: Record<string, string> = {
    '/panel.js': bundle,
    '/panel.css': path.join(ROOT, 'media', 'panel.css'),
    '/codicons/codicon.css': path.join(ROOT, 'dist', 'webview', 'codicons', 'codicon.css'),
    '/codicons/codicon.ttf': path.join(ROOT, 'dist', 'webview', 'codicons', 'codicon.ttf'),
  };
  const srv = await serve(files);
  files['/'] = page(srv.url);
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  });
  const arrivedToPaint: number[] = [];
  const postedToPaint: number[] = [];
  const navToPaint: number[] = [];
  let wheel: number[] = [];
  let jump: number[] = [];
  let rowsInDom = 0;
  const problems: string[] = [];
  try {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const p = await ctx.newPage();
    p.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    p.on('pageerror', (e) => problems.push(e.message));
    for (let run = 0; run < 13; run++) {
      await p.goto(`${srv.url}/`);
      await p.waitForFunction('window.__painted', undefined, { timeout: 30_000 });
      const r = (await p.evaluate('window.__painted')) as {
        posted: number;
        arrived: number;
        painted: number;
        generate: number;
        rows: number;
      };
      if (run < 3) continue; // warm-up: code cache, fonts
      arrivedToPaint.push(r.painted - r.arrived);
      postedToPaint.push(r.painted - r.posted);
      navToPaint.push(r.painted - r.generate);
      rowsInDom = r.rows;
    }
    // Smoothness: wheel-like scrolling (three rows a frame), and jumping a screen and more every frame.
    wheel = ((await p.evaluate(SCROLL(300, 66))) as number[]).slice(10);
    jump = ((await p.evaluate(SCROLL(300, 997 * 22))) as number[]).slice(10);
    await ctx.close();
  } finally {
    await browser.close();
    await srv.close();
  }
  const note = problems.length ? `; page errors: ${problems.slice(0, 3).join(' | ')}` : '';
  return [
    {
      name: `trust panel first paint of ${EVENTS} log events (Chromium)`,
      median: median(arrivedToPaint),
      unit: 'ms',
      note: `from the log message's dispatch (then: its lines, the rows in view, render) to the painted frame; ${rowsInDom} rows in the DOM; slowest of ${arrivedToPaint.length} runs ${Math.max(...arrivedToPaint).toFixed(1)} ms; from postMessage (with serialising) ${median(postedToPaint).toFixed(1)} ms${note}`,
    },
    {
      name: `trust panel load to painted log, ${EVENTS} events (Chromium)`,
      median: median(navToPaint),
      unit: 'ms',
      note: `from navigation start: load and parse the ${Math.round(fs.statSync(bundle).size / 1024)} KB bundle, define the elements, render, paint`,
    },
    {
      name: `scrolling ${EVENTS} log rows, 3 rows a frame: frame time p95 (Chromium)`,
      median: pct(wheel, 0.95),
      unit: 'ms',
      note: `${wheel.length} frames; median ${median(wheel).toFixed(1)} ms (60 Hz = 16.7 ms); software rendering (--disable-gpu)`,
    },
    {
      name: `jumping through ${EVENTS} log rows, a new screen every frame: frame time p95 (Chromium)`,
      median: pct(jump, 0.95),
      unit: 'ms',
      note: `${jump.length} frames; median ${median(jump).toFixed(1)} ms`,
    },
  ];
}

export async function benchPanel(): Promise<BenchRow[]> {
  return [...benchModel(), ...(await benchBrowser())];
}
