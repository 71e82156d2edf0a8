/**
 * POST /account/{id}/test against real smtp-server sinks: EHLO, STARTTLS, AUTH and QUIT
 * step by step with the relay's replies, nothing sent; and POST /account/{id}/resume
 * on an account that a real 535 paused.
 */
import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closedPort } from '../helpers/cli-process.js';
import { message, useSharedAcmeDaemon } from '../helpers/queue-fixture.js';
import { startSmtpSink } from '../peers/smtp-sink.js';

const s = useSharedAcmeDaemon();

const test = async (id: string, query = '') => s.fx.admin('POST', `/account/${id}/test?tenant_id=acme${query}`);
const stepsOf = (body: any) => body.steps.map((step: any) => [step.step, step.ok, step.reply_code]);

describe('POST /account/{id}/test', () => {
  it('passes EHLO, STARTTLS, AUTH and QUIT with the stored password, tells the TLS, and sends nothing', async () => {
    const relay = await s.sink({ tls: 'starttls', auth: { user: 'u1', pass: 'right' } });
    await s.fx.createAccount('acme', 'ok', relay, {
      tls_mode: 'starttls',
      user: 'u1',
      password: 'right',
      tls_reject_unauthorized: false,
    });
    const { status, body } = await test('ok');
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, failed_step: null, reason: null, stage: null });
    expect(stepsOf(body)).toEqual([
      ['connect', true, 220],
      ['ehlo', true, 250],
      ['starttls', true, 220],
      ['ehlo', true, 250],
      ['auth', true, 235],
      ['quit', true, 221],
    ]);
    expect(body.tls).toMatchObject({
      version: expect.stringMatching(/^TLSv1\.[23]$/),
      cipher: expect.any(String),
      certificate: 'untrusted',
    });
    expect(body.tls.certificate_error).toMatch(/SELF_SIGNED/);
    for (const step of body.steps) expect(step.duration_ms).toBeGreaterThanOrEqual(0);
    expect(relay.messages).toEqual([]);
  });

  it('fails at AUTH with the relay 535 when the password is wrong, naming the step as a paused account does', async () => {
    const relay = await s.sink({ auth: { user: 'u1', pass: 'right' } });
    await s.fx.createAccount('acme', 'badpw', relay, { user: 'u1', password: 'wrong' });
    const { status, body } = await test('badpw');
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: false, failed_step: 'auth', stage: 'auth', error_code: 'EAUTH' });
    expect(body.reason).toMatch(/^AUTH: 535 /);
    expect(body.steps.at(-1)).toMatchObject({ step: 'auth', ok: false, reply_code: 535 });
    expect(body.tls).toBeNull();
  });

  it('fails at STARTTLS when the account requires it and the relay does not offer it', async () => {
    const relay = await s.sink({ tls: 'none', auth: { user: 'u1', pass: 'right' } });
    await s.fx.createAccount('acme', 'notls', relay, { tls_mode: 'starttls', user: 'u1', password: 'right' });
    const { body } = await test('notls');
    expect(body).toMatchObject({ ok: false, failed_step: 'starttls', stage: 'tls' });
    expect(body.reason).toMatch(/^STARTTLS: /);
    expect(stepsOf(body).slice(0, 2)).toEqual([
      ['connect', true, 220],
      ['ehlo', true, 250],
    ]);
    expect(body.steps[2]).toMatchObject({ step: 'starttls', ok: false, reply_code: expect.any(Number) });
  });

  it('fails at connect on implicit TLS when the certificate is not trusted and verification is on', async () => {
    const relay = await s.sink({ tls: 'implicit', auth: { user: 'u1', pass: 'right' } });
    await s.fx.createAccount('acme', 'untrusted', relay, { tls_mode: 'implicit', user: 'u1', password: 'right' });
    const { body } = await test('untrusted');
    expect(body).toMatchObject({
      ok: false,
      failed_step: 'connect',
      stage: 'tls',
      tls: { certificate: 'rejected', certificate_error: 'DEPTH_ZERO_SELF_SIGNED_CERT' },
    });
    expect(body.reason).toMatch(/^connect: .*self[- ]signed certificate/i);
  });

  it('fails at connect when the relay refuses the connection', async () => {
    await s.fx.createAccount('acme', 'refused', { port: await closedPort() });
    const { body } = await test('refused');
    expect(body).toMatchObject({ ok: false, failed_step: 'connect', stage: 'connect', error_code: 'ECONNREFUSED' });
    expect(body.steps).toEqual([expect.objectContaining({ step: 'connect', ok: false, reply_code: null })]);
  });

  it('fails at connect within the timeout when the relay accepts and never answers', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    s.cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    await s.fx.createAccount('acme', 'silent', { port: (silent.address() as { port: number }).port });
    const started = Date.now();
    const { body } = await test('silent', '&timeout_seconds=1');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(body).toMatchObject({ ok: false, failed_step: 'connect', stage: 'timeout' });
    expect(body.steps[0].duration_ms).toBeGreaterThanOrEqual(900);
  });

  it('answers 404 for an unknown account and 400 for a timeout out of range', async () => {
    expect((await test('nobody')).body.error.code).toBe('NOT_FOUND');
    const bad = await test('refused', '&timeout_seconds=0');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
  });
});

describe('POST /account/{id}/resume', () => {
  it('resumes an account that a 535 paused: the dispatcher wakes and its waiting mail is sent, without saving the account', async () => {
    const before = await startSmtpSink({ auth: { user: 'u1', pass: 'right' } });
    await s.fx.createAccount('acme', 'paused', before, { user: 'u1', password: 'stored' });
    await s.fx.post(s.key, [message('r-1', { account_id: 'paused' })]);
    await s.fx.settle();
    const paused = (await s.fx.admin('GET', '/account/paused?tenant_id=acme')).body.account;
    expect(paused).toMatchObject({ state: 'paused', paused_reason: expect.stringMatching(/^AUTH: 535/) });

    // The relay's side is fixed (it now takes the stored password): nothing about the account changes.
    await before.stop();
    const after = await s.sink({ port: before.port, auth: { user: 'u1', pass: 'stored' } });
    const resumed = await s.fx.admin('POST', '/account/paused/resume?tenant_id=acme');
    expect(resumed.body).toMatchObject({ ok: true, resumed: true, account: { paused_reason: null, paused_at: null } });
    await after.waitForMessages(1);
    expect(after.messages[0]?.rcptTo).toEqual(['rcpt@example.net']);

    const again = await s.fx.admin('POST', '/account/paused/resume?tenant_id=acme');
    expect(again.body).toMatchObject({ ok: true, resumed: false });
  });

  it("answers 404 to another tenant's key", async () => {
    const otherKey = await s.fx.createTenant('other');
    const { api } = await import('../helpers/test-daemon.js');
    const { status } = await api(s.fx.t.url, 'POST', '/account/paused/resume', { token: otherKey });
    expect(status).toBe(404);
  });
});
