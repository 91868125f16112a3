import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why a webhook URL is refused; undefined when it may be called. */
export type UrlProblem = string | undefined;

// Global unicast is 2000::/3 (docs/security.md, Review findings (round 3)); inside it, these ranges are not public or embed an IPv4 address.
const NON_PUBLIC_GLOBAL_V6: [ipaddr.IPv6, number][] = (
  [
    ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32 (embeds IPv4), benchmarking 2001:2::/48, ORCHID 2001:10::/28, 2001:20::/28
    ['2001:db8::', 32], // documentation
    ['2002::', 16], // 6to4 (embeds IPv4)
    ['3fff::', 20], // documentation (RFC 9637)
  ] as const
).map(([address, bits]) => [ipaddr.IPv6.parse(address), bits]);
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parse('2000::');

/** ipaddr.js reads any dotted tail as IPv4-mapped ("::8.8.8.8" as ::ffff:808:808); the URL parser spells it as it is (::808:808). */
function canonicalIPv6(address: string): string {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

/**
 * Only public unicast addresses may receive webhooks: loopback, private (RFC 1918, unique-local), link-local (which
 * holds cloud metadata at 169.254.169.254), carrier-grade NAT, multicast, reserved and unspecified ranges are refused.
 * IPv6 must be global unicast (2000::/3) outside the special ranges above, so IPv4-compatible (::/96), NAT64, 6to4 and
 * Teredo forms, which can carry a private IPv4 address, are refused; an IPv4-mapped address is judged by its IPv4 part.
 */
export function isPublicAddress(address: string): boolean {
  // A zone id (fe80::1%eth0) only means something on a link.
  if (address.includes('%') || !ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address.includes(':') ? canonicalIPv6(address) : address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
  if (!v6.match(GLOBAL_UNICAST_V6, 3)) return false;
  return !NON_PUBLIC_GLOBAL_V6.some(([range, bits]) => v6.match(range, bits));
}

/** Static checks: http(s), a host, no credentials. */
export function urlShapeProblem(raw: string): UrlProblem {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must use http or https';
  if (!url.hostname) return 'url must have a host';
  if (url.username || url.password) return 'url must not contain credentials';
  return undefined;
}

export interface ResolvedTarget {
  url: URL;
  /** The vetted address the request must connect to (never resolved again, so DNS cannot change it in between). */
  address: string;
  family: 4 | 6;
}

/**
 * Resolves the URL's host and refuses it when any address is not public (unless private networks are allowed):
 * a name with one private address among public ones could be made to answer with that one later.
 */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;
/** A name that does not resolve within this counts as not resolving (it bounds an attempt, see ATTEMPT_LEASE_SECONDS). */
export const RESOLVE_TIMEOUT_MS = 5_000;
const systemResolver: Resolver = (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('DNS timeout')), RESOLVE_TIMEOUT_MS);
  });
  return Promise.race([dnsLookup(host, { all: true, verbatim: true }), timeout]).finally(() => clearTimeout(timer));
};

export async function resolveWebhookTarget(
  raw: string,
  allowPrivate: boolean,
  resolver: Resolver = systemResolver,
): Promise<ResolvedTarget | { problem: string }> {
  const shape = urlShapeProblem(raw);
  if (shape) return { problem: shape };
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (ipaddr.isValid(host)) addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  else {
    try {
      addresses = await resolver(host);
    } catch {
      return { problem: `url host ${host} does not resolve` };
    }
  }
  if (addresses.length === 0) return { problem: `url host ${host} does not resolve` };
  if (!allowPrivate) {
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked) {
      return {
        problem: `url resolves to ${blocked.address}, a loopback, private, link-local or metadata address (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow)`,
      };
    }
  }
  const chosen = addresses[0];
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

/** A `lookup` for http.request that always answers with the vetted address. */
export function pinnedLookup(target: ResolvedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (err: null, addresses: { address: string; family: number }[]) => void)(null, [
        { address: target.address, family: target.family },
      ]);
    } else callback(null, target.address, target.family);
  };
}
