/** `host:port` listen addresses, with IPv6 hosts in brackets (`[::1]:8000`). */

export interface ListenAddress {
  host: string;
  port: number;
}

const PATTERN = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/;

export function parseListenAddress(text: string): ListenAddress | null {
  const match = PATTERN.exec(text);
  if (match === null) return null;
  const port = Number(match[3]);
  if (port > 65535) return null;
  return { host: match[1] ?? match[2] ?? '', port };
}

export function formatListenAddress(address: ListenAddress): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

/** Every address of the machine: no client connects to it as such. */
export const isWildcard = (host: string): boolean => host === '0.0.0.0' || host === '::' || host === '';

/**
 * The base URL (no trailing slash) a client on this machine reaches an HTTP
 * listener at: a wildcard address (every interface) is reached on loopback.
 */
export function localHttpUrl(address: ListenAddress): string {
  const host = isWildcard(address.host) ? (address.host === '::' ? '::1' : '127.0.0.1') : address.host;
  return `http://${formatListenAddress({ host, port: address.port })}`;
}
