/**
 * What every outage test asks of the daemon while a peer is away and after it
 * is back: still up, and each accepted message at the sink exactly once.
 */
import { expect } from 'vitest';
import type { SinkMessage } from '../peers/smtp-sink.js';
import { api } from './test-daemon.js';

/** How many messages an outage test submits; raise it for a longer local run. */
export function outageMessageCount(fallback: number): number {
  const configured = Number(process.env.OUTAGE_MESSAGES ?? '');
  return Number.isInteger(configured) && configured > 0 ? configured : fallback;
}

/** Up (`/health` 200) and ready (`/ready` 200, a peer away never makes it unready); answers both bodies and the admin `/status`. */
export async function expectServing(
  url: string,
  adminToken: string,
): Promise<{ ready: Record<string, any>; status: Record<string, any> }> {
  // A pooled keep-alive socket the server closed while its event loop was blocked
  // (a test holding SQLite's lock) fails once with ECONNRESET; a new one must answer.
  const health = await api(url, 'GET', '/health').catch(() => api(url, 'GET', '/health'));
  expect(health.status).toBe(200);
  const ready = await api(url, 'GET', '/ready');
  expect(ready.status, ready.text).toBe(200);
  const status = await api(url, 'GET', '/status', { token: adminToken });
  expect(status.status).toBe(200);
  return { ready: ready.body, status: status.body };
}

/** How many copies of each X-Genro-Mail-ID the sink received. */
export function copiesById(messages: readonly SinkMessage[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const received of messages) {
    const id = /^X-Genro-Mail-ID: (.+)$/m.exec(received.raw.toString('utf8'))?.[1]?.trim() ?? '(none)';
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Every id in `ids` received exactly once, and nothing else. */
export function expectEachOnce(messages: readonly SinkMessage[], ids: readonly string[]): void {
  const counts = copiesById(messages);
  expect(
    [...counts.entries()].filter(([, count]) => count !== 1),
    'ids received more than once',
  ).toEqual([]);
  expect([...counts.keys()].sort()).toEqual([...ids].sort());
}
