/**
 * `use_tls`, the TLS setting of genro-mail-proxy's clients, means what it means
 * there: false a plain connection, true implicit TLS on port 465 and STARTTLS
 * (required) on any other port. Shown on real sinks on the real ports 465 and
 * 587, on loopback addresses of their own.
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

/**
 * A loopback address of this run's own (Linux answers all of 127/8): away from 127.0.0.1,
 * where a machine's own MTA may listen on 465 or 587, and from another run of this file.
 */
const loopback = (): string => `127.${1 + randomInt(254)}.${randomInt(256)}.${1 + randomInt(254)}`;
const HOST = loopback();
/** A second address for a sink on 587 that offers no STARTTLS. */
const PLAIN_587_HOST = loopback();

describe('use_tls as genro-mail-proxy reads it', () => {
  let fx: QueueFixture;
  let key: string;
  let plain: SmtpSink;
  let starttls587: SmtpSink;
  let plain587: SmtpSink;
  let implicit465: SmtpSink;

  /** Creates the account with only these TLS-related fields (no tls_mode) and answers its view. */
  const account = async (id: string, fields: Record<string, unknown>): Promise<Record<string, any>> => {
    const response = await fx.admin('POST', '/account', {
      id,
      tenant_id: 'acme',
      tls_reject_unauthorized: false,
      ...fields,
    });
    expect(response.status, response.text).toBe(201);
    return response.body.account;
  };

  const deliveredTo = async (sink: SmtpSink, id: string): Promise<{ secure: boolean }> => {
    await fx.settle();
    await sink.waitForMessages(1);
    const received = sink.messages.find((candidate) => candidate.raw.includes(`X-Genro-Mail-ID: ${id}`));
    expect(received, `${id} at the sink`).toBeDefined();
    expect((await fx.detail('acme', id)).message.status).toBe('sent');
    return { secure: received?.secure ?? false };
  };

  beforeAll(async () => {
    plain = await startSmtpSink({ tls: 'none' });
    starttls587 = await startSmtpSink({ tls: 'starttls', host: HOST, port: 587 });
    plain587 = await startSmtpSink({ tls: 'none', host: PLAIN_587_HOST, port: 587 });
    implicit465 = await startSmtpSink({ tls: 'implicit', host: HOST, port: 465 });
    fx = await startQueueFixture();
    key = await fx.createTenant('acme');
  });
  afterAll(async () => {
    await fx?.stop();
    fx?.t.cleanup();
    for (const sink of [plain, starttls587, plain587, implicit465]) await sink?.stop();
  });

  it('use_tls false relays in plain text to a relay that offers no STARTTLS', async () => {
    const view = await account('plain', { host: '127.0.0.1', port: plain.port, use_tls: false });
    expect(view).toMatchObject({ tls_mode: 'none', use_tls: false });
    await fx.post(key, [message('genro-plain', { account_id: 'plain' })]);
    expect(await deliveredTo(plain, 'genro-plain')).toEqual({ secure: false });
  });

  it('use_tls true on port 587 upgrades with STARTTLS', async () => {
    const view = await account('submission', { host: HOST, port: 587, use_tls: true });
    expect(view).toMatchObject({ tls_mode: 'starttls', use_tls: true, port: 587 });
    await fx.post(key, [message('genro-587', { account_id: 'submission' })]);
    expect(await deliveredTo(starttls587, 'genro-587')).toEqual({ secure: true });
  });

  it('use_tls true on port 587 requires STARTTLS: a relay without it gets nothing and the account is paused', async () => {
    const view = await account('no-starttls', { host: PLAIN_587_HOST, port: 587, use_tls: true });
    expect(view).toMatchObject({ tls_mode: 'starttls', use_tls: true });
    await fx.post(key, [message('genro-587-refused', { account_id: 'no-starttls' })]);
    await fx.settle();
    await fx.settle();
    const accounts = await fx.admin('GET', '/accounts?tenant_id=acme');
    const paused = (accounts.body.accounts as Array<Record<string, any>>).find(
      (candidate) => candidate.id === 'no-starttls',
    );
    expect(paused).toMatchObject({ state: 'paused' });
    expect(paused?.paused_reason).toMatch(/^TLS: /);
    expect(plain587.messages).toHaveLength(0);
    expect((await fx.detail('acme', 'genro-587-refused')).message.status).not.toBe('sent');
  });

  it('use_tls true on port 465 is implicit TLS', async () => {
    const view = await account('smtps', { host: HOST, port: 465, use_tls: true });
    expect(view).toMatchObject({ tls_mode: 'implicit', use_tls: true, port: 465 });
    await fx.post(key, [message('genro-465', { account_id: 'smtps' })]);
    expect(await deliveredTo(implicit465, 'genro-465')).toEqual({ secure: true });
  });

  it('use_tls null or absent is implicit TLS on port 465, STARTTLS for a new account on another port, and tls_mode wins when both are given', async () => {
    expect(await account('null-465', { host: HOST, port: 465, use_tls: null })).toMatchObject({ tls_mode: 'implicit' });
    expect(await account('absent-465', { host: HOST, port: 465 })).toMatchObject({ tls_mode: 'implicit' });
    expect(await account('null-587', { host: HOST, port: 587, use_tls: null })).toMatchObject({ tls_mode: 'starttls' });
    expect(await account('both', { host: HOST, port: 587, use_tls: true, tls_mode: 'implicit' })).toMatchObject({
      tls_mode: 'implicit',
      use_tls: true,
    });
    const contradiction = await fx.admin('POST', '/account', {
      id: 'contradiction',
      tenant_id: 'acme',
      host: HOST,
      use_tls: false,
      tls_mode: 'starttls',
    });
    expect(contradiction.status).toBe(400);
    expect(contradiction.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('an update that gives only use_tls reads it on the stored port', async () => {
    await account('updated', { host: HOST, port: 587, tls_mode: 'none' });
    const updated = await fx.admin('POST', '/account', { id: 'updated', tenant_id: 'acme', host: HOST, use_tls: true });
    expect(updated.body.account).toMatchObject({ tls_mode: 'starttls', port: 587 });
  });
});
