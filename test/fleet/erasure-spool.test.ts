/**
 * Erasure in fleet mode on real peers (a three-server NATS cluster, three
 * `mailproxy serve` processes sharing one secret key, an SMTP sink): what the
 * fleet's replicated spool holds of a person goes with the erasure, not only
 * each node's SQLite. Everything there is sealed, but the wrapped keys open
 * with the fleet's shared secret: so the check opens what it reads, as anyone
 * holding that secret could. Messages waiting on a node, erased by address
 * through another node, leave no trace of the address, the subject or any
 * 16-byte run of the body in any message of the spool stream or of its object
 * store, read back through the JetStream API; the messages that shared their
 * record are adopted, and sent, when the node is lost with its disk.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEnvelope } from '../../src/core/message/index.js';
import { createBodySeal } from '../../src/security/body-seal.js';
import { loadKeyMaterial } from '../../src/security/key-material.js';
import {
  FLEET_SECRET_KEY,
  provisionTenant,
  startFleet,
  untilOrExplain,
  fleetAdmin,
  withClusterConnection,
  type TestFleet,
} from '../helpers/fleet.js';
import { copiesById } from '../helpers/outage-checks.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const TENANT = 'acme';
const SPOOL_STREAM = 'MAILPROXY_FLEET_SPOOL';
const OBJECTS_STREAM = `OBJ_${SPOOL_STREAM}_large`;
/** At least node_timeout_seconds (1.5 in the tests): a lost node's spool is adopted within seconds. */
const ADOPT_AFTER_SECONDS = '4';

const ANN = 'ann.private@erase.example';
const SUBJECT = 'Ann’s confidential medical appointment';
const BODY = 'Dear Ann, your results from the 14th are ready: please call Dr Quill on 0123-456-789 to discuss them.';
const LARGE_MARK = 'ann-large-attachment-marker';

let fleet: TestFleet;
let sink: SmtpSink;
let key: string;
const keyDir = mkdtempSync(join(tmpdir(), 'mailproxy-erasure-keys-'));
/** What anyone holding the fleet's secret key can open: the sealed bodies and personal fields in the cluster. */
const seal = createBodySeal(
  loadKeyMaterial({ dataDir: keyDir, secretKey: FLEET_SECRET_KEY, adminToken: 'x'.repeat(16) }).bodyKeys,
);

const admin = fleetAdmin;
const nodeOf = (id: string) => fleet.nodes.find((node) => node.id === id)!;
const until = (check: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000) =>
  untilOrExplain(fleet, check, what, timeoutMs);

const withCluster = <T>(use: (nc: NatsConnection) => Promise<T>): Promise<T> => withClusterConnection(fleet, use);

/** A spool entry's sealed parts opened with the shared secret: its personal fields and its body, as text. */
function opened(entry: Record<string, unknown>): string {
  const tenantId = String(entry.tenant_id);
  const texts: string[] = [JSON.stringify(entry)];
  const personal = entry.personal as { key: string; sealed: string } | null | undefined;
  if (personal)
    texts.push(
      JSON.stringify(
        openEnvelope(seal, Buffer.from(personal.key, 'hex'), tenantId, Buffer.from(personal.sealed, 'hex')),
      ),
    );
  const body = entry.sealed as { key: string; parts: string[] } | null | undefined;
  if (body)
    texts.push(
      seal
        .open({
          tenantId,
          key: Buffer.from(body.key, 'base64'),
          parts: body.parts.map((part) => Buffer.from(part, 'base64')),
        })
        .toString('utf8'),
    );
  if (typeof entry.raw_base64 === 'string') texts.push(Buffer.from(entry.raw_base64, 'base64').toString('utf8'));
  return texts.join('\n');
}

/**
 * Everything the spool holds, read back through the JetStream API: every message of the stream and
 * of its object store, raw, inflated, and each entry opened with the shared secret.
 */
async function spoolHoldings(): Promise<{ text: string; ids: string[] }> {
  return withCluster(async (nc) => {
    const jsm = await jetstreamManager(nc);
    const objects = await new Objm(nc).open(`${SPOOL_STREAM}_large`);
    const texts: string[] = [];
    const ids: string[] = [];
    const entries = async (json: Record<string, unknown>) => {
      const list = Array.isArray(json.entries) ? (json.entries as Array<Record<string, unknown>>) : [];
      if (typeof json.object === 'string') {
        const blob = await objects.getBlob(json.object);
        if (blob !== null) list.push(JSON.parse(Buffer.from(blob).toString('utf8')) as Record<string, unknown>);
      }
      for (const entry of list) {
        ids.push(String(entry.id));
        texts.push(opened(entry));
      }
    };
    for (const stream of [SPOOL_STREAM, OBJECTS_STREAM]) {
      const { first_seq: first, last_seq: last } = (await jsm.streams.info(stream)).state;
      for (let seq = first; seq <= last && seq > 0; seq += 1) {
        const message = await jsm.streams.getMessage(stream, { seq });
        if (message === null) continue;
        const raw = Buffer.from(message.data);
        texts.push(raw.toString('latin1'));
        if (stream !== SPOOL_STREAM) continue;
        const data = message.header?.get('Content-Encoding') === 'deflate' ? inflateRawSync(raw) : raw;
        texts.push(data.toString('utf8'));
        await entries(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
      }
    }
    return { text: texts.join('\n'), ids };
  });
}

/** Longer than a read of the spool ever takes here (about a second); a read past it is stuck. */
const READ_BOUND_MS = 15_000;

/**
 * One read of the spool, which can race n2 writing its records and their objects again: an object
 * replaced under the read reads as corrupt (its metadata names the chunks it had) or never
 * finishes (the chunks it waits for are gone). Either is a read that saw nothing settled: null,
 * for the caller's poll to read again. Anything else fails the test.
 */
async function holdingsOrNull(): Promise<{ text: string; ids: string[] } | null> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the spool read did not finish')), READ_BOUND_MS);
  });
  try {
    return await Promise.race([spoolHoldings(), stuck]);
  } catch (error) {
    if (/digests do not match|the spool read did not finish/.test(String(error))) return null;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The spool, once a read of it goes through. */
async function readSpool(what: string): Promise<{ text: string; ids: string[] }> {
  let holdings: { text: string; ids: string[] } | null = null;
  await until(async () => (holdings = await holdingsOrNull()) !== null, what, 60_000);
  return holdings as unknown as { text: string; ids: string[] };
}

/** What of Ann a text holds: her address, the subject, runs of 16 bytes of the body, the large message's mark. */
function tracesOfAnn(text: string): string[] {
  const runs = Array.from({ length: BODY.length - 15 }, (_, at) => BODY.slice(at, at + 16));
  return [ANN, SUBJECT, LARGE_MARK, ...runs].filter((trace) => text.includes(trace));
}

beforeAll(async () => {
  sink = await startSmtpSink();
  fleet = await startFleet(['n1', 'n2', 'n3'], { MAILPROXY_FLEET_ADOPT_AFTER_SECONDS: ADOPT_AFTER_SECONDS });
  key = await provisionTenant(fleet, TENANT, { host: '127.0.0.1', port: sink.port, tls_mode: 'none' });
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
  await sink?.stop();
  rmSync(keyDir, { recursive: true, force: true });
});

/** The adoption of `node`'s spool on its data directory `instance`, as a survivor logged it. */
const adoptionOf = (node: string, instance: string) =>
  fleet.nodes
    .filter((survivor) => survivor.id !== node)
    .flatMap((survivor) => survivor.daemon.entries)
    .find((entry) => entry.msg === 'lost node’s spool adopted' && entry.node === node && entry.instance === instance);

describe('the replicated spool', () => {
  it('keeps nothing of messages erased while they wait, and loses nothing of those that shared their record', async () => {
    // Held fleet-wide: everything waits, nothing is in flight when n2 is lost.
    expect((await admin(nodeOf('n1').url, 'POST', '/commands/suspend', { tenant_id: TENANT })).status).toBe(200);
    const n2 = nodeOf('n2');
    const mail = (id: string, to: string | string[], subject: string, body: string) => ({
      id,
      from: 'app@acme.example',
      to,
      subject,
      body,
    });
    // One request, one commit: one record holds Ann's entries and the others'.
    const posted = await api(n2.url, 'POST', '/add-messages', {
      token: key,
      body: {
        messages: [
          mail('keep-1', 'bob@keep.example', 'for Bob', 'hello Bob'),
          mail('gone-1', ANN, SUBJECT, BODY),
          mail('keep-2', 'carol@keep.example', 'for Carol', 'hello Carol'),
          mail('gone-2', ['dave@keep.example', ANN], `${SUBJECT}, again`, BODY),
        ],
      },
    });
    expect(posted.body, posted.text).toMatchObject({ queued: 4, rejected: [] });
    // Larger than a NATS message: its entry keeps its bytes in the spool's object store.
    const session = await openSubmission(n2.smtpPort);
    try {
      await session.login(TENANT, key);
      const body = Array.from({ length: 20_000 }, (_, line) => `${LARGE_MARK} ${line} ${'y'.repeat(60)}`).join('\r\n');
      await session.send(
        { from: 'app@acme.example', to: [ANN] },
        `From: app@acme.example\r\nTo: ${ANN}\r\nSubject: ${SUBJECT} (scan)\r\nX-Genro-Mail-ID: gone-large\r\n\r\n${body}\r\n`,
      );
    } finally {
      session.close();
    }
    const before = await readSpool('a read of the spool before the erasure');
    expect(before.ids).toEqual(expect.arrayContaining(['keep-1', 'gone-1', 'keep-2', 'gone-2']));
    // Opened with the shared secret, the cluster's copies name Ann: what the check looks for is there to find.
    expect(tracesOfAnn(before.text)).toEqual(expect.arrayContaining([ANN, SUBJECT, LARGE_MARK, BODY.slice(0, 16)]));

    // Erased by address through n1: n2 holds the messages.
    const erased = await admin(nodeOf('n1').url, 'POST', '/commands/erase', { address: ANN });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toMatchObject({ erased_messages: 3, stopped_waiting: 3 });
    expect(erased.body.nodes.n2.erased_messages).toBe(3);
    // At once, not when the messages that share the record end (they wait, suspended).
    // Meanwhile n2 writes its records and their objects again (holdingsOrNull).
    await until(
      async () => {
        const holdings = await holdingsOrNull();
        return holdings !== null && tracesOfAnn(holdings.text).length === 0;
      },
      'the spool to hold nothing of Ann',
      40_000,
    );
    const after = await readSpool('a read of the spool after the erasure');
    expect(tracesOfAnn(after.text)).toEqual([]);
    expect(after.ids.filter((id) => id.startsWith('gone-'))).toEqual([]);
    expect(after.ids).toEqual(expect.arrayContaining(['keep-1', 'keep-2']));
    expect((await admin(n2.url, 'GET', '/status')).body.fleet.spool.pending_erasures).toBe(0);

    // n2 is lost with its disk: a survivor adopts what it held from the records written again, and sends it.
    const { instance } = JSON.parse(readFileSync(join(n2.cwd, 'data', 'fleet-node.json'), 'utf8')) as {
      instance: string;
    };
    n2.daemon.child.kill('SIGKILL');
    await n2.daemon.exited;
    rmSync(n2.cwd, { recursive: true, force: true });
    await until(() => adoptionOf('n2', instance) !== undefined, 'a survivor to adopt n2’s spool', 60_000);
    expect(adoptionOf('n2', instance)?.adopted).toBe(2);
    expect((await admin(nodeOf('n1').url, 'POST', '/commands/activate', { tenant_id: TENANT })).status).toBe(200);
    await until(
      () => ['keep-1', 'keep-2'].every((id) => copiesById(sink.messages).get(id) === 1),
      'the messages that shared Ann’s record to be sent',
      60_000,
    );
    expect(sink.messages.filter((message) => message.rcptTo.includes(ANN))).toEqual([]);
    expect([...copiesById(sink.messages).keys()].filter((id) => id.startsWith('gone-'))).toEqual([]);
  }, 240_000);
});
