// Host names in policy actions: the one function that writes a host last label first
// (`mcp.notion.com` → `com.notion.mcp`), normalises it (case, trailing dot, IDN → punycode)
// and writes IP literals whole in brackets. Every rule kind that names a host uses it.

import { domainToASCII } from 'node:url';
import * as ipaddr from 'ipaddr.js';
import { checkServerName, jsonExcerpt } from './names';

/** Thrown when a string cannot be used as a host in a policy action; the message says why. */
export class HostNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HostNameError';
  }
}

const MAX_LABEL = 63;
const MAX_NAME = 253;
const LABEL_RE = /^[a-z0-9_-]+$/;
// ASCII characters a host name may hold before IDN conversion (others are rejected).
const ASCII_OK = /^[A-Za-z0-9._-]$/;
// The WHATWG URL parser reads a name whose last label is a number as an IPv4 address.
const NUMERIC_LABEL = /^(?:[0-9]+|0x[0-9a-f]*)$/i;

function fail(host: string, why: string): never {
  throw new HostNameError(`host ${jsonExcerpt(host)} is not valid: ${why}`);
}

function ipLiteral(original: string, inner: string): string {
  if (inner.includes('%')) fail(original, 'an IPv6 zone (%…) cannot be named by a rule');
  if (ipaddr.IPv4.isValidFourPartDecimal(inner)) return `[${ipaddr.IPv4.parse(inner).toString()}]`;
  if (inner.includes(':') && ipaddr.IPv6.isValid(inner)) return `[${ipaddr.IPv6.parse(inner).toString()}]`;
  return fail(original, 'it is neither a dotted-decimal IPv4 address nor an IPv6 address');
}

function checkAscii(original: string, text: string): void {
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code >= 0x80) {
      // a character that IDN mapping turns into ASCII punctuation (e.g. a full-width '/')
      const mapped = ch.normalize('NFKC');
      if (mapped !== ch && [...mapped].some((m) => m.codePointAt(0)! < 0x80 && !ASCII_OK.test(m))) {
        fail(original, `it contains ${jsonExcerpt(ch)}, which reads as ${jsonExcerpt(mapped)}, which a host name cannot hold`);
      }
      continue;
    }
    if (ch === '*') fail(original, 'it contains "*"; wildcards belong in rules, after the reversed labels');
    if (!ASCII_OK.test(ch)) fail(original, `it contains ${jsonExcerpt(ch)}, which a host name cannot hold`);
  }
}

function checkLabels(original: string, labels: readonly string[]): void {
  if (labels.some((l) => l === '')) fail(original, 'it has an empty label');
  const last = labels[labels.length - 1];
  if (NUMERIC_LABEL.test(last)) {
    fail(original, 'it looks like an IP address but is not four decimal numbers; write an address as e.g. 198.51.100.7');
  }
}

/**
 * Write a host last label first, normalised, for use in a policy action.
 *
 * - Names: lower-cased, one trailing dot removed, IDNs converted to punycode
 *   (`url.domainToASCII`), then reversed: `mcp.notion.com` → `com.notion.mcp`.
 *   Labels must be 1–63 characters of `a-z 0-9 - _`, the whole name at most 253.
 * - IP literals are not reversed but written whole in brackets, in ipaddr.js
 *   `toString()` form: `198.51.100.7` → `[198.51.100.7]`, `2001:DB8:0::1` or
 *   `[2001:db8::1]` → `[2001:db8::1]`. IPv4 must be dotted decimal; shorthand
 *   such as `127.1` or `0x7f.0.0.1` is refused, as are IPv6 zones.
 *
 * @throws {HostNameError} saying why when the host is empty, has an empty label,
 *   holds a character a host name cannot, or is not a valid name or address.
 */
export function reverseHost(host: string): string {
  if (typeof host !== 'string') throw new HostNameError(`host must be a string, not ${typeof host}`);
  if (host === '') throw new HostNameError('host is empty');
  if (host.startsWith('[')) {
    if (!host.endsWith(']')) fail(host, 'a "[" without a closing "]"');
    return ipLiteral(host, host.slice(1, -1));
  }
  if (host.includes(':')) {
    if (ipaddr.IPv6.isValid(host.replace(/%.*$/s, ''))) return ipLiteral(host, host);
    fail(host, 'it contains ":" but is not an IPv6 address (a port does not belong here)');
  }
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === '') fail(host, 'it has an empty label');
  if (ipaddr.IPv4.isValidFourPartDecimal(name)) return ipLiteral(host, name);

  // Reject ASCII punctuation before IDN conversion: domainToASCII parses like a URL
  // host and would silently cut 'a/b' to 'a' or decode '%41'; full-width look-alikes
  // that map onto the same punctuation are caught through their NFKC form.
  checkAscii(host, name);
  checkLabels(host, name.split('.'));

  let ascii = domainToASCII(name);
  if (ascii === '') fail(host, 'it is not a valid international domain name');
  if (ascii.endsWith('.')) ascii = ascii.slice(0, -1);
  const labels = ascii.split('.');
  checkLabels(host, labels);
  for (const label of labels) {
    if (label.length > MAX_LABEL) fail(host, `the label ${jsonExcerpt(label)} is longer than ${MAX_LABEL} characters`);
    if (!LABEL_RE.test(label)) fail(host, `the label ${jsonExcerpt(label)} holds a character a host name cannot`);
  }
  if (ascii.length > MAX_NAME) fail(host, `it is longer than ${MAX_NAME} characters`);
  return labels.reverse().join('.');
}

/**
 * Normalise the host part of a rule as written (already reversed), e.g.
 * `['com','Notion']` → `['com','notion']`, `['[2001:DB8::1]']` → `['[2001:db8::1]']`.
 * A rule's host labels may be a prefix (before a trailing `*`).
 *
 * @throws {HostNameError} when the labels are not a valid reversed host, or spell an
 *   IP address without brackets.
 */
export function normalizeReversedHost(labels: readonly string[]): string[] {
  if (labels.length === 0) throw new HostNameError('the host part is empty');
  if (labels[0].startsWith('[')) {
    if (labels.length !== 1) throw new HostNameError('an IP literal in brackets must be the whole host part');
    return [reverseHost(labels[0])];
  }
  if (labels.some((l) => l.startsWith('['))) {
    throw new HostNameError('an IP literal in brackets must be the whole host part');
  }
  const host = [...labels].reverse().join('.');
  let reversed: string;
  try {
    reversed = reverseHost(host);
  } catch (e) {
    if (e instanceof HostNameError && NUMERIC_LABEL.test(labels[0])) {
      throw new HostNameError(
        `the host part ${jsonExcerpt(labels.join('.'))} looks like an IP address; ` +
          'write one address whole in brackets, not reversed, e.g. [198.51.100.7]',
      );
    }
    throw e;
  }
  if (reversed.startsWith('[')) {
    throw new HostNameError(
      `the host part ${jsonExcerpt(labels.join('.'))} spells an IP address; ` +
        'write it whole in brackets, not reversed, e.g. [198.51.100.7]',
    );
  }
  return reversed.split('.');
}

/**
 * The policy action for a server reaching a host: `mcp.<server>.host.<reverseHost(host)>`.
 *
 * @throws {NameError} when the server name cannot be named by a rule (it holds '.', '*', …).
 * @throws {HostNameError} when the host is not valid.
 */
export function hostAction(server: string, host: string): string {
  checkServerName(server);
  return `mcp.${server}.host.${reverseHost(host)}`;
}

/**
 * The policy action for a server this machine runs (contained, with its network door) reaching a host:
 * `mcp.<server>.network.<reverseHost(host)>`. The bare `mcp.<server>.network` is any public host.
 *
 * @throws {NameError} when the server name cannot be named by a rule.
 * @throws {HostNameError} when the host is not valid.
 */
export function networkHostAction(server: string, host: string): string {
  checkServerName(server);
  return `mcp.${server}.network.${reverseHost(host)}`;
}
