// Name resolution under the address policy: every answer of a name is checked, a name with too many
// answers is refused, and an IP-literal host is checked the same way without asking DNS.

import dns from 'node:dns';
import { checkAddress, parseIpLiteral, type AddressInfo, type AddressPolicy } from './address';
import { AddressRefusedError, NameResolutionError } from '../errors';

/** Resolves a host name to every address it has (any IP spelling). Injectable for tests. */
export type Resolver = (host: string) => Promise<readonly string[]>;

/** A name with more answers than this is refused, not truncated (README, "The host"). */
export const MAX_ADDRESSES = 8;

/** The system resolver, as getaddrinfo sees it (/etc/hosts and the machine's DNS), all answers in its order. */
export const systemResolver: Resolver = async (host) => {
  const answers = await dns.promises.lookup(host, { all: true, verbatim: true });
  return answers.map((a) => a.address);
};

/** Options shared by {@link resolveChecked} and the pinned agent. */
export interface ResolveOptions {
  /** Defaults to {@link systemResolver}. */
  readonly resolver?: Resolver;
  /** Address policy (private ranges, local-development exception). */
  readonly policy?: AddressPolicy;
  /** Defaults to {@link MAX_ADDRESSES}. */
  readonly maxAddresses?: number;
}

/** A host whose every address passed the policy. `addresses` keeps the resolver's order. */
export interface CheckedHost {
  readonly host: string;
  readonly literal: boolean;
  readonly addresses: readonly AddressInfo[];
}

/**
 * Resolves `host` (a name, or an IP literal in any spelling, brackets allowed) and checks every answer.
 * @throws AddressRefusedError when any answer is refused or there are more than `maxAddresses`.
 * @throws NameResolutionError when the name does not resolve (or resolves to nothing).
 */
export async function resolveChecked(host: string, options: ResolveOptions = {}): Promise<CheckedHost> {
  const maxAddresses = options.maxAddresses ?? MAX_ADDRESSES;
  const literal = parseIpLiteral(host);
  let answers: readonly string[];
  if (literal !== undefined) {
    answers = [literal];
  } else {
    if (host.length === 0) throw new NameResolutionError(host, 'empty host');
    try {
      answers = await (options.resolver ?? systemResolver)(host);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new NameResolutionError(host, typeof code === 'string' ? code : 'resolver failed', { cause: err });
    }
    const list: unknown = answers; // a resolver given by the caller may answer anything
    if (!Array.isArray(list) || answers.length === 0) throw new NameResolutionError(host, 'no addresses');
  }
  if (answers.length > maxAddresses) {
    throw new AddressRefusedError(host, undefined, `${answers.length} addresses, more than ${maxAddresses}`, answers);
  }
  const checked: AddressInfo[] = [];
  for (const answer of answers) {
    const verdict = checkAddress(answer, options.policy);
    if (!verdict.allowed) throw new AddressRefusedError(host, verdict.info?.address ?? String(answer), verdict.reason, answers);
    checked.push(verdict.info);
  }
  return { host, literal: literal !== undefined, addresses: checked };
}

/**
 * True when every address of a checked host is loopback on this machine (the only place plain http may
 * go): 127/8, ::1, or IPv4-mapped loopback — not a NAT64/6to4/Teredo spelling, which leaves the machine.
 */
export function allLoopback(checked: CheckedHost): boolean {
  return checked.addresses.every((a) => a.range === 'loopback' && (!a.embedded || a.embedded.via === 'IPv4-mapped'));
}
