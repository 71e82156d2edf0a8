/**
 * SSRF guard for attachments fetched by URL: only http(s), and never an address
 * inside our own networks (loopback, private, link-local, CGNAT, multicast ...).
 * The check runs inside the socket's `lookup`, so the address checked is the one connected to.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const FORBIDDEN_V4: ReadonlyArray<[string, number]> = [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT, RFC 6598
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast
];

const FORBIDDEN_V6: ReadonlyArray<[string, number]> = [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible range
  ['fe80::', 10], // link-local
  ['fc00::', 7], // unique-local
  ['ff00::', 8], // multicast
];

function buildBlockList(): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of FORBIDDEN_V4) list.addSubnet(network, prefix, 'ipv4');
  for (const [network, prefix] of FORBIDDEN_V6) list.addSubnet(network, prefix, 'ipv6');
  return list;
}

const FORBIDDEN = buildBlockList();

/** True when `address` (an IP literal) must not be fetched from; IPv4-mapped IPv6 counts as its IPv4. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  // BlockList matches ::ffff:a.b.c.d against the IPv4 subnets itself.
  return FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The address policy: true when a connection to `address` must be refused. */
export type AddressPolicy = (address: string) => boolean;

/** Why a URL may not be fetched, or null; `isForbidden` null = any address goes. */
export function refuseUrl(url: URL, isForbidden: AddressPolicy | null): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} not allowed`;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // An IP literal is never looked up, so it is checked here.
  if (isForbidden !== null && isIP(host) !== 0 && isForbidden(host)) return `address ${host} not allowed`;
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type GuardedLookup = (
  hostname: string,
  options: LookupOneOptions | LookupAllOptions,
  callback: LookupCallback,
) => void;

/** Error code of a refusal by the guarded lookup, so callers can tell it from a DNS failure. */
export const FORBIDDEN_ADDRESS = 'EFORBIDDENADDRESS';

/**
 * A `lookup` for http.request that resolves every address of the host and
 * refuses the connection if any of them is forbidden; the socket then connects
 * to an address that was checked (no DNS-rebinding window).
 */
export function createGuardedLookup(isForbidden: AddressPolicy): GuardedLookup {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { family: options.family ?? 0, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const bad = addresses.find((entry) => isForbidden(entry.address));
      if (bad !== undefined || addresses.length === 0) {
        const refusal: NodeJS.ErrnoException = new Error(
          `address ${bad?.address ?? 'none'} of ${hostname} not allowed`,
        );
        refusal.code = FORBIDDEN_ADDRESS;
        return callback(refusal, []);
      }
      if (options.all === true) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
