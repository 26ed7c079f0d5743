// Preloaded into every Node process of scripts/vscode-host.sh when MCP_GATE_NET_LOG names a file (NODE_OPTIONS
// --require): appends one line per host name looked up (dns.lookup, as net, http and undici use) and per
// connection opened (net.connect / tls.connect), "pid kind host[:port] argv1". Observes only; changes nothing.
'use strict';
const fs = require('node:fs');
const dns = require('node:dns');
const net = require('node:net');
const file = process.env.MCP_GATE_NET_LOG;
if (file) {
  const note = (kind, what) => {
    try {
      fs.appendFileSync(file, `${process.pid} ${kind} ${what} ${process.argv[1] ?? ''}\n`);
    } catch {
      /* observing must not break the install */
    }
  };
  const lookup = dns.lookup;
  dns.lookup = function (host, ...rest) {
    note('lookup', host);
    return lookup.call(this, host, ...rest);
  };
  const lookupP = dns.promises.lookup;
  dns.promises.lookup = function (host, ...rest) {
    note('lookup', host);
    return lookupP.call(this, host, ...rest);
  };
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (...args) {
    const o =
      typeof args[0] === 'object' && args[0] !== null ? (Array.isArray(args[0]) ? args[0][0] : args[0]) : { port: args[0], host: args[1] };
    if (o && (o.host || o.port) && !o.path) note('connect', `${o.host ?? 'localhost'}:${o.port}`);
    return connect.apply(this, args);
  };
}
