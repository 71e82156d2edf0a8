import { describe, expect, it } from 'vitest';
import { parseConfig } from './parse-config.js';
import { daemonSettings } from './settings.js';

function settingsOf(toml: string) {
  const parsed = parseConfig(toml, {});
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return daemonSettings(parsed.config);
}

describe('the daemon settings', () => {
  it('hold every duration in milliseconds, as the TOML gives it in seconds', () => {
    const settings = settingsOf(
      'shutdown_timeout_seconds = 7\n[dispatch]\nlease_seconds = 30\nretry_schedule_seconds = [5, 60]\n[reports]\nretry_initial_seconds = 0.5\n[pec]\nreceipt_retention_days = 2\n',
    );
    expect(settings.shutdownMs).toBe(7000);
    expect(settings.delivery.leaseMs).toBe(30_000);
    expect(settings.delivery.retry.scheduleMs).toEqual([5000, 60_000]);
    expect(settings.reports.policy.retryInitialMs).toBe(500);
    expect(settings.retention.pecReceiptsMs).toBe(2 * 86_400_000);
    expect(settings.retention.abandonedSpoolMs).toBe(2 * 600_000);
  });

  it('parse the listen addresses and trusted networks once, and say "none" as null', () => {
    const settings = settingsOf(
      '[http]\nlisten = "[::1]:8080"\n[smtp]\nlisten = ""\ntrusted_networks = [{ network = "10.0.0.0/8", tenant_id = "acme" }]\n',
    );
    expect(settings.http.listen).toEqual({ host: '::1', port: 8080 });
    expect(settings.smtp.listen).toBeNull();
    expect(settings.smtp.trustedNetworks).toEqual([
      { address: '10.0.0.0', prefix: 8, family: 'ipv4', tenantId: 'acme', accountId: null },
    ]);
    expect(settings.mirror).toBeNull();
    expect(settings.retention.pecReceiptsMs).toBeNull();
  });

  it("list the instance bounce mailbox before the tenants' own", () => {
    const settings = settingsOf(
      '[bounce]\nhost = "imap.example"\n[[bounce.tenant_mailboxes]]\ntenant_id = "acme"\nhost = "imap.acme.example"\n',
    );
    expect(settings.bounce.mailboxes.map((mailbox) => [mailbox.name, mailbox.tenantId])).toEqual([
      ['default', null],
      ['tenant:acme', 'acme'],
    ]);
  });
});

describe('the body store settings', () => {
  const fleet = '[nats]\nurl = "nats://127.0.0.1:4222"\n[fleet]\nenabled = true\nnode_id = "n1"\n';
  const s3 = '[storage]\nbackend = "s3"\n[storage.s3]\nbucket = "b"\n';

  it('give a fleet node sharing an S3 bucket names of its own, and a daemon alone names without a node', () => {
    const node = settingsOf(fleet + s3).storage;
    expect(node?.ownNames).toBe('n1/');
    expect(settingsOf(s3).storage?.ownNames).toBe('');
  });

  it('keep a fleet node’s bodies in its database unless its nodes share a store', () => {
    expect(settingsOf(fleet).storage).toBeNull();
    expect(settingsOf(`${fleet}[storage]\nbackend = "embedded"\n`).storage).toBeNull();
  });

  it('give the cluster’s object store the fleet’s servers and replicas, and refuse it to a daemon alone', () => {
    const jetstream = '[storage]\nbackend = "jetstream"\n';
    expect(settingsOf(fleet + jetstream).storage?.jetstream).toEqual({
      url: 'nats://127.0.0.1:4222',
      bucket: 'mailproxy_bodies',
      replicas: 3,
      timeoutMs: 10_000,
    });
    expect(settingsOf(fleet + jetstream).storage?.ownNames).toBe('n1/');
    const alone = parseConfig(jetstream, {});
    expect(alone.ok).toBe(false);
    expect(alone.ok ? [] : alone.problems.join('\n')).toMatch(/storage\.backend.*needs \[fleet\]/);
  });
});
