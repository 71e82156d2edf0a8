/**
 * No secret in any response or log line. The real daemon process runs with
 * every kind of secret in play (admin token, tenant API keys old and rotated,
 * relay account passwords right and wrong, client bearer and basic
 * credentials, report signing secrets given and generated, the bounce
 * mailbox password, a PEC account's own mailbox password, the metrics token used and refused, credentials tried and refused over HTTP and SMTP AUTH)
 * and every route is called; then its whole stdout and stderr and every
 * response (headers and body) are searched for each secret in every form.
 * Only the one response that hands a secret out (creation, rotation) may
 * hold that secret.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { dsnFor } from '../helpers/bounce-mail.js';
import { spawnDaemon } from '../helpers/daemon-process.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { message } from '../helpers/queue-fixture.js';
import { openSubmission, replyOf } from '../helpers/smtp-submit.js';
import { api, type ApiResponse } from '../helpers/test-daemon.js';
import { bounceToml, startDovecot, type DovecotPeer } from '../peers/dovecot.js';
import { startReportClient, type ReportClient } from '../peers/report-client.js';
import { startSmtpSink } from '../peers/smtp-sink.js';
import type { Owner, TenantData } from './matrix-world.js';
import { PROBES, type Call, type ProbeWorld } from './route-probes.js';
import { secretsIn, type Secret } from './secret-forms.js';

const { dirs, running, sinks } = tearDownProcesses();
const peers: Array<{ stop(): Promise<void> } | DovecotPeer> = [];
afterAll(async () => {
  for (const peer of peers) await ('destroy' in peer ? peer.destroy() : peer.stop());
});

const random = (name: string): string => `${name}-${randomBytes(12).toString('base64url')}`;

interface Seen {
  what: string;
  response: ApiResponse;
  /** The secrets this response exists to hand out (once). */
  handsOut: string[];
}

describe('secrets in responses and logs', () => {
  it('never shows a secret in a log line or a response, except the one response that hands it out', async () => {
    // Not the peer's default password ("secret", a word the API's own documentation uses).
    // The PEC account's mailbox is a real one on the same Dovecot: its password is a working credential.
    const pecImapPassword = random('pec-imap');
    const dovecot = await startDovecot({
      users: [
        { user: 'bounces', password: random('imap') },
        { user: 'pec-b', password: pecImapPassword },
      ],
    });
    const client: ReportClient = await startReportClient();
    const secrets: Secret[] = [
      { name: 'admin token', value: random('admin') },
      { name: 'metrics token', value: random('metrics') },
      { name: 'server secret key', value: randomBytes(32).toString('base64') },
      { name: 'relay password a', value: random('relay-pass-a') },
      { name: 'relay password b', value: random('relay-pass-b') },
      { name: 'wrong relay password', value: random('wrong-relay') },
      { name: 'client bearer token a', value: random('client-bearer-a') },
      { name: 'client basic password b', value: random('client-basic-b') },
      { name: 'signing secret a (given)', value: random('signing-a') },
      { name: 'bounce mailbox password', value: dovecot.password },
      { name: 'tenant mailbox password (wrong)', value: random('imap-wrong') },
      { name: 'PEC account mailbox password', value: pecImapPassword },
      { name: 'refused HTTP token', value: random('mpk_refused') },
      { name: 'refused SMTP AUTH password', value: random('smtp-refused') },
    ];
    const secret = (name: string): string => secrets.find((s) => s.name === name)?.value ?? '';
    const sinkA = await startSmtpSink({ auth: { user: 'relay-a', pass: secret('relay password a') } });
    const sinkB = await startSmtpSink({ auth: { user: 'relay-b', pass: secret('relay password b') } });
    sinks.push(sinkA, sinkB);
    peers.push(client, dovecot);

    const cwd = mkdtempSync(join(tmpdir(), 'mailproxy-secrets-'));
    dirs.push(cwd);
    writeFileSync(
      join(cwd, 'config.toml'),
      `
[log]
level = "debug"
[dispatch]
retry_jitter = 0
[reports]
batch_delay_ms = 20
retry_initial_seconds = 0.2
retry_jitter = 0
${bounceToml(dovecot)}reconnect_initial_seconds = 0.1
reconnect_max_seconds = 0.5
[[bounce.tenant_mailboxes]]
tenant_id = "tenant-b"
host = "127.0.0.1"
port = ${dovecot.port}
tls = "none"
user = "${dovecot.user}"
password = "${secret('tenant mailbox password (wrong)')}"
`,
    );
    const daemon = spawnDaemon(['serve', '--config', 'config.toml'], {
      cwd,
      env: {
        MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
        MAILPROXY_HTTP_ADMIN_TOKEN: secret('admin token'),
        MAILPROXY_HTTP_METRICS_TOKEN: secret('metrics token'),
        MAILPROXY_SECURITY_SECRET_KEY: secret('server secret key'),
      },
    });
    running.push(daemon);
    const url = `http://127.0.0.1:${(await daemon.waitForLog((entry) => entry.msg === 'http listening')).port as number}`;
    const smtpPort = (await daemon.waitForLog((entry) => entry.msg === 'smtp listening')).port as number;
    await daemon.waitForLog((entry) => entry.msg === 'ready');

    const seen: Seen[] = [];
    const call = async (
      what: string,
      method: string,
      path: string,
      token: string | undefined,
      body?: unknown,
      handsOut: string[] = [],
    ): Promise<ApiResponse> => {
      const response = await api(url, method, path, { ...(token === undefined ? {} : { token }), body });
      seen.push({ what, response, handsOut });
      return response;
    };
    const admin = (method: string, path: string, body?: unknown) =>
      call(`admin ${method} ${path}`, method, path, secret('admin token'), body);

    // Tenants, handing out their keys (and B's generated signing secret) once.
    const createdA = await admin('POST', '/tenant', {
      id: 'tenant-a',
      client_base_url: `${client.base}/a`,
      client_auth: { method: 'bearer', token: secret('client bearer token a') },
      client_signing_secret: secret('signing secret a (given)'),
    });
    const createdB = await admin('POST', '/tenant', {
      id: 'tenant-b',
      client_base_url: `${client.base}/b`,
      client_auth: { method: 'basic', user: 'client-b', password: secret('client basic password b') },
    });
    expect([createdA.status, createdB.status]).toEqual([201, 201]);
    const keyA = createdA.body.api_key as string;
    const keyB = createdB.body.api_key as string;
    secrets.push(
      { name: 'api key a', value: keyA },
      { name: 'api key b', value: keyB },
      { name: 'signing secret b (generated)', value: createdB.body.client_signing_secret as string },
    );
    (seen.at(-2) as Seen).handsOut = [keyA];
    (seen.at(-1) as Seen).handsOut = [keyB, createdB.body.client_signing_secret as string];

    const account = (tenant: string, id: string, port: number, user: string, password: string, extra = {}) =>
      admin('POST', '/account', {
        id,
        tenant_id: tenant,
        host: '127.0.0.1',
        port,
        tls_mode: 'none',
        user,
        password,
        ...extra,
      });
    await account('tenant-a', 'acct-a', sinkA.port, 'relay-a', secret('relay password a'), { is_default: true });
    await account('tenant-a', 'acct-bad', sinkA.port, 'relay-a', secret('wrong relay password'));
    await account('tenant-b', 'acct-b', sinkB.port, 'relay-b', secret('relay password b'), { is_default: true });
    const pec = await account('tenant-b', 'acct-pec', sinkB.port, 'relay-b', secret('relay password b'), {
      is_pec: true,
      imap_host: '127.0.0.1',
      imap_port: dovecot.port,
      imap_tls_mode: 'none',
      imap_user: 'pec-b',
      imap_password: pecImapPassword,
    });
    expect(pec.body.account).toMatchObject({ is_pec: true, has_imap_password: true });

    // Mail over HTTP (one through the account with the wrong password) and over SMTP AUTH.
    expect(
      (
        await call('a add-messages', 'POST', '/add-messages', keyA, {
          messages: [message('a-1', { to: 'ann@example.net' }), message('a-bad', { account_id: 'acct-bad' })],
        })
      ).body.queued,
    ).toBe(2);
    const session = await openSubmission(smtpPort);
    await session.login('tenant-b', keyB);
    await session.send(
      { from: 'app@b.example', to: ['bob@example.net'] },
      'From: app@b.example\r\nTo: bob@example.net\r\nSubject: b-1\r\nX-Genro-Mail-ID: b-1\r\n\r\nHello.\r\n',
    );
    session.close();

    // Credentials tried and refused; the metrics token where it opens and where it does not.
    expect((await call('refused token', 'GET', '/tenants', secret('refused HTTP token'))).status).toBe(401);
    expect((await call('metrics token scrape', 'GET', '/metrics', secret('metrics token'))).status).toBe(200);
    expect((await call('metrics token elsewhere', 'GET', '/tenants', secret('metrics token'))).status).toBe(403);
    const refused = await openSubmission(smtpPort);
    expect(
      await refused.login('tenant-a', secret('refused SMTP AUTH password')).then(() => 'accepted', replyOf),
    ).toMatch(/^535 /);
    refused.close();

    await sinkA.waitForMessages(1, 15_000);
    await sinkB.waitForMessages(1, 15_000);
    await vi.waitFor(
      async () =>
        expect((await admin('GET', '/account/acct-bad?tenant_id=tenant-a')).body.account.last_error).not.toBeNull(),
      {
        timeout: 15_000,
        interval: 100,
      },
    );
    await dovecot.append(dsnFor(sinkA.messages[0]?.raw ?? Buffer.alloc(0), { recipient: 'ann@example.net' }));
    await vi.waitFor(
      async () => expect((await admin('GET', '/bounces?tenant_id=tenant-a')).body.bounces).toHaveLength(1),
      { timeout: 15_000, interval: 100 },
    );
    await client.waitFor(
      'reports of both tenants',
      (c) => c.items('/a').length > 0 && c.items('/b').length > 0,
      15_000,
    );

    // Every route, as the admin and as each tenant's key on its own resources.
    const tenants = {
      a: { id: 'tenant-a', key: keyA, account: 'acct-a', messages: { sent: 'a-1' } },
      b: { id: 'tenant-b', key: keyB, account: 'acct-b', messages: { sent: 'b-1' } },
    } as unknown as Record<Owner, TenantData>;
    let counter = 0;
    const world: ProbeWorld = { tenants, admin, unique: (prefix) => `${prefix}-${(counter += 1)}` };
    for (const [route, probe] of Object.entries(PROBES)) {
      for (const [who, token] of [
        ['admin', secret('admin token')],
        ['a', keyA],
        ['b', keyB],
      ] as const) {
        const planned: Call = await probe(world, who === 'admin' ? 'a' : who);
        const response = await call(`${who} ${route}`, planned.method, planned.path, token, planned.body);
        // A route that hands out a secret (a new tenant, a rotation) hands out only its own.
        const handed = ['api_key', 'client_signing_secret']
          .map((field) => response.body?.[field])
          .filter((value): value is string => typeof value === 'string');
        (seen.at(-1) as Seen).handsOut = handed;
        secrets.push(...handed.map((value) => ({ name: `handed out by ${route}`, value })));
      }
    }

    // Rotations: the new key works, the new signing secret signs.
    const rotated = await admin('POST', '/tenant/tenant-a/api-key', {});
    (seen.at(-1) as Seen).handsOut = [rotated.body.api_key as string];
    secrets.push({ name: 'rotated api key a', value: rotated.body.api_key as string });
    expect((await call('rotated key', 'GET', '/accounts', rotated.body.api_key as string)).status).toBe(200);
    const resigned = await admin('POST', '/tenant/tenant-b/signing-secret');
    (seen.at(-1) as Seen).handsOut = [resigned.body.client_signing_secret as string];
    secrets.push({ name: 'rotated signing secret b', value: resigned.body.client_signing_secret as string });

    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);

    const logs = [...daemon.stdout, ...daemon.stderr].join('\n');
    expect(daemon.stdout.length).toBeGreaterThan(50);
    const found = [
      ...secretsIn('daemon log', logs, secrets),
      ...seen.flatMap(({ what, response, handsOut }) =>
        secretsIn(
          `${what} → ${response.status}`,
          `${[...response.headers].join('\n')}\n${response.text}`,
          secrets,
          handsOut,
        ),
      ),
    ];
    console.info(
      `secrets: ${secrets.length} secrets in 4 forms searched in ${daemon.stdout.length} log lines and ${seen.length} responses`,
    );
    expect(found).toEqual([]);
  }, 90_000);
});
