/** `10.0.0.0/8`, `fd00::/8`, or a single address (a /32 or /128). */
import { isIP } from 'node:net';

export interface Network {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

export function parseNetwork(text: string): Network | null {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  if (rest.length > 0) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}
