/**
 * Who an SMTP client is: a tenant (and maybe an account) by AUTH, or by the
 * network it connects from when the operator trusts that network.
 */
import { BlockList, isIPv4 } from 'node:net';

export interface SmtpIdentity {
  tenantId: string;
  accountId: string | null;
}

/**
 * The identity a successful AUTH gives a session, and nothing else: smtp-server
 * keeps whatever the AUTH callback returned in `session.user`, but also leaves
 * other values there (`false` after STARTTLS, which RFC 3207 §4.2 says must
 * forget the AUTH), so the session counts as signed in only when it holds one
 * of these.
 */
export class AuthenticatedIdentity implements SmtpIdentity {
  constructor(
    readonly tenantId: string,
    readonly accountId: string | null,
  ) {}
}

/** Signed in by AUTH, else the trusted network's identity, else nobody (null). */
export function sessionIdentity(user: unknown, trustedIdentity: () => SmtpIdentity | null): SmtpIdentity | null {
  return user instanceof AuthenticatedIdentity ? user : trustedIdentity();
}

export interface TrustedNetwork {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
  tenantId: string;
  accountId: string | null;
}

/** `::ffff:10.1.2.3` (an IPv4 client of a dual-stack listener) as `10.1.2.3`. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

export function isLoopback(address: string): boolean {
  const plain = plainAddress(address);
  return plain === '::1' || (isIPv4(plain) && plain.startsWith('127.'));
}

/** How many client addresses' answers are remembered (a LAN of legacy apps is a handful). */
const ADDRESSES_KEPT = 1024;

/**
 * The first listed network that holds the address wins. A session asks at every
 * command, and BlockList parses the address anew each time (costly at every
 * command of every message), so each address's answer is remembered.
 */
export function trustedNetworks(networks: readonly TrustedNetwork[]): (remoteAddress: string) => SmtpIdentity | null {
  const lists = networks.map((network) => {
    const list = new BlockList();
    list.addSubnet(network.address, network.prefix, network.family);
    return { list, identity: { tenantId: network.tenantId, accountId: network.accountId } };
  });
  const known = new Map<string, SmtpIdentity | null>();
  return (remoteAddress) => {
    const remembered = known.get(remoteAddress);
    if (remembered !== undefined) return remembered;
    const plain = plainAddress(remoteAddress);
    const family = isIPv4(plain) ? 'ipv4' : 'ipv6';
    const identity = lists.find(({ list }) => list.check(plain, family))?.identity ?? null;
    if (known.size >= ADDRESSES_KEPT) known.clear();
    known.set(remoteAddress, identity);
    return identity;
  };
}

/** AUTH user `<tenant_id>` or `<tenant_id>/<account_id>`; null when neither. */
export function parseUser(username: string): AuthenticatedIdentity | null {
  const slash = username.indexOf('/');
  const tenantId = slash === -1 ? username : username.slice(0, slash);
  const accountId = slash === -1 ? null : username.slice(slash + 1);
  if (tenantId === '' || accountId === '') return null;
  return new AuthenticatedIdentity(tenantId, accountId);
}
