/**
 * A tenant's default account over HTTP: explicit (`is_default`, one per tenant), the
 * first account's by itself, serving the messages without `account_id`, and the
 * warnings of the changes that leave a tenant without one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

let fx: QueueFixture;
let sink: SmtpSink;

beforeAll(async () => {
  sink = await startSmtpSink();
  fx = await startQueueFixture();
});
afterAll(async () => {
  await fx?.stop();
  fx?.t.cleanup();
  await sink?.stop();
});

const saveAccount = (tenantId: string, id: string, fields: Record<string, unknown> = {}) =>
  fx.admin('POST', '/account', {
    id,
    tenant_id: tenantId,
    host: '127.0.0.1',
    port: sink.port,
    tls_mode: 'none',
    ...fields,
  });

/** [id, is_default] of each of the tenant's accounts, as GET /accounts lists them. */
async function marks(tenantId: string): Promise<Array<[string, boolean]>> {
  const list = await fx.admin('GET', `/accounts?tenant_id=${tenantId}`);
  expect(list.status, list.text).toBe(200);
  return list.body.accounts.map((account: { id: string; is_default: boolean }) => [account.id, account.is_default]);
}

/** Posts one message without account_id as `tenantId` (with its key); answers the account it was queued for, or the rejection. */
async function sendWithoutAccount(
  tenantId: string,
  key: string,
  id: string,
): Promise<string | { code: string; reason: string }> {
  const posted = await fx.post(key, [message(id)]);
  expect(posted.status, posted.text).toBeLessThan(300);
  const [rejected] = posted.body.rejected;
  if (rejected !== undefined) return { code: rejected.code, reason: rejected.reason };
  return (await fx.detail(tenantId, id)).message.account_id as string;
}

const tenant = (id: string): Promise<string> => fx.createTenant(id);

describe("a tenant's default account", () => {
  it('is its first account, without a word of warning; a second account leaves it in place, and messages without account_id go to it', async () => {
    const key = await tenant('solo');
    const first = await saveAccount('solo', 'main');
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ created: true, account: { id: 'main', is_default: true }, warnings: [] });
    const second = await saveAccount('solo', 'second');
    expect(second.body).toMatchObject({ created: true, account: { id: 'second', is_default: false }, warnings: [] });
    expect(await marks('solo')).toEqual([
      ['main', true],
      ['second', false],
    ]);
    expect((await fx.admin('GET', '/account/main?tenant_id=solo')).body.account.is_default).toBe(true);
    expect(await sendWithoutAccount('solo', key, 'solo-1')).toBe('main');
  });

  it("moves to an account saved with is_default true, cleared on the tenant's other accounts, and the answer says it moved", async () => {
    const key = await tenant('mover');
    await saveAccount('mover', 'old');
    await saveAccount('mover', 'new');
    const moved = await saveAccount('mover', 'new', { is_default: true });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.warnings).toEqual([
      {
        code: 'DEFAULT_ACCOUNT_CHANGED',
        message: 'messages of tenant mover that name no account now go through new (before: old)',
      },
    ]);
    expect(await marks('mover')).toEqual([
      ['new', true],
      ['old', false],
    ]);
    expect(await sendWithoutAccount('mover', key, 'mover-1')).toBe('new');
  });

  it('is gone when the default account is deleted: the answer warns NO_DEFAULT_ACCOUNT, and a message without account_id is refused naming the accounts', async () => {
    const key = await tenant('orphan');
    await saveAccount('orphan', 'main');
    await saveAccount('orphan', 'backup');
    const deleted = await fx.admin('DELETE', '/account/main?tenant_id=orphan');
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({
      ok: true,
      warnings: [{ code: 'NO_DEFAULT_ACCOUNT', message: expect.stringContaining('its accounts: backup') }],
    });
    expect(await marks('orphan')).toEqual([['backup', false]]);

    const refused = await sendWithoutAccount('orphan', key, 'orphan-1');
    expect(refused).toEqual({
      code: 'NO_DEFAULT_ACCOUNT',
      reason:
        'account_id is required: the tenant has no default account (its accounts: backup; name one in account_id, or save one with is_default true)',
    });
    const named = await fx.post(key, [message('orphan-2', { account_id: 'backup' })]);
    expect(named.body).toMatchObject({ queued: 1, rejected: [] });

    // Marking one the default again is all it takes.
    expect((await saveAccount('orphan', 'backup', { is_default: true })).body.warnings).toEqual([]);
    expect(await sendWithoutAccount('orphan', key, 'orphan-3')).toBe('backup');
  });

  it('is none when the first account is saved with is_default false, and adding another says clients naming no account are refused', async () => {
    const key = await tenant('legacy');
    const first = await saveAccount('legacy', 'only', { is_default: false });
    expect(first.body.account.is_default).toBe(false);
    expect(first.body.warnings.map((warning: { code: string }) => warning.code)).toEqual(['NO_DEFAULT_ACCOUNT']);
    const added = await saveAccount('legacy', 'other');
    expect(added.status, added.text).toBe(201);
    expect(added.body.warnings).toEqual([
      {
        code: 'NO_DEFAULT_ACCOUNT',
        message:
          'tenant legacy has no default account: messages that name no account (account_id, or the SMTP user <tenant>/<account>) are refused; ' +
          'its accounts: only, other; save one with is_default true',
      },
    ]);
    expect(await sendWithoutAccount('legacy', key, 'legacy-1')).toMatchObject({ code: 'NO_DEFAULT_ACCOUNT' });
  });

  it("is marked on the console's overview", async () => {
    const key = await tenant('shown');
    await saveAccount('shown', 'main');
    await saveAccount('shown', 'spare');
    const login = await fetch(`${fx.t.url}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: key }),
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const html = await (await fetch(`${fx.t.url}/ui/overview`, { headers: { cookie } })).text();
    const row = (id: string): string => new RegExp(`<tr><td>shown/${id}.*?</tr>`).exec(html)?.[0] ?? '';
    expect(row('main')).toMatch(/<span class="badge"[^>]*>default<\/span>/);
    expect(row('spare')).not.toBe('');
    expect(row('spare')).not.toContain('>default<');
  });

  it('is answered to a tenant key too, for its own accounts', async () => {
    const key = await tenant('selfserve');
    const created = await api(fx.t.url, 'POST', '/account', {
      token: key,
      body: { id: 'mine', host: '127.0.0.1', port: sink.port, tls_mode: 'none' },
    });
    expect(created.body).toMatchObject({ created: true, account: { is_default: true }, warnings: [] });
  });
});
