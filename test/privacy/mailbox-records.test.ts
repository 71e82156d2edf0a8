/**
 * Mailbox records and PEC receipts on the real store (store/record-fields.ts): a bounce's
 * From, subject and findings and a receipt's recipient, subject and error detail are in no byte
 * of the database file or its WAL, while the listings show them; erasure by address finds them
 * by digest, and still by their clear forms in rows an earlier version wrote, which the
 * background sealer then seals; a rotation of the master reseals them.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { BouncePlan, MailboxItem, RecipientFinding } from '../../src/core/bounce/index.js';
import { NOT_A_RECEIPT } from '../../src/core/pec/pec.js';
import type { PecSettlement } from '../../src/core/pec/plan.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { rotateStoredKeys } from '../../src/store/key-rotation.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite-store.js';

const ANN = 'ann.rossi@example.net';
const SUBJECT = 'Undelivered: Quarterly statement for Ann Rossi';
const DAEMON = 'MAILER-DAEMON@mx.example.net';
const DIAGNOSTIC = `550 5.1.1 <${ANN}>: Recipient address rejected`;
const PEC_ANN = 'ann.rossi@pec.example.it';
const PEC_SUBJECT = 'ERRORE DI CONSEGNA: Atto per Ann Rossi';
const NEEDLES = [ANN, 'ann.rossi@', 'Ann Rossi', DAEMON, PEC_ANN];
const NOW = 1_700_000_000_000;

const finding = (recipient: string): RecipientFinding => ({
  recipient,
  action: 'failed',
  bounceType: 'hard',
  enhancedStatus: '5.1.1',
  replyCode: '550',
  reason: 'user_unknown',
  diagnostic: DIAGNOSTIC,
});

const item = (uid: number, recipients: RecipientFinding[], from = `Mail Delivery System <${DAEMON}>`): MailboxItem => ({
  mailbox: 'default',
  uidValidity: 1,
  uid,
  headerMessageId: `<dsn-${uid}@mx.example.net>`,
  from,
  subject: SUBJECT,
  sizeBytes: 100,
  findings: {
    kind: 'bounce',
    recipients,
    mailId: null,
    originalMessageId: `<m-${uid}@acme.example>`,
    originalEnvelopeId: null,
    feedbackType: null,
    verpMessagePk: null,
  },
});

const UNMATCHED: BouncePlan = {
  disposition: 'unmatched',
  unmatchedReason: 'not_found',
  match: null,
  bounces: [],
  complaints: [],
  suppressions: [],
};

/** A receipt of tenant acme that no message of ours fits. */
function receipt(uid: number): PecSettlement {
  const raw = Buffer.from(`receipt ${uid}`);
  const findings = {
    ...NOT_A_RECEIPT,
    type: 'errore-consegna' as const,
    recognisedBy: 'header' as const,
    recipient: PEC_ANN,
    errorDetail: `5.1.1 utente ${PEC_ANN} sconosciuto`,
  };
  return {
    mailbox: 'pec:acme/pec',
    uidValidity: 7,
    uid,
    headerMessageId: `<receipt-${uid}@gestore>`,
    from: 'posta-certificata@pec.example.it',
    subject: PEC_SUBJECT,
    sizeBytes: raw.length,
    kind: 'pec_receipt',
    plan: { disposition: 'unmatched', unmatchedReason: 'not_found', match: null, effect: null },
    receipt: {
      receiptId: `r-${uid}`,
      tenantId: 'acme',
      accountId: 'pec',
      mailbox: 'pec:acme/pec',
      uidValidity: 7,
      uid,
      receivedAt: NOW,
      findings,
      headerMessageId: `<receipt-${uid}@gestore>`,
      subject: PEC_SUBJECT,
      sizeBytes: raw.length,
      raw,
      complete: true,
    },
  };
}

describe('mailbox records and PEC receipts keep no address or subject in clear', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  });

  const kek = keyEncryptionKey(randomBytes(32));
  const blindKey = randomBytes(32);
  function open(path: string, masters: Buffer[]): SqliteStore {
    const store = createSqliteStore({
      path,
      secrets: createAesGcmSecretBox(masters),
      bodies: createBodySeal([kek]),
      blindIndex: () => createBlindIndex(blindKey),
      ids: { uuid: () => randomBytes(8).toString('hex') },
      now: Date.now,
    });
    cleanups.push(() => store.close());
    return store;
  }

  function fresh(master = randomBytes(32)) {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-records-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'mailproxy.db');
    const store = open(path, [master]);
    const admin = new Database(path);
    admin
      .prepare(
        `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`,
      )
      .run();
    admin.close();
    return { path, store, master };
  }

  /** The bounce mailbox's records, newest first (the PEC ledger records its mailbox's messages too). */
  const bounceRecords = (store: SqliteStore) =>
    store.bounceLedger
      .list({ disposition: null, tenantId: null, before: null, limit: 10 })
      .filter((record) => record.mailbox === 'default');

  /** Which needles the file and its WAL hold, the WAL checkpointed into the file first. */
  const cleartextIn = (path: string, needles = NEEDLES): string[] => {
    const db = new Database(path);
    db.pragma('wal_checkpoint(PASSIVE)');
    db.close();
    const files = [path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file));
    return needles.filter((needle) => files.some((bytes) => bytes.includes(needle)));
  };

  it('seals them in the database and its WAL, and shows them opened in the listings', () => {
    const { path, store } = fresh();
    store.bounceLedger.settle([{ item: item(1, [finding(ANN)]), plan: UNMATCHED }], NOW);
    store.pecLedger.settle([receipt(1)], NOW);

    expect(cleartextIn(path)).toEqual([]);
    const [record] = bounceRecords(store);
    expect(record).toMatchObject({
      from: `Mail Delivery System <${DAEMON}>`,
      subject: SUBJECT,
      recipients: [finding(ANN)],
      headerMessageId: '<dsn-1@mx.example.net>',
      originalMessageId: '<m-1@acme.example>',
    });
    const [listed] = store.pecReceipts.list({ tenantId: 'acme', clientId: null, before: null, limit: 10 });
    expect(listed).toMatchObject({
      recipient: PEC_ANN,
      subject: PEC_SUBJECT,
      errorDetail: `5.1.1 utente ${PEC_ANN} sconosciuto`,
    });
    expect(store.pecReceipts.raw('r-1', 'acme')?.receipt.recipient).toBe(PEC_ANN);
  });

  it('erases by address the records and receipts that name it, by digest, and no other', () => {
    const { path, store } = fresh();
    store.bounceLedger.settle(
      [
        { item: item(1, [finding(ANN)]), plan: UNMATCHED },
        { item: item(2, [finding(`jo${ANN}`)]), plan: UNMATCHED },
        // Named only by the From header (a reply from the person), any case.
        { item: item(3, [], `Ann Rossi <${ANN.toUpperCase()}>`), plan: UNMATCHED },
      ],
      NOW,
    );
    store.pecLedger.settle([receipt(1)], NOW);

    const counts = store.erasure.erase({ kind: 'address', tenantId: null, address: ANN }, NOW + 1, null);
    expect(counts.mailboxRecords).toBe(2);
    const pec = store.erasure.erase({ kind: 'address', tenantId: 'acme', address: PEC_ANN }, NOW + 1, null);
    // The receipt and the record of the PEC mailbox's message, whose subject names the message.
    expect(pec).toMatchObject({ pecReceipts: 1, mailboxRecords: 1 });
    // The scrub after them, as the daemon's search index loop runs it: the WAL truncated.
    expect(store.erasure.scrub(100)).toBe(0);

    const records = bounceRecords(store);
    expect(
      records.map((record) => [record.uid, record.from, record.recipients.map((found) => found.recipient)]),
    ).toEqual([
      [3, null, []],
      [2, `Mail Delivery System <${DAEMON}>`, [`jo${ANN}`]],
      [1, null, []],
    ]);
    expect(store.pecReceipts.list({ tenantId: 'acme', clientId: null, before: null, limit: 10 })[0]).toMatchObject({
      recipient: null,
      subject: null,
      errorDetail: null,
    });
    // The other address's record is kept, sealed (default 2); nothing of the erased ones is left (default 1 and 3, the PEC record).
    expect(cleartextIn(path, [ANN, PEC_ANN, `jo${ANN}`])).toEqual([]);
    const db = new Database(path, { readonly: true });
    expect(
      db.prepare(`SELECT personal_sealed IS NOT NULL FROM bounce_messages ORDER BY mailbox, uid`).pluck().all(),
    ).toEqual([0, 1, 0, 0]);
    db.close();
  });

  it('reads, erases and seals the rows an earlier version kept in clear', () => {
    const { path, store } = fresh();
    const admin = new Database(path);
    const insert =
      admin.prepare(`INSERT INTO bounce_messages (mailbox, uid_validity, uid, received_at, from_header, subject,
      size_bytes, kind, disposition, findings) VALUES ('default', 1, ?, 0, ?, ?, 1, 'bounce', 'unmatched', ?)`);
    insert.run(1, `Mail Delivery System <${DAEMON}>`, SUBJECT, JSON.stringify([finding(ANN)]));
    insert.run(2, `Mail Delivery System <${DAEMON}>`, SUBJECT, JSON.stringify([finding(`bob@example.org`)]));
    admin
      .prepare(
        `INSERT INTO pec_receipts (receipt_id, tenant_id, account_id, mailbox, uid_validity, uid, received_at, receipt_type,
          recognised_by, recipient, subject, error_detail, size_bytes, complete, sha256, raw)
        VALUES ('old-1', 'acme', 'pec', 'pec:acme/pec', 7, 1, 0, 'errore-consegna', 'header', ?, ?, 'utente sconosciuto', 1, 1, 'x', X'00')`,
      )
      .run(PEC_ANN, PEC_SUBJECT);
    admin.close();

    // Read as they are.
    const listed = () => bounceRecords(store);
    expect(listed().map((record) => record.subject)).toEqual([SUBJECT, SUBJECT]);
    expect(store.pecReceipts.list({ tenantId: 'acme', clientId: null, before: null, limit: 1 })[0]?.recipient).toBe(
      PEC_ANN,
    );
    // Matched in clear by erasure, before the sealer reached them.
    expect(store.erasure.erase({ kind: 'address', tenantId: null, address: ANN }, NOW, null).mailboxRecords).toBe(1);

    // The sealer seals what is left: the other record and the receipt.
    expect(store.bodySealer.remaining()).toMatchObject({ mailboxRecords: 1, pecReceiptFields: 1 });
    expect(store.bodySealer.sealBatch({ rows: 100, bytes: 1024 * 1024 }, NOW)).toBeGreaterThanOrEqual(2);
    expect(store.bodySealer.remaining()).toMatchObject({ mailboxRecords: 0, pecReceiptFields: 0 });
    store.bodySealer.scrub();
    expect(cleartextIn(path, [...NEEDLES, 'bob@example.org'])).toEqual([]);
    expect(listed()[0]?.recipients).toEqual([finding('bob@example.org')]);

    // Sealed since, the receipt is found by its digest.
    expect(store.erasure.erase({ kind: 'address', tenantId: 'acme', address: PEC_ANN }, NOW, null).pecReceipts).toBe(1);
    expect(
      store.pecReceipts.list({ tenantId: 'acme', clientId: null, before: null, limit: 1 })[0]?.recipient,
    ).toBeNull();
  });

  it('opens them under the new master alone after a rotation of the master', () => {
    const { path, store, master } = fresh();
    store.bounceLedger.settle([{ item: item(1, [finding(ANN)]), plan: UNMATCHED }], NOW);
    store.pecLedger.settle([receipt(1)], NOW);
    store.close();

    const next = randomBytes(32);
    const counts = rotateStoredKeys(
      path,
      {
        bodies: createBodySeal([kek]),
        secrets: createAesGcmSecretBox([next, master]),
        tokenDigest: randomBytes(32),
        blindIndex: blindKey,
        unsubscribeLinks: randomBytes(32),
      },
      NOW,
    );
    expect(counts?.secrets).toMatchObject({ failed: 0 });
    expect(counts?.secrets.resealed).toBeGreaterThanOrEqual(3);

    const reopened = open(path, [next]);
    const [record] = bounceRecords(reopened);
    expect(record?.recipients).toEqual([finding(ANN)]);
    expect(reopened.pecReceipts.list({ tenantId: 'acme', clientId: null, before: null, limit: 1 })[0]?.subject).toBe(
      PEC_SUBJECT,
    );
  });
});
