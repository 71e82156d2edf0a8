/**
 * Issue 46 on real peers (a three-server NATS cluster, three `mailproxy serve` processes sharing
 * one body store, one SMTP sink), for each store a fleet can share: a bucket on a real S3 API
 * server, and the cluster's own JetStream object store. A large body is written once, by the node
 * that accepted it, under that node's id; a survivor adopting a lost node's spool and a peer
 * taking a drained node's mail read it from the store. Neither the replicated spool nor a drain's
 * transfer carries the body, and the node that handed a message over does not remove the object
 * its peer now reads. An offloaded attachment's link works on any node.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Subscription } from '@nats-io/nats-core';
import { Objm } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { relayedWithId } from '../helpers/relayed-mail.js';
import { api } from '../helpers/test-daemon.js';
import {
  FLEET_TOKEN,
  fleetAdmin as admin,
  provisionTenant,
  startFleet,
  untilOrExplain,
  withClusterConnection,
  type TestFleet,
} from '../helpers/fleet.js';
import { startS3Server, type S3Server } from '../peers/s3-server.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const SPOOL_STREAM = 'MAILPROXY_FLEET_SPOOL';
const PREFIX = 'bodies/';
const BUCKET = 'mailproxy_bodies_test';
/** Well above `inline_max_bytes` (below): each of these bodies goes to the bucket. */
const BODY_BYTES = 400_000;

/** A body store the fleet's nodes share: its configuration, and how many objects it holds of names beginning with `start`. */
interface SharedStore {
  backend: 's3' | 'jetstream';
  toml: string;
  count(start: string): Promise<number>;
  /** Takes the store away: the S3 server stopped, or every server of the cluster killed. */
  outage(): Promise<void>;
  cleanup(): Promise<void>;
}

let fleet: TestFleet;
let sink: SmtpSink;
let configDir: string;

const urlOf = (id: string): string => fleet.nodes.find((node) => node.id === id)?.url as string;
const until = (check: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000) =>
  untilOrExplain(fleet, check, what, timeoutMs);
const waitingOn = async (url: string): Promise<number> =>
  (await admin(url, 'GET', '/status')).body.queue.waiting as number;

/** Sealed bytes do not compress: a spool or a transfer that carried one of these bodies would be larger than it. */
const bodyText = (): string =>
  Array.from({ length: Math.ceil(BODY_BYTES / 65) }, () => randomBytes(32).toString('hex')).join('\n');
const message = (id: string, body: string) => ({
  id,
  tenant_id: 'acme',
  from: 'app@acme.example',
  to: 'someone@example.org',
  subject: `message ${id}`,
  body,
  batch_code: 'held',
});
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const relayedRaw = (id: string): Buffer | undefined => relayedWithId(sink, id);
const relayedBody = (id: string): string | undefined => relayedRaw(id)?.toString('latin1').replace(/\r\n/g, '\n');

/** The replicated spool's stream, all nodes' records together, in bytes. */
const spoolBytes = (): Promise<number> =>
  withClusterConnection(
    fleet,
    async (nc) => (await (await jetstreamManager(nc)).streams.info(SPOOL_STREAM)).state.bytes,
  );

async function s3Store(): Promise<SharedStore> {
  const server: S3Server = await startS3Server();
  return {
    backend: 's3',
    toml: ['[storage]', 'backend = "s3"', server.toml(PREFIX)].join('\n'),
    count: (start) => server.count(`${PREFIX}${start}`),
    outage: () => server.stop(),
    cleanup: () => server.cleanup(),
  };
}

function jetstreamStore(): SharedStore {
  return {
    backend: 'jetstream',
    toml: [
      '[storage]',
      'backend = "jetstream"',
      '[storage.jetstream]',
      `bucket = "${BUCKET}"`,
      // A put waits this long for the cluster: time enough under a loaded run, short for the outage's refusal.
      'timeout_seconds = 5',
    ].join('\n'),
    outage: async () => void (await Promise.all(fleet.cluster.servers.map((server) => server.kill()))),
    count: (start) =>
      withClusterConnection(fleet, async (nc) => {
        const objects = await (await new Objm(nc).open(BUCKET)).list();
        return objects.filter((info) => !info.deleted && info.name.startsWith(start)).length;
      }),
    cleanup: async () => undefined,
  };
}

describe.each([
  ['an S3 bucket', s3Store],
  ['the cluster’s JetStream object store', jetstreamStore],
] as const)('a fleet sharing %s as its body store', (_name, makeStore) => {
  let store: SharedStore;
  /** The link token of the file n3 offloaded. */
  let fileToken = '';

  beforeAll(async () => {
    store = await makeStore();
    sink = await startSmtpSink();
    configDir = mkdtempSync(join(tmpdir(), 'mailproxy-shared-store-'));
    const config = join(configDir, 'mailproxy.toml');
    // Every body of these tests goes to the store; what a node no longer needs is removed within a second.
    writeFileSync(config, `${store.toml}\n`);
    fleet = await startFleet(['n1', 'n2', 'n3'], {
      MAILPROXY_CONFIG: config,
      MAILPROXY_STORAGE_INLINE_MAX_BYTES: '65536',
      MAILPROXY_STORAGE_REMOVAL_INTERVAL_SECONDS: '1',
      // Well above a loaded run's heartbeat stalls (lost-node.test.ts).
      MAILPROXY_FLEET_ADOPT_AFTER_SECONDS: '8',
    });
    await provisionTenant(fleet, 'acme', { host: '127.0.0.1', port: sink.port, tls_mode: 'none' });
  }, 120_000);

  it('serves an offloaded attachment’s link from every node', async () => {
    const offload = { base_url: 'https://mail.example.com', over_bytes: 100_000, link_lifetime_seconds: 3600 };
    expect((await admin(urlOf('n1'), 'PUT', '/tenant/acme', { attachment_offload: offload })).status).toBe(200);
    await until(
      async () => (await admin(urlOf('n3'), 'GET', '/tenant/acme')).body?.tenant?.attachment_offload !== null,
      'n3 to have the setting',
    );
    const file = randomBytes(300_000);
    const posted = await admin(urlOf('n3'), 'POST', '/add-messages', {
      messages: [
        {
          ...message('file-1', 'see the attachment'),
          batch_code: null,
          attachments: [{ filename: 'plan.bin', storage_path: file.toString('base64'), fetch_mode: 'base64' }],
        },
      ],
    });
    expect(posted.body, posted.text).toMatchObject({ queued: 1, rejected: [] });
    await until(() => relayedRaw('file-1') !== undefined, 'n3 to relay file-1');
    const mail = await simpleParser(relayedRaw('file-1') ?? Buffer.alloc(0));
    expect(mail.attachments).toEqual([]);
    // Written by n3's compose thread under n3's name: the body and the file.
    expect(await store.count('n3/')).toBe(2);
    const token = /https:\/\/mail\.example\.com\/files\/([\w-]+)/.exec(mail.text ?? '')?.[1];
    expect(token, mail.text).toBeDefined();
    fileToken = token ?? '';
    // n3 keeps the file's record; n1 and n2 ask it, read the object from the bucket, and have n3 count the download.
    for (const node of ['n1', 'n2']) {
      const download = await fetch(`${urlOf(node)}/files/${token}`);
      expect(download.status, node).toBe(200);
      expect(sha256(new Uint8Array(await download.arrayBuffer())), node).toBe(sha256(file));
      expect(download.headers.get('content-disposition'), node).toContain('filename="plan.bin"');
    }
    const detail = (await admin(urlOf('n3'), 'GET', '/messages/file-1?tenant_id=acme')).body;
    const downloads = detail.events.filter((event: { event_type: string }) => event.event_type === 'downloaded');
    expect(downloads.map((event: { data: unknown }) => event.data)).toEqual([
      { file_index: 0, downloads: 1 },
      { file_index: 0, downloads: 2 },
    ]);
    // A token naming no file is unknown on every node, the same as alone.
    const forged = `${token?.slice(0, 10)}${token?.[10] === 'A' ? 'B' : 'A'}${token?.slice(11)}`;
    expect((await fetch(`${urlOf('n2')}/files/${forged}`)).status).toBe(404);
  });

  afterAll(async () => {
    await fleet?.destroy();
    await sink?.stop();
    await store?.cleanup();
    if (configDir !== undefined) rmSync(configDir, { recursive: true, force: true });
  });

  it('a lost node’s large message is adopted as its object’s name and relayed whole by the survivor', async () => {
    const n3 = urlOf('n3');
    // Held where it is accepted (the suspension is n3's at once), and wherever it is adopted.
    expect((await admin(n3, 'POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'held' })).status).toBe(200);
    const objects = async () => Promise.all(['n1/', 'n2/', 'n3/'].map((node) => store.count(node)));
    const [n1Had, n2Had, n3Had] = await objects();
    const body = bodyText();
    const posted = await admin(n3, 'POST', '/add-messages', { messages: [message('lost-1', body)] });
    expect(posted.body).toMatchObject({ queued: 1, rejected: [] });
    // Written once, by n3, under its id; the cluster holds the entry (the answer waited for it), not the body.
    const before = await objects();
    expect(before).toEqual([n1Had, n2Had, (n3Had ?? 0) + 1]);
    expect(await spoolBytes()).toBeLessThan(BODY_BYTES / 4);

    const n3Node = fleet.nodes.find((node) => node.id === 'n3');
    n3Node?.daemon.child.kill('SIGKILL');
    await until(
      () =>
        fleet.nodes.some(
          (node) =>
            node.id !== 'n3' &&
            node.daemon.entries.some((entry) => entry.msg === 'lost node’s spool adopted' && entry.node === 'n3'),
        ),
      'a survivor to adopt n3’s spool',
    );
    expect(
      (await admin(urlOf('n1'), 'POST', '/commands/activate', { tenant_id: 'acme', batch_code: 'held' })).status,
    ).toBe(200);
    await until(() => relayedBody('lost-1') !== undefined, 'the survivor to relay lost-1');
    expect(relayedBody('lost-1')).toContain(body);
    // Read where n3 wrote it, not written again by the survivor.
    expect(await objects()).toEqual(before);
    // The file n3 sent is kept on n3, which no longer answers: its link is unavailable, not unknown.
    const away = await fetch(`${urlOf('n1')}/files/${fileToken}`);
    expect(away.status).toBe(503);
    const refusal = await away.text();
    expect((JSON.parse(refusal) as { error: { code: string } }).error.code).toBe('FLEET_UNAVAILABLE');
    // The route is public: which node is away is the operator's to know (the log), not the caller's.
    expect(refusal).not.toMatch(/\bn3\b/);
  });

  it('a drained node hands its large message over by name, and does not remove the object its peer reads', async () => {
    const n2 = urlOf('n2');
    expect((await admin(n2, 'POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'held' })).status).toBe(200);
    const body = bodyText();
    const posted = await admin(n2, 'POST', '/add-messages', { messages: [message('drained-1', body)] });
    expect(posted.body).toMatchObject({ queued: 1, rejected: [] });
    expect(await store.count('n2/')).toBe(1);

    // Every transfer the drain sends, as the cluster carries it.
    const nc = await connect({ servers: fleet.cluster.urls.split(',') });
    const transfers: number[] = [];
    const watched: Subscription = nc.subscribe('mailproxy_fleet_drain.*.adopt', {
      callback: (_error, received) => void transfers.push(received.data.length),
    });
    await nc.flush();
    try {
      const run = await runCli(['fleet', 'drain', '--url', n2, '--token', FLEET_TOKEN, '--timeout', '60']);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(/phase:\s+drained/);
    } finally {
      watched.unsubscribe();
      await nc.close();
    }
    expect(transfers.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...transfers)).toBeLessThan(BODY_BYTES / 4);
    expect(await waitingOn(n2)).toBe(0);
    // n2 deleted its row without listing the object for removal: it stays for n1.
    const status = (await admin(n2, 'GET', '/status')).body;
    expect(status.body_store).toMatchObject({ backend: store.backend, state: 'ok', objects_to_remove: 0 });
    expect(await store.count('n2/')).toBe(1);

    expect(
      (await admin(urlOf('n1'), 'POST', '/commands/activate', { tenant_id: 'acme', batch_code: 'held' })).status,
    ).toBe(200);
    await until(() => relayedBody('drained-1') !== undefined, 'n1 to relay drained-1');
    expect(relayedBody('drained-1')).toContain(body);

    // The drained node stops cleanly (exit 0) with its body store open.
    const n2Node = fleet.nodes.find((node) => node.id === 'n2');
    n2Node?.daemon.child.kill('SIGTERM');
    expect(await n2Node?.daemon.exited).toEqual({ code: 0, signal: null });
  });

  it('refuses large mail while the shared store does not answer, says why, and takes small mail meanwhile', async () => {
    const n1 = urlOf('n1');
    await store.outage();
    const large = await admin(n1, 'POST', '/add-messages', { messages: [message('refused-1', bodyText())] });
    expect(large.status, large.text).toBe(503);
    expect(large.body.error.code).toBe('STORE_UNAVAILABLE');
    const small = await admin(n1, 'POST', '/add-messages', {
      messages: [{ ...message('small-1', 'hello'), batch_code: null }],
    });
    expect(small.body, small.text).toMatchObject({ queued: 1, rejected: [] });
    const ready = await api(n1, 'GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks).toMatchObject({ body_store: 'not ready' });
    // Nothing of the refused message was kept; the small one was.
    expect((await admin(n1, 'GET', '/messages/refused-1?tenant_id=acme')).status).toBe(404);
    expect((await admin(n1, 'GET', '/messages/small-1?tenant_id=acme')).status).toBe(200);
  });
});
