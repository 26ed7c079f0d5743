// One vocabulary for what only user scope may set: the list in src/trust/sources/declarations.ts is what the gate ignores
// in a workspace's .vscode/settings.json, what the extension reads from user settings, and what package.json
// declares application-scope and restricted in untrusted workspaces.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { USER_ONLY_KEYS } from '../../../src/trust/sources/declarations';
import { evaluateGate, GRANTING_SETTINGS } from '../../../src/trust/gate';
import { cleanupTemp, ROOT, world } from '../helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

describe('user-only settings: one list', () => {
  after(cleanupTemp);

  it('package.json restricts exactly the list, in untrusted workspaces', () => {
    assert.deepEqual([...pkg.capabilities.untrustedWorkspaces.restrictedConfigurations].sort(), [...GRANTING_SETTINGS].sort());
    assert.deepEqual(
      GRANTING_SETTINGS,
      USER_ONLY_KEYS.map((k) => `mcpGate.${k}`),
    );
  });

  it('package.json declares every key of the list with application scope (a workspace cannot set it)', () => {
    const props = pkg.contributes.configuration.properties as Record<string, { scope?: string }>;
    for (const k of GRANTING_SETTINGS) assert.equal(props[k]?.scope, 'application', `${k} is not declared application-scope`);
    const others = Object.keys(props).filter((k) => !GRANTING_SETTINGS.includes(k));
    assert.deepEqual(others, [], 'every mcpGate.* setting is user-only; a new one belongs in USER_ONLY_KEYS');
  });

  it('a workspace .vscode/settings.json setting any of them is listed as ignored', () => {
    const ws = Object.fromEntries(GRANTING_SETTINGS.map((k) => [k, k === 'mcpGate.requireLog' ? false : {}]));
    const w = world({ '.vscode/settings.json': JSON.stringify(ws) });
    assert.deepEqual(
      evaluateGate(w.input)
        .ignoredGrants.map((g) => g.key)
        .sort(),
      [...GRANTING_SETTINGS].sort(),
    );
  });
});
