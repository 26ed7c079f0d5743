// The HTTPS test host of `npm run test:servers`, run inside a network namespace (test/servers/peers.ts): it answers
// as api.github.com, context7.com and circleci.test would for the calls the corpus makes, with a certificate of the
// suite's test CA, and prints each request it served (the suite checks the servers came through the door to it).
// Plain Node, no dependencies; prints READY once listening; exits when its stdin ends.
'use strict';
const fs = require('node:fs');
const https = require('node:https');

const owner = {
  login: 'corpus',
  id: 1,
  node_id: 'U_1',
  avatar_url: '',
  url: 'https://api.github.com/users/corpus',
  html_url: 'https://github.com/corpus',
  type: 'User',
};
const repo = {
  id: 7,
  node_id: 'R_7',
  name: 'mcp-gate',
  full_name: 'corpus/mcp-gate',
  private: false,
  owner,
  html_url: 'https://github.com/corpus/mcp-gate',
  description: 'the trust gate',
  fork: false,
  url: 'https://api.github.com/repos/corpus/mcp-gate',
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-12-01T00:00:00Z',
  pushed_at: '2026-12-01T00:00:00Z',
  git_url: 'git://github.com/corpus/mcp-gate.git',
  ssh_url: 'git@github.com:corpus/mcp-gate.git',
  clone_url: 'https://github.com/corpus/mcp-gate.git',
  default_branch: 'main',
};

function answer(req) {
  const u = new URL(req.url, `https://${req.headers.host}`);
  if (u.pathname.endsWith('/search/repositories')) return { total_count: 1, incomplete_results: false, items: [repo] };
  if (u.pathname.endsWith('/v2/libs/search')) {
    return {
      results: [
        { id: '/corpus/mcp-gate', title: 'MCP Gate', description: 'the trust gate', totalSnippets: 12, trustScore: 9, versions: [] },
      ],
    };
  }
  if (u.pathname.endsWith('/me/followed-projects'))
    return { items: [{ name: 'mcp-gate', slug: 'gh/corpus/mcp-gate', vcs_type: 'github' }], next_page_token: null };
  return null;
}

const server = https.createServer(
  { key: fs.readFileSync(process.env.PEER_KEY), cert: fs.readFileSync(process.env.PEER_CERT) },
  (req, res) => {
    const body = answer(req);
    fs.appendFileSync(process.env.PEER_LOG, `served ${req.headers.host} ${req.method} ${req.url} ${body ? 200 : 404}\n`);
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { message: 'Not Found' }));
  },
);
server.listen(Number(process.env.PEER_PORT || 443), process.env.PEER_HOST, () => process.stdout.write('READY\n'));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
