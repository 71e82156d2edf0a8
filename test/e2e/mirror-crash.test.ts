import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import { serveUntilListening } from '../helpers/daemon-process.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { api } from '../helpers/test-daemon.js';
import { readStream, startNatsServer, type NatsPeer } from '../peers/nats-server.js';

const TOTAL = 3000;
const { dirs, running } = tearDownProcesses();
const peers: NatsPeer[] = [];
afterEach(async () => {
  for (const peer of peers.splice(0)) await peer.destroy();
});

async function streamCount(url: string): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    return (await (await jetstreamManager(nc)).streams.info('MAILPROXY')).state.messages;
  } finally {
    await nc.close();
  }
}

describe('the real process SIGKILLed while it publishes a backlog', () => {
  it('publishes again what it had not marked, and the stream holds every event exactly once', async () => {
    const nats = await startNatsServer();
    peers.push(nats);
    const cwd = mkdtempSync(join(tmpdir(), 'mailproxy-mirror-crash-'));
    dirs.push(cwd);
    // Large windows: the kill lands while acknowledgements of a window are still coming in.
    const env = {
      MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
      MAILPROXY_NATS_URL: nats.url,
      MAILPROXY_NATS_MAX_IN_FLIGHT: '2000',
      MAILPROXY_NATS_CONNECT_TIMEOUT_SECONDS: '1',
    };
    const first = await serveUntilListening(cwd, env, running);
    const token = readFileSync(join(cwd, 'data', 'admin-token'), 'utf8').trim();
    const admin = (url: string, method: string, path: string, body?: unknown) =>
      api(url, method, path, { token, body });
    expect((await admin(first.url, 'POST', '/tenant', { id: 'acme' })).status).toBe(201);
    expect(
      (
        await admin(first.url, 'POST', '/account', {
          id: 'main',
          tenant_id: 'acme',
          host: '127.0.0.1',
          port: 9,
          tls_mode: 'none',
          is_default: true,
        })
      ).status,
    ).toBe(201);
    await admin(first.url, 'POST', '/commands/suspend', { tenant_id: 'acme' });

    // A backlog built while NATS is away, then NATS back and the process killed in the middle of publishing it.
    await expect.poll(async () => (await admin(first.url, 'GET', '/mirror/status')).body.mirror.backlog).toBe(0);
    const beforeOutage = await streamCount(nats.url);
    await nats.stop();
    for (let start = 0; start < TOTAL; start += 500) {
      const messages = Array.from({ length: 500 }, (_, index) => ({
        id: `m-${start + index}`,
        from: 'a@example.com',
        to: 'b@example.net',
        subject: 's',
        body: 'b',
      }));
      const posted = await admin(first.url, 'POST', '/add-messages', {
        messages: messages.map((m) => ({ ...m, tenant_id: 'acme' })),
      });
      expect(posted.body, posted.text).toMatchObject({ queued: 500 });
    }
    await nats.start();
    const deadline = Date.now() + 30_000;
    while ((await streamCount(nats.url).catch(() => 0)) <= beforeOutage && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    first.daemon.child.kill('SIGKILL');
    await first.daemon.exited;
    const atKill = await streamCount(nats.url);
    const db = new Database(join(cwd, 'data', 'mailproxy.db'), { readonly: true });
    const cursorAtKill = db.prepare(`SELECT cursor_seq FROM mirror_state`).pluck().get() as number;
    db.close();
    // Killed between publishes and their mark: the stream holds events the database does not know it published.
    expect(atKill).toBeGreaterThan(cursorAtKill);

    const second = await serveUntilListening(cwd, env, running);
    await expect
      .poll(async () => (await admin(second.url, 'GET', '/mirror/status')).body.mirror.backlog, { timeout: 30_000 })
      .toBe(0);
    const db2 = new Database(join(cwd, 'data', 'mailproxy.db'), { readonly: true });
    const outbox = db2.prepare(`SELECT id FROM outbox ORDER BY seq`).pluck().all() as string[];
    db2.close();
    const stored = await readStream(nats.url, 'MAILPROXY');
    const ids = stored.map((event) => event.msgId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(outbox.filter((id) => !ids.includes(id))).toEqual([]);
    expect(stored.filter((event) => event.body.event_type === 'message.queued')).toHaveLength(TOTAL);
    console.log(
      `mirror crash: ${atKill} events in the stream at the kill, cursor at ${cursorAtKill}; ${stored.length} events after the restart, none twice`,
    );
  }, 120_000);
});
