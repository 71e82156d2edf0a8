/** `mailproxy config check`: the configuration as `serve` would take it, secrets redacted. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'mailproxy-config-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const json = (text: string): any => JSON.parse(text);

describe('mailproxy config check', () => {
  const secrets = {
    admin: 'admin-token-value-0123456789',
    imap: 'imap-password-value',
    tenantImap: 'tenant-imap-password-value',
    nats: 'nats-password-value',
    key: Buffer.alloc(32, 7).toString('base64'),
  };

  it('prints the effective configuration with every secret redacted, as text and as JSON', async () => {
    const file = join(dir, 'secrets.toml');
    writeFileSync(
      file,
      [
        '[http]',
        `admin_token = "${secrets.admin}"`,
        '[security]',
        `secret_key = "${secrets.key}"`,
        '[nats]',
        `url = "nats://mp:${secrets.nats}@127.0.0.1:4222"`,
        '[bounce]',
        'host = "imap.example.org"',
        `password = "${secrets.imap}"`,
        '[[bounce.tenant_mailboxes]]',
        'tenant_id = "acme"',
        'host = "imap.acme.example"',
        `password = "${secrets.tenantImap}"`,
      ].join('\n'),
    );
    // MAILPROXY_URL and MAILPROXY_TOKEN are the CLI's, not unknown configuration keys.
    const text = await runCli(['config', 'check', '--config', file], {
      env: { MAILPROXY_SMTP_LISTEN: '127.0.0.1:2600', MAILPROXY_URL: 'http://127.0.0.1:1', MAILPROXY_TOKEN: 'x' },
    });
    const asJson = await runCli(['config', 'check', '-c', file, '--json']);
    for (const run of [text, asJson]) {
      expect(run.code).toBe(0);
      for (const secret of Object.values(secrets)) expect(run.stdout + run.stderr).not.toContain(secret);
    }
    expect(text.stdout).toContain('with MAILPROXY_SMTP_LISTEN from the environment');
    expect(text.stdout).toMatch(/^\[http\]\nlisten = "127\.0\.0\.1:8000"\nadmin_token = "\[redacted\]"$/m);
    expect(text.stdout).toContain('listen = "127.0.0.1:2600"');
    const config = json(asJson.stdout).config;
    expect(config.http.admin_token).toBe('[redacted]');
    expect(config.security.secret_key).toBe('[redacted]');
    expect(config.bounce.password).toBe('[redacted]');
    expect(config.bounce.tenant_mailboxes[0].password).toBe('[redacted]');
    expect(config.nats.url).toBe('nats://[redacted]@127.0.0.1:4222');
    expect(config.bounce.host).toBe('imap.example.org');
  });

  it('exits 78 naming every problem of an invalid configuration', async () => {
    const file = join(dir, 'invalid.toml');
    writeFileSync(file, '[http]\nlisten = "nowhere"\nadmin_token = "short"\n');
    const run = await runCli(['config', 'check', '--config', file]);
    expect(run.code).toBe(78);
    expect(run.stderr).toContain('invalid configuration (2 problems)');
    expect(run.stderr).toContain('http.listen: expected host:port');
    expect(run.stderr).not.toContain('short"');
  });
});
