/**
 * SSRF and path traversal through attachments. Property-based on the fetcher
 * (src/delivery/attachment-fetcher.ts) with a real HTTP peer: URLs naming
 * loopback, private, link-local, CGNAT, unique-local and IPv4-mapped addresses
 * in every textual form the URL parser takes (decimal, hex, octal, short,
 * bracketed IPv6), and redirects from an allowed server to them or to other
 * schemes, are refused without a connection. Then end to end on the spawned
 * daemon (default policy): such attachments end the message in error with
 * nothing fetched and nothing relayed; other schemes are refused at intake; an
 * endpoint storage path with `../` travels only as data in the JSON body.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/app-error.js';
import { createAttachmentFetcher } from '../../src/delivery/attachment-fetcher.js';
import { isForbiddenAddress } from '../../src/delivery/url-guard.js';
import { eventually } from '../helpers/eventually.js';
import { startHostileTarget, type HostileTarget } from '../helpers/hostile-target.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { checkProperty } from '../helpers/property-runs.js';
import { storedRow } from '../helpers/submission-checks.js';

interface Peer {
  port: number;
  requests: Array<{ method: string; url: string; body: string }>;
  /** What the next request is answered. */
  answer: { status: number; headers: Record<string, string>; body: string };
  server: Server;
}

async function startPeer(): Promise<Peer> {
  const peer: Peer = {
    port: 0,
    requests: [],
    answer: { status: 200, headers: {}, body: 'secret bytes' },
    server: createServer(),
  };
  peer.server.on('request', (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      peer.requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(peer.answer.status, peer.answer.headers).end(peer.answer.body);
    });
  });
  peer.server.listen(0, '127.0.0.1');
  await once(peer.server, 'listening');
  peer.port = (peer.server.address() as AddressInfo).port;
  return peer;
}

const octet = fc.integer({ min: 0, max: 255 });
/** An address inside one of the forbidden IPv4 networks, as four octets. */
const forbiddenV4 = fc.oneof(
  fc.tuple(fc.constant(127), octet, octet, octet),
  fc.tuple(fc.constant(10), octet, octet, octet),
  fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
  fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
  fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
  fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), octet, octet),
  fc.tuple(fc.constant(0), octet, octet, octet),
);

/** The same address written as the WHATWG URL parser still reads it as IPv4 (or as IPv4-mapped IPv6). */
const hostForms = forbiddenV4.chain((parts) => {
  const n = ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
  const hex = (v: number) => v.toString(16);
  return fc.constantFrom(
    parts.join('.'),
    String(n),
    `0x${hex(n)}`,
    parts.map((p) => `0${p.toString(8)}`).join('.'),
    `${parts[0]}.${(parts[1] << 16) + (parts[2] << 8) + parts[3]}`,
    `[::ffff:${parts.join('.')}]`,
    `[::ffff:${hex((parts[0] << 8) + parts[1])}:${hex((parts[2] << 8) + parts[3])}]`,
  );
});
const v6Forms = fc.oneof(
  fc.constantFrom(
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::]',
    '[fe80::1]',
    '[::127.0.0.1]',
    'localhost',
    'LOCALHOST.',
    'localhost.',
  ),
  fc
    .tuple(fc.integer({ min: 0xfc00, max: 0xfdff }), fc.integer({ min: 0, max: 0xffff }))
    .map(([a, b]) => `[${a.toString(16)}:${b.toString(16)}::1]`),
);
const forbiddenHost = fc.oneof({ weight: 3, arbitrary: hostForms }, { weight: 1, arbitrary: v6Forms });
const otherScheme = fc.constantFrom(
  'file:///etc/passwd',
  'file://localhost/etc/shadow',
  'ftp://127.0.0.1/x',
  'gopher://127.0.0.1:25/_HELO',
  'data:text/plain;base64,aGk=',
  'javascript:alert(1)',
  'dict://127.0.0.1:11211/stats',
  'ldap://127.0.0.1/',
);

const spec = (storagePath: string) => ({
  filename: 'a.bin',
  storagePath,
  fetchMode: 'http_url' as const,
  mimeType: null,
  contentMd5: null,
});
const NO_TENANT = {
  id: 't',
  clientBaseUrl: null,
  clientAttachmentPath: null,
  clientAuth: null,
  attachmentOffload: null,
};

describe('the attachment fetcher against SSRF (property-based, real HTTP peer)', () => {
  let peer: Peer;
  beforeAll(async () => {
    peer = await startPeer();
  });
  afterAll(() => {
    peer.server.closeAllConnections();
    peer.server.close();
  });

  it('refuses every forbidden address form without connecting', async () => {
    const fetcher = createAttachmentFetcher({ timeoutMs: 3000, maxBytes: 1024, allowPrivateAddresses: false });
    await checkProperty(
      'ssrf: direct URL',
      150,
      fc.tuple(forbiddenHost, fc.constantFrom('/', '/latest/meta-data/', '/a?b=c#d')),
      async ([host, path]) => {
        const url = `http://${host}:${peer.port}${path}`;
        const error = await fetcher.fetch(spec(url), NO_TENANT).then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(AppError);
        // An address is refused by the guard, for good; a name may also fail to resolve at all ("localhost."), which is no connection either.
        if (/^[\d[]/.test(host))
          expect([(error as AppError).message, (error as AppError).transient]).toEqual([
            expect.stringMatching(/not allowed/),
            false,
          ]);
        else expect((error as AppError).message).toMatch(/not allowed|ENOTFOUND|EAI_AGAIN/);
      },
    );
    expect(peer.requests).toEqual([]);
  });

  it('refuses a redirect from an allowed server to a forbidden address or another scheme, after the first hop only', async () => {
    // 127.0.0.1 stands in for a public server; everything else keeps the default policy.
    const fetcher = createAttachmentFetcher({
      timeoutMs: 3000,
      maxBytes: 1024,
      allowPrivateAddresses: false,
      isForbiddenAddress: (address) => address !== '127.0.0.1' && isForbiddenAddress(address),
    });
    const target = fc.oneof(
      // Not the stand-in itself, by address or by name (localhost resolves to it).
      forbiddenHost
        .filter((host) => new URL(`http://${host}/`).hostname !== '127.0.0.1' && !/localhost/i.test(host))
        .map((host) => `http://${host}:${peer.port}/internal`),
      otherScheme,
    );
    await checkProperty(
      'ssrf: redirect',
      100,
      fc.tuple(target, fc.constantFrom(301, 302, 303, 307, 308)),
      async ([location, status]) => {
        peer.requests = [];
        peer.answer = { status, headers: { location }, body: '' };
        const error = await fetcher.fetch(spec(`http://127.0.0.1:${peer.port}/start`), NO_TENANT).then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).message).toMatch(/not allowed|ENOTFOUND|EAI_AGAIN/);
        expect(peer.requests.map((r) => r.url)).toEqual(['/start']);
      },
    );
  });
});

describe('attachments through the spawned daemon (default SSRF policy)', () => {
  const started = tearDownProcesses({ stop: 'file' });
  let target: HostileTarget;
  let peer: Peer;
  beforeAll(async () => {
    peer = await startPeer();
    target = await startHostileTarget(started);
    const tenant = await target.admin('PUT', '/tenant/acme', {
      client_base_url: `http://127.0.0.1:${peer.port}/app`,
      client_attachment_path: '/att',
    });
    expect(tenant.status, tenant.text).toBe(200);
  }, 60_000);
  afterAll(() => {
    target?.db.close();
    peer?.server.closeAllConnections();
    peer?.server.close();
  });

  /** The peer is also the tenant's report endpoint: its report rounds are not attachment fetches. */
  const attachmentRequests = () => peer.requests.filter((request) => !request.url.endsWith('/mail-proxy/sync'));
  const post = (id: string, attachment: Record<string, unknown>) =>
    fetch(`${target.url}/add-messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        messages: [
          {
            id,
            from: 'a@example.com',
            to: 'b@example.net',
            subject: id,
            attachments: [{ filename: 'x.bin', ...attachment }],
          },
        ],
      }),
    }).then((r) => r.json() as Promise<{ queued: number; rejected: Array<{ reason: string }> }>);

  it('ends http_url attachments at loopback or private addresses in error, fetching and relaying nothing', async () => {
    const hosts = [
      '127.0.0.1',
      '127.1',
      '2130706433',
      '0x7f000001',
      '0177.0.0.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      'localhost',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '[fd00::1]',
      '0.0.0.0',
    ];
    for (const [i, host] of hosts.entries())
      expect(
        await post(`ssrf-${i}`, { fetch_mode: 'http_url', storage_path: `http://${host}:${peer.port}/secret` }),
      ).toMatchObject({
        queued: 1,
        rejected: [],
      });
    await eventually(
      () => hosts.every((_, i) => storedRow(target.db, `ssrf-${i}`)?.state === 'error'),
      'every SSRF message to end in error',
      30_000,
    );
    for (const [i, host] of hosts.entries())
      expect(storedRow(target.db, `ssrf-${i}`)?.error, host).toMatch(/not allowed/);
    expect(attachmentRequests()).toEqual([]);
    expect(target.sink.messages).toEqual([]);
    console.log(
      `[hostile] daemon SSRF: ${hosts.length} attachment URLs refused, 0 requests reached the peer, 0 messages relayed`,
    );
    await target.expectAlive();
  }, 60_000);

  it('refuses other schemes at intake and carries an endpoint storage path only as JSON data', async () => {
    for (const url of [
      'file:///etc/passwd',
      'ftp://127.0.0.1/x',
      'gopher://127.0.0.1/',
      'data:text/plain,hi',
      'HTTP:/\\127.0.0.1/',
    ]) {
      const answer = await post('scheme', { fetch_mode: 'http_url', storage_path: url });
      expect(answer.queued, url).toBe(0);
      expect(answer.rejected[0]?.reason).toMatch(/not an http\(s\) URL/);
    }
    const traversal = '../../../../etc/passwd%00/..\\..\\x?y=../#';
    expect(await post('traversal', { fetch_mode: 'endpoint', storage_path: traversal })).toMatchObject({ queued: 1 });
    await eventually(
      () => storedRow(target.db, 'traversal')?.state === 'sent',
      'the endpoint message to be sent',
      30_000,
    );
    expect(attachmentRequests()).toEqual([
      { method: 'POST', url: '/app/att', body: JSON.stringify({ storage_path: traversal }) },
    ]);
    expect(target.sink.messages.at(-1)?.raw.toString('latin1')).toContain(
      Buffer.from('secret bytes').toString('base64'),
    );
    await target.expectAlive();
  }, 60_000);
});
