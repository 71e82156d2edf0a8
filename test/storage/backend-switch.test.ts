/**
 * A daemon whose large bodies went to the embedded body store, restarted without a body store
 * (`[storage] backend = "database"`), still relays the mail that waits with its body there; and a
 * body that no store it can reach holds is retried, never taken for lost. Started as a fleet node,
 * whose transfers carry bodies from the database only, it refuses until that mail is sent.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startNatsServer, type NatsPeer } from '../peers/nats-server.js';

const large = (tag: string): string => `${tag}:`.padEnd(200 * 1024, `${tag} lorem ipsum `);

describe('a body store switched off with mail waiting in it', () => {
  let sink: SmtpSink;
  let fx: QueueFixture;
  let dataDir: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    const first = await startQueueFixture();
    dataDir = first.t.dataDir;
    const key = await first.createTenant('acme');
    await first.createAccount('acme', 'main', sink, { is_default: true });
    await first.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    const posted = await first.post(key, [
      message('kept-in-bodies', { body: large('kept-in-bodies') }),
      message('body-elsewhere', { body: large('body-elsewhere') }),
    ]);
    expect(posted.body.queued).toBe(2);
    await first.stop();
    fx = await startQueueFixture({ dataDir, extraToml: '[storage]\nbackend = "database"\n' });
  });
  afterAll(async () => {
    await fx?.stop();
    await sink?.stop();
    fx?.t.cleanup();
  });

  it('relays what the embedded store holds, and retries what no reachable store holds', async () => {
    // One body as if it had gone to a bucket this daemon is no longer configured with.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dataDir, 'mailproxy.db'), { readonly: true });
    const elsewhere = db
      .prepare(`SELECT body_object FROM messages WHERE id = 'body-elsewhere'`)
      .pluck()
      .get() as string;
    db.close();
    rmSync(join(dataDir, 'bodies', elsewhere.slice(0, 2), elsewhere));

    await fx.admin('POST', '/commands/activate', { tenant_id: 'acme' });
    await fx.settle();
    await sink.waitForMessages(1);
    expect(sink.messages[0]?.raw.toString('utf8').replace(/=\r\n/g, '')).toContain(
      large('kept-in-bodies').slice(0, 2000),
    );
    const waiting = (await fx.detail('acme', 'body-elsewhere')).message;
    expect(waiting.status).toBe('deferred');
    expect(waiting.error ?? waiting.deferred_reason).toMatch(/body store this daemon is not configured with/);
  });
});

describe('a node with mail waiting in its body store, started as a fleet node', () => {
  let nats: NatsPeer;
  let dataDir: string;
  afterAll(async () => {
    await nats?.destroy();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses to join until that mail is sent alone: the fleet would hand it over without its body', async () => {
    nats = await startNatsServer();
    const alone = await startQueueFixture();
    dataDir = alone.t.dataDir;
    const key = await alone.createTenant('acme');
    await alone.createAccount('acme', 'main', { port: 9 }, { is_default: true });
    await alone.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    expect((await alone.post(key, [message('waits-in-store', { body: large('waits-in-store') })])).body.queued).toBe(1);
    await alone.stop();

    const fleetNode = {
      MAILPROXY_NATS_URL: nats.url,
      MAILPROXY_FLEET_ENABLED: 'true',
      MAILPROXY_FLEET_NODE_ID: 'n1',
    };
    await expect(startQueueFixture({ dataDir, env: fleetNode })).rejects.toThrow(
      /1 messages still to be sent have their bodies in the body store this node used alone/,
    );
  });
});
