// Unix sockets a contained server makes itself (issue 44, item 4: a browser's, the tsx command's IPC) work with no
// setting, while no socket file it did not make is visible to it; a socket file in the workspace (one a process
// on this machine listens on) makes the start refuse them (the seccomp filter), so that socket stays out of reach.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { Session } from '../../../src/host/session';
import { EventLog } from '../../../src/host/log/log';
import { loadUserPolicy } from '../../../src/policy/user-policy';
import { Masker } from '../../../src/policy/mask';
import { inProcess } from '../../../src/trust/packages/npm-resolve';
import { sandboxAvailable } from '../../../src/host/sandbox/sandbox';
import { cleanupTemp, world, writeFiles, type World } from '../helpers';
import { miniServer } from '../mini-server';

// Its tool listens on a socket file in its private /tmp, connects to it and answers what came back (or the error).
const OWN_SOCKET = miniServer(
  "const net = require('node:net'); let sockSaid = 'pending';\nconst srv = net.createServer((c) => c.end('own-socket-ok')).on('error', (e) => { sockSaid = 'listen ' + e.code; });\nsrv.listen('/tmp/own.sock', () => { const c = net.connect('/tmp/own.sock'); c.on('data', (d) => { sockSaid = String(d); }); c.on('error', (e) => { sockSaid = 'connect ' + e.code; }); });",
  'sockSaid',
);

async function call(w: World): Promise<{ servers: string[]; notes: string; answer: string }> {
  await recordDecision(w.input, 's', undefined, 'approved');
  const report = evaluateGate(w.input);
  const session = await Session.start({
    report,
    policy: loadUserPolicy(report.userPolicy),
    log: new EventLog(w.store, new Masker()),
    storeDir: w.store,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    masker: new Masker(),
  });
  try {
    let answer = '';
    if (session.servers().length) {
      for (let i = 0; i < 20 && !/own-socket-ok|listen|connect|rendered|error/.test(answer); i++) {
        answer = JSON.stringify(await session.call('s', 'hello'));
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return { servers: session.servers(), notes: session.notes.join('\n'), answer };
  } finally {
    await session.close();
  }
}

function repo(): World {
  const w = world(
    {
      'srv/server.js': OWN_SOCKET,
      'package.json': '{"name":"app"}',
      '.mcp.json': JSON.stringify({ mcpServers: { s: { command: 'node', args: ['srv/server.js'] } } }),
    },
    {},
    { PATH: process.env.PATH ?? '' },
  );
  w.input.loadGuard = true;
  writeFiles(w.home, {
    '.config/mcp-gate/config.json': JSON.stringify({ rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }] }),
  });
  return w;
}

describe('Unix sockets a contained server makes itself', function () {
  this.timeout(60_000);
  after(cleanupTemp);
  before(function () {
    if (!sandboxAvailable().ok) throw new Error(`bubblewrap is needed: ${JSON.stringify(sandboxAvailable())}`);
  });

  it('work with no setting while no socket file it did not make is visible to it', async () => {
    const r = await call(repo());
    assert.deepEqual(r.servers, ['s'], r.notes);
    assert.match(r.answer, /own-socket-ok/);
  });

  it('a socket file deep in a folder you show as a read path refuses them too', async () => {
    const w = repo();
    const shown = path.join(path.dirname(w.project), 'shown');
    fs.mkdirSync(path.join(shown, 'a', 'b'), { recursive: true });
    const sock = path.join(shown, 'a', 'b', 'agent.sock');
    const host = net.createServer((c) => c.end('HOST-SERVICE')).listen(sock);
    await new Promise((r) => host.once('listening', r));
    writeFiles(w.home, {
      '.config/mcp-gate/config.json': JSON.stringify({
        rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }],
        sandbox: { servers: [{ server: 's', project: w.project, read: [shown] }] },
      }),
    });
    try {
      const r = await call(w);
      assert.deepEqual(r.servers, ['s'], r.notes);
      assert.match(r.answer, /listen EPERM|connect EPERM/, r.answer);
    } finally {
      host.close();
    }
  });

  it("a socket file in the workspace (a process here listening on it) refuses them: its own listen fails, the host's service is never reached", async () => {
    const w = repo();
    const sock = path.join(w.project, 'dev.sock');
    const host = net.createServer((c) => c.end('HOST-SERVICE')).listen(sock);
    await new Promise((r) => host.once('listening', r));
    try {
      const r = await call(w);
      assert.deepEqual(r.servers, ['s'], r.notes);
      assert.match(r.answer, /listen EPERM|connect EPERM/, r.answer);
      assert.doesNotMatch(r.answer, /HOST-SERVICE|own-socket-ok/);
    } finally {
      host.close();
    }
  });

  it("a browser runs contained with no setting: Debian's chromium renders a page headless (--no-sandbox: its own sandbox needs a user namespace, which MCP Gate's refuses; MCP Gate's sandbox contains it)", async function () {
    this.timeout(120_000);
    const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
    if (!chromium) throw new Error("Debian's chromium is needed: `npm run vscode-host` installs it");
    const server = miniServer(
      "const { execFileSync } = require('node:child_process');",
      `execFileSync(${JSON.stringify(chromium)}, ['--headless=new', '--no-sandbox', '--disable-gpu', '--user-data-dir=/tmp/profile', '--dump-dom', 'data:text/html,<p>rendered-contained</p>'], { encoding: 'utf8', timeout: 90000, stdio: ['ignore', 'pipe', 'pipe'] })`,
    );
    const w = repo();
    writeFiles(w.project, { 'srv/server.js': server });
    const r = await call(w);
    assert.deepEqual(r.servers, ['s'], r.notes);
    assert.match(r.answer, /<p>rendered-contained<\/p>/, r.answer);
  });
});
