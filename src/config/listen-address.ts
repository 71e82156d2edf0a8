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
