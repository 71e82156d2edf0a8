/**
 * A daemon started on a database an earlier version left, its waiting messages' bodies in
 * clear (an HTTP submission's payload, an SMTP submission's bytes, a spooled one's parts): it
 * seals them in the background, says so in its log and in GET /status, and then relays each
 * message to a real SMTP sink with the bytes it was given; the file holds none of them in clear.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { eventually } from '../helpers/eventually.js';
import { createLegacyDatabase } from '../helpers/legacy-database.js';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';

const HOUR = 3_600_000;
const HTTP_BODY = 'Dear Ann, the statement of account IT60X0542811101000000123456 is attached.';
const SMTP_BODY = 'An SMTP submission stored in clear by the earlier version, relayed as it was.';
const PARTS = ['A spooled submission, first part in clear; ', 'second part in clear; ', 'last part in clear.'];
const PAYLOAD = {
  from: 'sender@example.com',
  to: ['ann@example.net'],
  cc: [],
  bcc: [],
  replyTo: null,
  returnPath: null,
  subject: 'Statement',
  body: HTTP_BODY,
  html: null,
  contentType: 'plain',
  headers: {},
  attachments: [],
  messageId: '<legacy-http@example.com>',
};
const rawMessage = (subject: string, body: string): Buffer =>
  Buffer.from(`From: sender@example.com\r\nTo: rcpt@example.net\r\nSubject: ${subject}\r\n\r\n${body}\r\n`);

describe('a daemon on a database from before bodies were sealed', () => {
  let sink: SmtpSink;
  let fx: QueueFixture;
  let dataDir: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    dataDir = mkdtempSync(join(tmpdir(), 'mailproxy-legacy-'));
    const legacy = createLegacyDatabase(join(dataDir, 'mailproxy.db'), { relayPort: sink.port });
    // Not due for an hour: sealed before anything is sent.
    const later = Date.now() + HOUR;
    legacy.payload('legacy-http', JSON.stringify(PAYLOAD), later);
    legacy.raw('legacy-smtp', rawMessage('smtp', SMTP_BODY), later);
    const head = 'From: sender@example.com\r\nTo: rcpt@example.net\r\nSubject: spooled\r\n\r\n';
    legacy.spooled(
      'legacy-spooled',
      [head + (PARTS[0] ?? ''), ...PARTS.slice(1)].map((part) => Buffer.from(part)),
      later,
    );
    // The copies the earlier version left in free space are VACUUM's (store/body-sealer.test.ts): none here.
    legacy.db.pragma('secure_delete = ON');
    legacy.db.exec('VACUUM');
    legacy.close();
    fx = await startQueueFixture({ dataDir });
  });

  afterAll(async () => {
    await fx?.stop();
    fx?.t.cleanup();
    await sink?.stop();
  });

  it('seals their bodies in the background, and says when it starts and when it is done', async () => {
    const unsealed = async (): Promise<unknown> => {
      const { bodies } = (
        (await fx.admin('GET', '/status')).body as { store: { bodies: { unsealed: number; fields_unsealed: number } } }
      ).store;
      return bodies.unsealed + bodies.fields_unsealed;
    };
    await eventually(async () => (await unsealed()) === 0, 'every body and envelope sealed');
    const logged = fx.t.logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(
      logged.find((line) => line.msg === 'sealing the bodies stored in clear by an earlier version, in the background'),
    ).toMatchObject({ messages: 2, spools: 1, pecReceipts: 0, messageFields: 3 });
    // Three bodies, and the three messages' envelopes and subjects.
    expect(logged.find((line) => line.msg === 'every body stored in clear is sealed now')).toMatchObject({ sealed: 6 });
  });

  it('relays each of them, once due, with the bytes it was given', async () => {
    fx.clock.advance(2 * HOUR);
    await fx.settle();
    await sink.waitForMessages(3);
    const relayed = sink.messages.map((message) => message.raw.toString());
    expect(relayed.filter((raw) => raw.includes(HTTP_BODY))).toHaveLength(1);
    expect(relayed.filter((raw) => raw.includes(SMTP_BODY) && raw.includes('Subject: smtp'))).toHaveLength(1);
    expect(relayed.filter((raw) => raw.includes(`Subject: spooled\r\n\r\n${PARTS.join('')}`))).toHaveLength(1);
    for (const id of ['legacy-http', 'legacy-smtp', 'legacy-spooled'])
      expect((await fx.detail('acme', id)).message.status).toBe('sent');
  });

  it('keeps none of them in clear in its database file or WAL', async () => {
    await fx.stop();
    const path = join(dataDir, 'mailproxy.db');
    const db = new Database(path);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const files = [path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file));
    const needles = [HTTP_BODY, SMTP_BODY, ...PARTS].map((text) => text.slice(0, 24));
    expect(needles.filter((needle) => files.some((bytes) => bytes.includes(needle)))).toEqual([]);
  });
});
