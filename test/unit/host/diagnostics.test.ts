// What a person reads when a server fails (issue 44, item 6): a native module that was never built named as the
// likely cause (its package's install script did not run), from the server's real stderr as a session sees it.
import assert from 'node:assert/strict';
import { Session } from '../../../src/host/session';
import { nativeModuleHint } from '../../../src/host/session/local';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { writeProjectConfig } from '../grants';
import { cleanupTemp, world } from '../helpers';
import { sessionOptions } from './session-options';

describe('diagnostics a person can act on', function () {
  this.timeout(60_000);
  after(cleanupTemp);

  it('the stderr shapes of a native module that was never built are recognised; other errors are not', () => {
    assert.match(
      nativeModuleHint("Error: Cannot find module '/w/node_modules/better-sqlite3/build/Release/better_sqlite3.node'") ?? '',
      /a native module \(\/w\/node_modules\/better-sqlite3\/build\/Release\/better_sqlite3\.node\) is missing or was built for another Node: its package's install script most likely did not run/,
    );
    assert.ok(nativeModuleHint('Error: Could not locate the bindings file. Tried:\n → /w/build/addon.node'));
    assert.ok(nativeModuleHint('Error: No native build was found for platform=linux arch=x64 runtime=node abi=115'));
    assert.ok(nativeModuleHint('was compiled against a different Node.js version using NODE_MODULE_VERSION 108'));
    assert.equal(nativeModuleHint("Error: Cannot find module './lib.js'"), undefined);
    assert.equal(nativeModuleHint('TypeError: x is not a function'), undefined);
  });

  it('a server that dies for a missing native module: the note and the log name it, with the likely cause', async () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { db: { command: process.execPath, args: ['server.js'] } } }),
      'server.js':
        "console.error(\"Error: Cannot find module '/work/app/node_modules/sqlite3/build/Release/node_sqlite3.node'\");\nconsole.error('    at Module._resolveFilename (node:internal/modules/cjs/loader:1140:15)');\nprocess.exit(1);\n",
    });
    writeProjectConfig(w, {});
    for (const s of evaluateGate(w.input).servers) await recordDecision(w.input, s.name, s.source, 'approved');
    const o = sessionOptions(w);
    const { log } = o;
    const session = await Session.start(o);
    try {
      assert.deepEqual(session.servers(), []);
      assert.match(
        session.notes.join('\n'),
        /node_sqlite3\.node.*; a native module \(\/work\/app\/node_modules\/sqlite3\/build\/Release\/node_sqlite3\.node\) is missing or was built for another Node: its package's install script most likely did not run/,
      );
      const line = log.read().find((e) => e.kind === 'mcp.request' && e.about === 'discover') as { detail?: string } | undefined;
      assert.match(line?.detail ?? '', /stderr: Error: Cannot find module .*node_sqlite3\.node.*install script most likely did not run/);
    } finally {
      await session.close();
    }
  });
});
