/**
 * Failover between relays, on real smtp-server sinks: an account names a fallback account; its
 * mail goes through the fallback's relay while its own refuses our AUTH (the account is paused)
 * or does not answer for `failover_after_seconds`, and through its own again once it is saved
 * (AUTH) or answers a connection test (down). Each message is relayed once, and its timeline,
 * its report item and `/status` say which account's relay sent it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sink(options: Parameters<typeof startSmtpSink>[0] = {}): Promise<SmtpSink> {
  const started = await startSmtpSink(options);
  cleanups.push(() => started.stop());
  return started;
}

async function daemon(): Promise<{ fx: QueueFixture; key: string }> {
  const fx = await startQueueFixture();
  cleanups.push(async () => {
    await fx.stop();
    fx.t.cleanup();
  });
  return { fx, key: await fx.createTenant('acme') };
}

/** Steps the dispatcher until `done` holds (each step waits for the sends it started). */
const settleUntil = (fx: QueueFixture, done: () => boolean, what: string) =>
  eventually(async () => {
    await fx.settle();
    return done();
  }, what);

/** A console page as the admin sees it, signed in with the admin token. */
async function consolePage(fx: QueueFixture, path: string): Promise<string> {
  const login = await fetch(`${fx.t.url}/ui/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ token: fx.t.adminToken }),
    redirect: 'manual',
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return (await fetch(`${fx.t.url}${path}`, { headers: { cookie } })).text();
}

const idsIn = (received: SmtpSink): string[] =>
  received.messages.map((mail) => /^Subject: subject (\S+)$/m.exec(mail.raw.toString())?.[1] ?? '?').sort();

describe('failover between relays', () => {
  it('sends through the fallback while the relay refuses our AUTH, each message once, and through its own once the account is saved', async () => {
    const primary = await sink({ auth: { user: 'acme', pass: 'right' } });
    const backup = await sink();
    const { fx, key } = await daemon();
    await fx.createAccount('acme', 'backup', backup);
    await fx.createAccount('acme', 'main', primary, {
      is_default: true,
      user: 'acme',
      password: 'wrong',
      fallback_accounts: ['backup'],
    });
    await fx.post(key, [message('a1'), message('a2'), message('a3')]);
    await settleUntil(fx, () => backup.messages.length === 3, 'the three through the fallback');
    await fx.t.daemon.dispatcher.idle();
    expect(idsIn(backup)).toEqual(['a1', 'a2', 'a3']);
    expect(primary.messages).toHaveLength(0);

    const detail = await fx.detail('acme', 'a1');
    expect(detail.message.state).toBe('sent');
    expect(detail.message.account_id).toBe('main');
    const sent = detail.events.find((event) => event.event_type === 'sent');
    expect(sent?.data).toMatchObject({ via_account_id: 'backup' });
    const status = await fx.admin('GET', '/status');
    expect(status.body.failover).toEqual([
      expect.objectContaining({ tenant_id: 'acme', account_id: 'main', via_account_id: 'backup', cause: 'paused' }),
    ]);
    // The account says so too: GET /accounts, and the console's account list.
    const accounts = await fx.admin('GET', '/accounts?tenant_id=acme');
    const listed = (accounts.body.accounts as Array<Record<string, unknown>>).find((account) => account.id === 'main');
    expect(listed?.failover).toMatchObject({ via_account_id: 'backup', cause: 'paused' });
    expect(await consolePage(fx, '/ui/accounts')).toMatch(/via backup<\/span> <span class="muted">paused/);

    // The operator fixes the password: saving the account resumes it, and new mail is its own again.
    await fx.createAccount('acme', 'main', primary, { password: 'right' });
    await fx.post(key, [message('b1')]);
    await settleUntil(fx, () => primary.messages.length === 1, 'b1 through its own relay');
    expect(idsIn(primary)).toEqual(['b1']);
    expect(backup.messages).toHaveLength(3);
    const own = await fx.detail('acme', 'b1');
    expect(own.events.find((event) => event.event_type === 'sent')?.data ?? {}).not.toHaveProperty('via_account_id');
    expect((await fx.admin('GET', '/status')).body.failover).toEqual([]);
  });

  it('fails over from a relay that does not answer after failover_after_seconds, and takes its mail back once it answers a test', async () => {
    const gone = await startSmtpSink();
    const port = gone.port;
    await gone.stop();
    const backup = await sink();
    const { fx, key } = await daemon();
    await fx.createAccount('acme', 'backup', backup);
    await fx.createAccount(
      'acme',
      'main',
      { port },
      {
        is_default: true,
        fallback_accounts: ['backup'],
        failover_after_seconds: 30,
      },
    );

    // The first attempt is refused a connection: deferred, not yet failed over.
    await fx.post(key, [message('d1')]);
    await fx.settle();
    await fx.t.daemon.dispatcher.idle();
    expect((await fx.detail('acme', 'd1')).message.state).toBe('deferred');
    expect((await fx.admin('GET', '/status')).body.failover).toEqual([]);

    // Past failover_after_seconds (and d1's retry instant): its mail goes through the fallback.
    fx.clock.advance(61_000);
    await fx.post(key, [message('d2')]);
    await settleUntil(fx, () => backup.messages.length === 2, 'd1 and d2 through the fallback');
    expect(idsIn(backup)).toEqual(['d1', 'd2']);
    expect((await fx.admin('GET', '/status')).body.failover).toEqual([
      expect.objectContaining({ account_id: 'main', via_account_id: 'backup', cause: 'unreachable' }),
    ]);

    // The relay is back on its port: the next connection test passes, and new mail is its own again.
    const back = await sink({ port });
    fx.clock.advance(31_000);
    await fx.settle();
    await eventually(
      async () => ((await fx.admin('GET', '/status')).body.failover as unknown[]).length === 0,
      'the relay to take its mail back',
    );
    await fx.post(key, [message('d3')]);
    await settleUntil(fx, () => back.messages.length === 1, 'd3 through its own relay');
    expect(idsIn(back)).toEqual(['d3']);
    expect(backup.messages).toHaveLength(2);
  });

  it('refuses a fallback that is not an account of the tenant, itself, or of the other kind', async () => {
    const relay = await sink();
    const { fx } = await daemon();
    await fx.createAccount('acme', 'main', relay, { is_default: true });
    for (const fallbacks of [['nowhere'], ['main'], ['main', 'main']]) {
      const refused = await fx.admin('POST', '/account', {
        id: 'main',
        tenant_id: 'acme',
        host: '127.0.0.1',
        port: relay.port,
        tls_mode: 'none',
        fallback_accounts: fallbacks,
      });
      expect(refused.status, JSON.stringify(fallbacks)).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_FAILED');
    }
  });
});
