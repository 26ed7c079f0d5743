// The certificate authorities a person trusts reach the servers they start (src/trust/plan/launch-plan.ts
// TRUST_ENV, src/host/sandbox/contain.ts): NODE_EXTRA_CA_CERTS, SSL_CERT_FILE and the others in MCP Gate's own environment
// are passed to a contained server and the files they name are shown to it read-only — a company's TLS proxy CA
// otherwise made every HTTPS server fail contained. A repository cannot use the same variables to have one of your
// files shown to its server: only a value that came from your environment is bound.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, tempDir, world } from '../helpers';
import { miniServer } from '../mini-server';
import { sandboxAvailable } from '../../../src/host/sandbox/sandbox';

describe('host: the CAs you trust reach your contained servers, and only yours', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  it('your NODE_EXTRA_CA_CERTS and SSL_CERT_FILE are visible to the server; a file a repository names in REQUESTS_CA_BUNDLE is not', function () {
    if (!sandboxAvailable().ok) this.skip();
    const mine = tempDir('mcp-gate-trust-');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        path.join(mine, 'ca.key'),
        '-out',
        path.join(mine, 'company-ca.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=company proxy CA',
      ],
      { stdio: 'ignore' },
    );
    fs.writeFileSync(path.join(mine, 'openssl-ca.pem'), 'openssl bundle\n');
    fs.writeFileSync(path.join(mine, 'private.txt'), 'a file of yours\n');
    const show = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE']
      .map(
        (k) =>
          `${JSON.stringify(k)} + '=' + (process.env[${JSON.stringify(k)}] ? (require('fs').existsSync(process.env[${JSON.stringify(k)}]) ? 'visible' : 'hidden') : 'unset')`,
      )
      .join(" + ' ' + ");
    const w = world(
      {
        '.mcp.json': JSON.stringify({
          mcpServers: {
            s: { command: 'node', args: ['${workspaceFolder}/server.js'], env: { REQUESTS_CA_BUNDLE: path.join(mine, 'private.txt') } },
          },
        }),
        'server.js': miniServer('', show),
      },
      {},
      { PATH: process.env.PATH!, NODE_EXTRA_CA_CERTS: path.join(mine, 'company-ca.pem'), SSL_CERT_FILE: path.join(mine, 'openssl-ca.pem') },
    );
    fs.mkdirSync(path.join(w.home, '.config', 'mcp-gate'), { recursive: true });
    fs.writeFileSync(
      path.join(w.home, '.config', 'mcp-gate', 'config.json'),
      JSON.stringify({ rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }] }),
    );
    const a = cli(w, ['approve', 's', '--yes']);
    assert.equal(a.code, 0, a.stdout + a.stderr);
    const r = cli(w, ['call', 's', 'hello']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /NODE_EXTRA_CA_CERTS=visible SSL_CERT_FILE=visible REQUESTS_CA_BUNDLE=hidden/);
  });
});
