/**
 * `mailproxy accounts test` and `accounts resume`: the built CLI as a real process,
 * against a running daemon and real smtp-server sinks.
 */
import { describe, expect, it } from 'vitest';
import { closedPort, runCli } from '../helpers/cli-process.js';
import { message, useSharedAcmeDaemon } from '../helpers/queue-fixture.js';
import { startSmtpSink } from '../peers/smtp-sink.js';

const s = useSharedAcmeDaemon();

const cli = (args: string[]) =>
  runCli(args, { env: { MAILPROXY_URL: s.fx.t.url, MAILPROXY_TOKEN: s.fx.t.adminToken } });

describe('mailproxy accounts test', () => {
  it('prints each step and exits 0 when the relay takes the stored credentials', async () => {
    const sink = await s.sink({ auth: { user: 'u1', pass: 'right' } });
    await s.fx.createAccount('acme', 'good', sink, { user: 'u1', password: 'right' });
    const run = await cli(['accounts', 'test', 'good', '--tenant', 'acme']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^connection test of account good: ok$/m);
    expect(run.stdout).toMatch(/^STEP\s+RESULT\s+REPLY\s+TIME/m);
    expect(run.stdout).toMatch(/^auth\s+ok\s+235 /m);
    expect(run.stdout).toMatch(/^quit\s+ok\s+221 /m);
    expect(run.stdout).toMatch(/^tls\s+none$/m);
    expect(sink.messages).toEqual([]);
  });

  it('exits 1 and names the step when the relay refuses the password, as a table and as JSON', async () => {
    const sink = await s.sink({ auth: { user: 'u1', pass: 'right' } });
    await s.fx.createAccount('acme', 'bad', sink, { user: 'u1', password: 'wrong' });
    const run = await cli(['accounts', 'test', 'bad', '--tenant', 'acme']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^connection test of account bad: failed: AUTH: 535 /m);
    expect(run.stdout).toMatch(/^auth\s+FAILED\s+535 /m);
    const json = await cli(['accounts', 'test', 'bad', '--tenant', 'acme', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, failed_step: 'auth', error_code: 'EAUTH' });
  });

  it('exits 1 at connect when nothing listens, within --timeout', async () => {
    await s.fx.createAccount('acme', 'gone', { port: await closedPort() });
    const run = await cli(['accounts', 'test', 'gone', '--tenant', 'acme', '--timeout', '2']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^connect\s+FAILED\s+-/m);
  });

  it('answers a usage error for a timeout that is not a number, and the API error for an unknown account', async () => {
    expect((await cli(['accounts', 'test', 'good', '--tenant', 'acme', '--timeout', 'soon'])).code).toBe(64);
    const missing = await cli(['accounts', 'test', 'nobody', '--tenant', 'acme']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/NOT_FOUND/);
  });
});

describe('mailproxy accounts resume', () => {
  it('resumes an account paused by a 535, and says so when it was not paused', async () => {
    const sink = await startSmtpSink({ auth: { user: 'u1', pass: 'right' } });
    await s.fx.createAccount('acme', 'stuck', sink, { user: 'u1', password: 'wrong' });
    await s.fx.post(s.key, [message('c-1', { account_id: 'stuck' })]);
    await s.fx.settle();
    expect((await s.fx.admin('GET', '/account/stuck?tenant_id=acme')).body.account.state).toBe('paused');
    // Gone now: the retry the resume wakes is refused (deferred), not refused at AUTH (paused again).
    await sink.stop();

    const resumed = await cli(['accounts', 'resume', 'stuck', '--tenant', 'acme']);
    expect(resumed).toMatchObject({ code: 0, stdout: 'account stuck resumed\n' });
    expect((await s.fx.admin('GET', '/account/stuck?tenant_id=acme')).body.account.paused_reason).toBeNull();
    const again = await cli(['accounts', 'resume', 'stuck', '--tenant', 'acme', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, resumed: false, account: { state: 'active' } });
  });
});
