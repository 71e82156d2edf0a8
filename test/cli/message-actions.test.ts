import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { message, startSinkScenario, type SinkScenario } from '../helpers/queue-fixture.js';

describe('mailproxy messages retry and messages bulk against a running daemon', { timeout: 120_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const cli = (s: SinkScenario, args: string[]) =>
    runCli(args, { env: { MAILPROXY_URL: s.fx.t.url, MAILPROXY_TOKEN: s.fx.t.adminToken } });

  it('retries a deferred message now: the relay gets it without waiting for its retry instant', async () => {
    let attempts = 0;
    const s = await startSinkScenario(cleanups, {
      sink: {
        onData: (raw) =>
          raw.includes('X-Genro-Mail-ID: slow') && ++attempts === 1 ? { code: 451, message: '4.3.0 busy' } : null,
      },
    });
    await s.fx.post(s.key, [message('slow'), message('sent-already', { to: 'other@example.net' })]);
    await s.fx.settle();
    expect((await s.fx.detail('acme', 'slow')).message.state).toBe('deferred');

    const retried = await cli(s, ['messages', 'retry', 'slow', 'sent-already', 'nobody', '--tenant', 'acme']);
    expect(retried).toMatchObject({ code: 0, stderr: '' });
    expect(retried.stdout).toBe(
      'retried now 1: slow\nnot found: nobody\nnot applicable (not waiting for a later attempt): sent-already\n',
    );
    await s.sink.waitForMessages(2);
  });

  it('counts first and acts on a bulk filter only with --yes', async () => {
    const s = await startSinkScenario(cleanups, {
      sink: { onRcpt: (address) => (address.startsWith('fail') ? { code: 550, message: '5.1.1 unknown' } : null) },
    });
    await s.fx.post(s.key, [
      message('f1', { to: 'fail@example.net' }),
      message('f2', { to: 'fail@example.net' }),
      message('fine'),
    ]);
    await s.fx.settle();
    await s.sink.waitForMessages(1);
    await s.fx.t.daemon.dispatcher.idle();
    const filter = ['--tenant', 'acme', '--recipient', 'fail@example.net'];

    const dry = await cli(s, ['messages', 'bulk', 'resend', ...filter, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^2 messages match; resend applies to 2\nfor example: acme\/f2, acme\/f1\n$/);
    expect(
      JSON.parse((await cli(s, ['messages', 'bulk', 'resend', '--tenant', 'acme', '--dry-run', '--json'])).stdout),
    ).toMatchObject({
      matching: 3,
      applicable: 3,
    });

    // No terminal to ask and no --yes: nothing is done, and the command says so.
    const unconfirmed = await cli(s, ['messages', 'bulk', 'resend', ...filter]);
    expect(unconfirmed.code).toBe(64);
    expect(unconfirmed.stderr).toContain('not done: 2 of 2 matching messages would be resent; add --yes to do it');
    expect((await s.fx.detail('acme', 'f1')).events.map((e) => e.event_type)).not.toContain('resent');

    const done = await cli(s, ['messages', 'bulk', 'resend', ...filter, '--yes']);
    expect(done).toMatchObject({ code: 0, stdout: 'resent 2 of 2 matching; not applicable 0; remaining 0\n' });
    expect((await s.fx.detail('acme', 'f1')).events.map((e) => e.event_type)).toContain('resent');

    const nothing = await cli(s, ['messages', 'bulk', 'retry-now', '--tenant', 'acme', '--yes']);
    expect(nothing.stdout).toMatch(/retry-now applies to 0: nothing to do/);
  });

  it('refuses an unknown action and an admin naming no tenant', async () => {
    const s = await startSinkScenario(cleanups);
    expect((await cli(s, ['messages', 'bulk', 'explode', '--tenant', 'acme'])).code).toBe(64);
    const unnamed = await cli(s, ['messages', 'bulk', 'delete', '--yes']);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain('VALIDATION_FAILED');
  });
});
