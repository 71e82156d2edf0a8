/**
 * The upstream relay away, then back on the same port: refusing connections
 * (stopped), and answering 421 to every message. Intake goes on meanwhile,
 * the daemon says what is wrong, and once the relay is back every accepted
 * message reaches it exactly once without anyone stepping in.
 * (A relay that answers 451 to one message, or times out, is a retry of one
 * message: test/delivery/outcomes.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectEachOnce, expectServing, outageMessageCount } from '../helpers/outage-checks.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const COUNT = outageMessageCount(30);
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A daemon retrying every second, tenant `acme` whose default account `main` (2 connections) points at `port`. */
async function daemonFor(port: number): Promise<{ fx: QueueFixture; key: string }> {
  const fx = await startQueueFixture({ dispatch: { retry_schedule_seconds: '[1]' } });
  cleanups.push(async () => {
    await fx.stop();
    fx.t.cleanup();
  });
  const key = await fx.createTenant('acme');
  await fx.createAccount('acme', 'main', { port }, { is_default: true, max_connections: 2 });
  return { fx, key };
}

/** Half of the messages over HTTP, half over SMTP, each one accepted. */
async function submitDuringOutage(fx: QueueFixture, key: string, prefix: string): Promise<string[]> {
  const ids = Array.from({ length: COUNT }, (_, index) => `${prefix}-${index}`);
  const half = Math.ceil(COUNT / 2);
  const posted = await fx.post(
    key,
    ids.slice(0, half).map((id) => message(id)),
  );
  expect(posted.body).toMatchObject({ ok: true, queued: half, rejected: [] });
  const session = await openSubmission(fx.t.daemon.smtp?.plain?.port ?? 0);
  try {
    await session.login('acme', key);
    for (const id of ids.slice(half)) {
      const raw = `From: sender@example.com\r\nTo: rcpt@example.net\r\nSubject: ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\nbody of ${id}\r\n`;
      const info = await session.send({ from: 'sender@example.com', to: ['rcpt@example.net'] }, raw);
      expect(String(info.response)).toMatch(/^250 /);
    }
  } finally {
    session.close();
  }
  return ids;
}

/** Resolves once every message has been tried at least `attempts` times (and none was sent). */
async function triedEach(fx: QueueFixture, attempts: number): Promise<void> {
  await expect
    .poll(
      async () => {
        const listed = (await fx.admin('GET', '/messages?tenant_id=acme&limit=500')).body.messages as Array<{
          attempts: number;
          status: string;
        }>;
        return listed.length === COUNT && listed.every((row) => row.attempts >= attempts && row.status !== 'sent');
      },
      { timeout: 20_000, interval: 200 },
    )
    .toBe(true);
}

const sentCount = async (fx: QueueFixture): Promise<number> =>
  (await fx.admin('GET', '/messages?tenant_id=acme&status=sent&limit=500')).body.messages.length as number;

describe('upstream relay outage', () => {
  it('refusing connections, then back on the same port: every message accepted meanwhile is relayed exactly once', async () => {
    let sink: SmtpSink = await startSmtpSink();
    const port = sink.port;
    await sink.stop();
    cleanups.push(async () => sink.stop());
    const { fx, key } = await daemonFor(port);

    const ids = await submitDuringOutage(fx, key, 'refused');
    // Every message tried twice (the retry too) while the relay was away.
    await triedEach(fx, 2);
    const { status } = await expectServing(fx.t.url, fx.t.adminToken);
    expect(status.queue.waiting).toBe(COUNT);
    const account = (await fx.admin('GET', '/account/main?tenant_id=acme')).body.account;
    expect(account.last_error).toMatchObject({ text: expect.stringMatching(/ECONNREFUSED|connect/i) });
    expect(account.state).toBe('active');

    sink = await startSmtpSink({ port });
    await sink.waitForMessages(COUNT, 30_000);
    await expect.poll(() => sentCount(fx), { timeout: 10_000 }).toBe(COUNT);
    expectEachOnce(sink.messages, ids);
    expect((await fx.admin('GET', '/status')).body.queue.waiting).toBe(0);
  }, 60_000);

  it('answering 421 to every message, then accepting: every message is relayed exactly once', async () => {
    let down = true;
    let refusedAnswers = 0;
    const sink = await startSmtpSink({
      onRcpt: () => {
        if (!down) return null;
        refusedAnswers += 1;
        return { code: 421, message: '4.3.2 Service shutting down, try later' };
      },
    });
    cleanups.push(async () => sink.stop());
    const { fx, key } = await daemonFor(sink.port);

    const ids = await submitDuringOutage(fx, key, 'busy');
    await triedEach(fx, 2);
    await expectServing(fx.t.url, fx.t.adminToken);
    const detail = await fx.detail('acme', ids[0] ?? '');
    expect(detail.message).toMatchObject({ last_reply_code: 421 });
    expect(detail.events.filter((event) => event.event_type === 'deferred').length).toBeGreaterThanOrEqual(2);
    expect(sink.messages).toEqual([]);

    down = false;
    await sink.waitForMessages(COUNT, 30_000);
    await expect.poll(() => sentCount(fx), { timeout: 10_000 }).toBe(COUNT);
    expectEachOnce(sink.messages, ids);
    expect(refusedAnswers).toBeGreaterThanOrEqual(COUNT);
  }, 60_000);
});
