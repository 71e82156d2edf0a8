// The PEC store against a real database: a receipt and its effect once only, the acceptance wait and its timeout.
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { correlateReceipt, planReceipt, type PecSettlement } from '../../src/core/pec/plan.js';
import { NOT_A_RECEIPT, type PecReceiptFindings } from '../../src/core/pec/pec.js';
import { createSqliteMessageAdmin } from '../../src/store/message-admin.js';
import { createMessageEventWriter } from '../../src/store/message-event-writer.js';
import { createOutcomeRecorder } from '../../src/store/message-outcomes.js';
import { loadMigrations, migrate } from '../../src/store/migrations.js';
import { createSqlitePecLedger } from '../../src/store/pec-ledger.js';
import { createSqlitePecReceipts } from '../../src/store/pec-receipts.js';
import { createRecordFields } from '../../src/store/record-fields.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';

const T0 = 1_700_000_000_000;
const seal = createBodySeal([keyEncryptionKey(randomBytes(32))]);
const personal = createRecordFields(createAesGcmSecretBox(randomBytes(32)), createBlindIndex(randomBytes(32)));
const MINUTE = 60_000;

function world() {
  const db = new Database(':memory:');
  migrate(db, loadMigrations());
  let n = 0;
  const writeEvent = createMessageEventWriter(
    db,
    { uuid: () => `00000000-0000-7000-8000-${String((n += 1)).padStart(12, '0')}` },
    seal,
  );
  db.prepare(
    `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`,
  ).run();
  const account = db.prepare(
    `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, is_pec, created_at, updated_at) VALUES ('acme', ?, 'h', 25, 'none', ?, 0, 0)`,
  );
  account.run('pec', 1);
  account.run('main', 0);
  const insert =
    db.prepare(`INSERT INTO messages (tenant_id, id, account_id, source, mail_from, rcpt_to, message_id_header, state, attempts, next_attempt_at, created_at, updated_at)
    VALUES ('acme', ?, ?, 'http', 'a@x', '["ann@pec.example"]', ?, 'sending', 1, 0, 0, 0) RETURNING pk`);
  const record = createOutcomeRecorder(db, writeEvent, seal);
  /** A message the relay took at `at`. */
  const sent = (id: string, accountId: string, at: number): number => {
    const { pk } = insert.get(id, accountId, `<${id}@acme.example>`) as { pk: number };
    record([{ kind: 'sent', pk, attempt: 1, at, replyCode: 250, enhancedStatus: '2.0.0', text: 'ok', refused: [] }]);
    return pk;
  };
  const row = (id: string) =>
    db
      .prepare(`SELECT pec_rda_at, pec_rdc_at, pec_error, pec_error_at, pec_awaiting_since FROM messages WHERE id = ?`)
      .get(id);
  const pecEvents = () =>
    (db.prepare(`SELECT count(*) AS n FROM outbox WHERE event_type = 'message.pec'`).get() as { n: number }).n;
  const receipts = createSqlitePecReceipts(db, writeEvent, seal, personal);
  return {
    db,
    sent,
    row,
    pecEvents,
    record,
    admin: createSqliteMessageAdmin(db, writeEvent, receipts, seal),
    ledger: createSqlitePecLedger(db, writeEvent, seal, personal),
    receipts,
  };
}

const findings = (more: Partial<PecReceiptFindings>): PecReceiptFindings => ({
  ...NOT_A_RECEIPT,
  recognisedBy: 'header',
  ...more,
});

function settlement(w: ReturnType<typeof world>, uid: number, found: PecReceiptFindings, at: number): PecSettlement {
  const receiptId = `r-${uid}`;
  const plan = planReceipt(
    found,
    correlateReceipt(found, (by, value) => w.ledger.candidates(by, value, 'acme')),
    receiptId,
    at,
  );
  const raw = Buffer.from(`receipt ${uid}`);
  return {
    mailbox: 'pec:acme/pec',
    uidValidity: 7,
    uid,
    headerMessageId: `<receipt-${uid}@gestore>`,
    from: null,
    subject: null,
    sizeBytes: raw.length,
    kind: 'pec_receipt',
    plan,
    receipt: {
      receiptId,
      tenantId: 'acme',
      accountId: 'pec',
      mailbox: 'pec:acme/pec',
      uidValidity: 7,
      uid,
      receivedAt: at,
      findings: found,
      headerMessageId: null,
      subject: null,
      sizeBytes: raw.length,
      raw,
      complete: true,
    },
  };
}

describe('PEC receipts in the store', () => {
  it("a PEC account's sent message waits for its acceptance; an ordinary one does not", () => {
    const w = world();
    w.sent('atto-1', 'pec', T0);
    w.sent('plain-1', 'main', T0);
    expect(w.row('atto-1')).toMatchObject({ pec_awaiting_since: T0 });
    expect(w.row('plain-1')).toMatchObject({ pec_awaiting_since: null });
  });

  it('records a receipt and its effect once, even when its batch is settled again after a crash', () => {
    const w = world();
    w.sent('atto-1', 'pec', T0);
    w.db
      .prepare(
        `INSERT INTO bounce_mailboxes (mailbox, uid_validity, last_uid, updated_at) VALUES ('pec:acme/pec', 7, 0, 0)`,
      )
      .run();
    const batch = [
      settlement(
        w,
        1,
        findings({ type: 'accettazione', referencedMessageId: '<atto-1@acme.example>', issuedAt: T0 + MINUTE }),
        T0 + 2 * MINUTE,
      ),
      settlement(
        w,
        2,
        findings({
          type: 'avvenuta-consegna',
          mailId: 'atto-1',
          recipient: 'ANN@pec.example',
          issuedAt: T0 + 3 * MINUTE,
        }),
        T0 + 4 * MINUTE,
      ),
    ];
    w.ledger.settle(batch, T0 + 4 * MINUTE);
    w.ledger.settle(batch, T0 + 5 * MINUTE);
    expect(w.row('atto-1')).toMatchObject({
      pec_rda_at: T0 + MINUTE,
      pec_rdc_at: T0 + 3 * MINUTE,
      pec_error: null,
      pec_awaiting_since: null,
    });
    expect(w.pecEvents()).toBe(2);
    expect(
      w.receipts
        .list({ tenantId: 'acme', clientId: 'atto-1', before: null, limit: 10 })
        .map((receipt) => [receipt.receiptType, receipt.recipient]),
    ).toEqual([
      ['avvenuta-consegna', 'ANN@pec.example'],
      ['accettazione', null],
    ]);
    expect(w.receipts.raw('r-2', 'acme')?.raw.toString()).toBe('receipt 2');
    // Kept sealed: the evidence's bytes are not in the table in clear.
    const stored = w.db.prepare(`SELECT raw FROM pec_receipts WHERE receipt_id = 'r-2'`).pluck().get() as Buffer;
    expect(stored.includes('receipt 2')).toBe(false);
    expect(w.receipts.raw('r-2', 'other')).toBeNull();
    expect((w.db.prepare(`SELECT last_uid FROM bounce_mailboxes`).get() as { last_uid: number }).last_uid).toBe(2);
  });

  it("keeps a receipt's recipient, subject and error detail sealed, and its event's texts redacted; lists them opened", () => {
    const w = world();
    w.sent('atto-1', 'pec', T0);
    const failed = settlement(
      w,
      1,
      findings({
        type: 'errore-consegna',
        mailId: 'atto-1',
        recipient: 'ann.rossi@pec.example',
        errorDetail: 'destinatario ann.rossi@pec.example sconosciuto',
      }),
      T0 + MINUTE,
    );
    const subject = 'ERRORE DI CONSEGNA: Atto per Ann Rossi';
    w.ledger.settle(
      [{ ...failed, from: 'posta-certificata@pec.example', subject, receipt: { ...failed.receipt!, subject } }],
      T0 + MINUTE,
    );
    const [listed] = w.receipts.list({ tenantId: 'acme', clientId: 'atto-1', before: null, limit: 10 });
    expect(listed).toMatchObject({
      recipient: 'ann.rossi@pec.example',
      subject,
      errorDetail: 'destinatario ann.rossi@pec.example sconosciuto',
    });
    const stored = JSON.stringify([
      w.db.prepare(`SELECT * FROM pec_receipts`).all(),
      w.db.prepare(`SELECT * FROM bounce_messages`).all(),
    ]);
    expect(stored).not.toContain('ann.rossi');
    expect(stored).not.toContain('Ann Rossi');
    expect(stored).not.toContain('posta-certificata@');
    // The event's texts quote the address redacted (its `recipient` field is a personal one, scrubbed by erasure).
    const event = w.db.prepare(`SELECT text, payload FROM outbox WHERE event_type = 'message.pec'`).get() as {
      text: string;
      payload: string;
    };
    const data = JSON.parse(event.payload) as Record<string, unknown>;
    expect([event.text, data.error, data.error_detail]).toEqual([
      'errore-consegna: …@pec.example: destinatario …@pec.example sconosciuto',
      'errore-consegna: …@pec.example: destinatario …@pec.example sconosciuto',
      'destinatario …@pec.example sconosciuto',
    ]);
    expect(w.db.prepare(`SELECT recipient_digest FROM pec_receipts`).pluck().get()).toMatch(/^a[0-9a-f]{16}$/);
  });

  it('a resend is a new certified transmission: its PEC fields start again and it waits for its own acceptance', () => {
    const w = world();
    const pk = w.sent('atto-1', 'pec', T0);
    w.db
      .prepare(
        `INSERT INTO bounce_mailboxes (mailbox, uid_validity, last_uid, updated_at) VALUES ('pec:acme/pec', 7, 0, 0)`,
      )
      .run();
    w.ledger.settle(
      [settlement(w, 1, findings({ type: 'accettazione', mailId: 'atto-1', issuedAt: T0 + MINUTE }), T0 + MINUTE)],
      T0 + MINUTE,
    );
    expect(w.admin.resend('acme', ['atto-1'], T0 + 2 * MINUTE, null).done).toEqual(['atto-1']);
    expect(w.row('atto-1')).toMatchObject({ pec_rda_at: null, pec_awaiting_since: null });
    w.db.prepare(`UPDATE messages SET state = 'sending', attempts = 2 WHERE pk = ?`).run(pk);
    w.record([
      {
        kind: 'sent',
        pk,
        attempt: 2,
        at: T0 + 3 * MINUTE,
        replyCode: 250,
        enhancedStatus: '2.0.0',
        text: 'ok',
        refused: [],
      },
    ]);
    expect(w.row('atto-1')).toMatchObject({ pec_rda_at: null, pec_awaiting_since: T0 + 3 * MINUTE });
    // The first transmission's receipt is still there.
    expect(w.receipts.ofMessage(pk).map((receipt) => receipt.receiptType)).toEqual(['accettazione']);
  });

  it('lets a message stop waiting, without an error, once its account is no longer PEC', () => {
    const w = world();
    w.sent('atto-1', 'pec', T0);
    w.db.prepare(`UPDATE accounts SET is_pec = 0 WHERE id = 'pec'`).run();
    expect(w.receipts.expireAwaiting(T0 + 1, T0 + 31 * MINUTE, 100)).toEqual({ expired: 0, released: 1 });
    expect(w.row('atto-1')).toMatchObject({ pec_error: null, pec_awaiting_since: null });
    expect(w.pecEvents()).toBe(0);
  });

  it('prunes receipts read before the cutoff, and only those', () => {
    const w = world();
    w.sent('atto-1', 'pec', T0);
    w.db
      .prepare(
        `INSERT INTO bounce_mailboxes (mailbox, uid_validity, last_uid, updated_at) VALUES ('pec:acme/pec', 7, 0, 0)`,
      )
      .run();
    w.ledger.settle([settlement(w, 1, findings({ type: 'accettazione', mailId: 'atto-1' }), T0)], T0);
    w.ledger.settle(
      [settlement(w, 2, findings({ type: 'avvenuta-consegna', mailId: 'atto-1' }), T0 + 10 * MINUTE)],
      T0 + 10 * MINUTE,
    );
    expect(w.receipts.prune(T0 + MINUTE)).toBe(1);
    expect(
      w.receipts
        .list({ tenantId: null, clientId: null, before: null, limit: 10 })
        .map((receipt) => receipt.receiptType),
    ).toEqual(['avvenuta-consegna']);
    expect(w.receipts.prune(T0 + MINUTE)).toBe(0);
  });

  it('times out only what waited longer than the timeout, once; a late acceptance clears that error but not a delivery error', () => {
    const w = world();
    w.sent('atto-1', 'pec', T0);
    w.sent('atto-2', 'pec', T0 + 10 * MINUTE);
    w.sent('atto-3', 'pec', T0);
    const cutoff = T0 + 5 * MINUTE - 30 * MINUTE;
    expect(w.receipts.expireAwaiting(cutoff, T0 + 5 * MINUTE, 100)).toEqual({ expired: 0, released: 0 });
    expect(w.receipts.expireAwaiting(T0 + 1, T0 + 31 * MINUTE, 100)).toEqual({ expired: 2, released: 0 });
    expect(w.receipts.expireAwaiting(T0 + 1, T0 + 32 * MINUTE, 100)).toEqual({ expired: 0, released: 0 });
    expect(w.row('atto-1')).toMatchObject({
      pec_error: expect.stringContaining('acceptance_timeout'),
      pec_error_at: T0 + 31 * MINUTE,
      pec_awaiting_since: null,
    });
    expect(w.row('atto-2')).toMatchObject({ pec_error: null, pec_awaiting_since: T0 + 10 * MINUTE });

    w.db
      .prepare(
        `INSERT INTO bounce_mailboxes (mailbox, uid_validity, last_uid, updated_at) VALUES ('pec:acme/pec', 7, 0, 0)`,
      )
      .run();
    w.ledger.settle(
      [
        settlement(
          w,
          1,
          findings({ type: 'accettazione', mailId: 'atto-1', issuedAt: T0 + 40 * MINUTE }),
          T0 + 40 * MINUTE,
        ),
        settlement(
          w,
          2,
          findings({
            type: 'errore-consegna',
            mailId: 'atto-3',
            recipient: 'ann@pec.example',
            errorDetail: '5.1.1 utente sconosciuto',
          }),
          T0 + 41 * MINUTE,
        ),
        settlement(
          w,
          3,
          findings({ type: 'accettazione', mailId: 'atto-3', issuedAt: T0 + 42 * MINUTE }),
          T0 + 42 * MINUTE,
        ),
      ],
      T0 + 42 * MINUTE,
    );
    expect(w.row('atto-1')).toMatchObject({ pec_error: null, pec_error_at: null, pec_rda_at: T0 + 40 * MINUTE });
    expect(w.row('atto-3')).toMatchObject({
      // The gestore's words are kept with the recipient redacted, as every diagnostic.
      pec_error: 'errore-consegna: …@pec.example: 5.1.1 utente sconosciuto',
      pec_rda_at: T0 + 42 * MINUTE,
    });
  });
});
