import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serveUntilListening } from '../helpers/daemon-process.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { api } from '../helpers/test-daemon.js';
import { OK, startReportClient, type ReportClient } from '../peers/report-client.js';
import { startSmtpSink } from '../peers/smtp-sink.js';

const TOTAL = 200;
const ENV = {
  MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
  MAILPROXY_DISPATCH_RETRY_SCHEDULE_SECONDS: '1',
  MAILPROXY_DISPATCH_RETRY_JITTER: '0',
  MAILPROXY_DISPATCH_LEASE_SECONDS: '10',
  MAILPROXY_REPORTS_BATCH_SIZE: '25',
  MAILPROXY_REPORTS_BATCH_DELAY_MS: '20',
  // The round that is killed hangs; it must still be hanging when the kill comes.
  MAILPROXY_REPORTS_REQUEST_TIMEOUT_SECONDS: '120',
  MAILPROXY_REPORTS_RETRY_INITIAL_SECONDS: '0.2',
};

const { dirs, running, sinks } = tearDownProcesses();
const clients: ReportClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.stop();
});

const startDaemon = (cwd: string) => serveUntilListening(cwd, ENV, running);

describe('a SIGKILL in the middle of a report round', () => {
  it('loses no item: after the restart every outcome reaches the client, and only the interrupted batch may arrive twice', async () => {
    const sink = await startSmtpSink();
    sinks.push(sink);
    const client = await startReportClient();
    clients.push(client);
    const cwd = mkdtempSync(join(tmpdir(), 'mailproxy-report-crash-'));
    dirs.push(cwd);

    // Acknowledge reports until 60 items are in, then hang on the next one that carries items.
    const acknowledged = new Set<unknown>();
    const interrupted = new Set<unknown>();
    let phase: 'before' | 'hang' | 'after' = 'before';
    client.answer((report) => {
      if (report.items.length === 0 || phase === 'after') return OK;
      if (phase === 'before' && acknowledged.size < 60) {
        for (const item of report.items) acknowledged.add(item.event_id);
        return OK;
      }
      phase = 'hang';
      for (const item of report.items) interrupted.add(item.event_id);
      return 'hang';
    });

    const first = await startDaemon(cwd);
    const token = readFileSync(join(cwd, 'data', 'admin-token'), 'utf8').trim();
    const admin = (url: string, method: string, path: string, body?: unknown) =>
      api(url, method, path, { token, body });
    const tenant = await admin(first.url, 'POST', '/tenant', { id: 'acme', client_base_url: client.base });
    expect(tenant.status, tenant.text).toBe(201);
    expect(
      (
        await admin(first.url, 'POST', '/account', {
          id: 'main',
          tenant_id: 'acme',
          host: '127.0.0.1',
          port: sink.port,
          tls_mode: 'none',
        })
      ).status,
    ).toBe(201);
    const ids = Array.from({ length: TOTAL }, (_, index) => `r-${index}`);
    const posted = await admin(first.url, 'POST', '/add-messages', {
      messages: ids.map((id) => ({
        id,
        tenant_id: 'acme',
        from: 'sender@example.com',
        to: 'rcpt@example.net',
        subject: id,
        body: id,
      })),
    });
    expect(posted.body, posted.text).toMatchObject({ ok: true, queued: TOTAL });

    await client.waitFor('a report round hanging', () => client.hanging() === 1, 30_000);
    first.daemon.child.kill('SIGKILL');
    expect(await first.daemon.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(acknowledged.size).toBeGreaterThanOrEqual(60);
    expect(interrupted.size).toBeGreaterThan(0);

    phase = 'after';
    const second = await startDaemon(cwd);
    const sentIds = (): Set<unknown> =>
      new Set(
        client
          .items()
          .filter((item) => item.event === 'sent')
          .map((item) => item.id),
      );
    await client.waitFor('a sent item for every message', () => sentIds().size === TOTAL, 60_000);

    // Every event id that arrived more than once belongs to the interrupted batch.
    const seen = new Map<unknown, number>();
    for (const item of client.items()) seen.set(item.event_id, (seen.get(item.event_id) ?? 0) + 1);
    const repeated = [...seen].filter(([, count]) => count > 1).map(([eventId]) => eventId);
    expect(
      repeated.filter((eventId) => !interrupted.has(eventId)),
      'repeated items outside the interrupted batch',
    ).toEqual([]);
    expect([...seen.values()].every((count) => count <= 2)).toBe(true);
    // The interrupted batch itself was not lost either: it came again after the restart.
    for (const eventId of interrupted) expect(seen.get(eventId)).toBe(2);

    // And the store agrees: every outcome is marked reported, nothing is left behind.
    await expect
      .poll(async () => (await admin(second.url, 'GET', '/tenant/acme/sync-status')).body.sync_status.backlog, {
        timeout: 10_000,
      })
      .toBe(0);
    const details = await Promise.all(ids.map((id) => admin(second.url, 'GET', `/messages/${id}?tenant_id=acme`)));
    expect(
      details.filter((detail) => detail.body.message.reported_ts === null).map((detail) => detail.body.message.id),
    ).toEqual([]);
    expect(second.daemon.entries.filter((entry) => entry.level === 'error' || entry.level === 'fatal')).toEqual([]);
  }, 120_000);
});
