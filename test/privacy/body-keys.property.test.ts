/**
 * The property of issue 45 on the real SQLite store: any sequence of submit (in memory, raw or
 * spooled), send, bounce, resend, report, retention, erase and restart leaves no readable body
 * whose key was shredded and no data key without its body, and every readable body opens to what
 * was submitted last under its client id (also as the relay is handed it).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/core/message/index.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite-store.js';
import { BODY_COLUMNS, openStored, spoolReader } from '../../src/store/stored-body.js';
import { hostileRuns, hostileSeed } from '../helpers/property-runs.js';

const blind = createBlindIndex(Buffer.alloc(32, 7));
const IDS = ['m0', 'm1', 'm2', 'm3'];
const PEOPLE = ['ann@example.net', 'bob@example.org'];

type Op =
  | { op: 'submit'; id: string; to: string; form: 'payload' | 'raw' | 'spooled'; text: string }
  | { op: 'send' | 'report' | 'retention' | 'restart' }
  | { op: 'bounce' | 'resend' | 'eraseId'; id: string }
  | { op: 'eraseAddress'; to: string };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('submit' as const),
      id: fc.constantFrom(...IDS),
      to: fc.constantFrom(...PEOPLE),
      form: fc.constantFrom('payload' as const, 'raw' as const, 'spooled' as const),
      text: fc.string({ minLength: 1, maxLength: 40 }),
    }),
  },
  { weight: 3, arbitrary: fc.constantFrom({ op: 'send' as const }, { op: 'report' as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ op: 'retention' as const }, { op: 'restart' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom('bounce' as const, 'resend' as const, 'eraseId' as const),
      id: fc.constantFrom(...IDS),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('eraseAddress' as const), to: fc.constantFrom(...PEOPLE) }) },
);

/** What the test expects of each client id: the body last submitted while it could be, and whether it is gone. */
interface Expected {
  body: string;
  to: string;
  state: 'waiting' | 'sent' | 'error';
  /** Its outcome was reported (before the current instant): retention shreds it. */
  reported: boolean;
  gone: boolean;
  /** Erased on request: its envelope went with its body (retention takes the body alone). */
  erased: boolean;
}

describe('bodies and their keys under any sequence of operations', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('never leaves a readable body whose key was shredded, nor a key without its body; every readable body is what was submitted', () => {
    let runs = 0;
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 30 }), (ops) => {
        runs += 1;
        const dir = mkdtempSync(join(tmpdir(), 'mailproxy-keys-property-'));
        dirs.push(dir);
        const world = openWorld(join(dir, 'db.sqlite'));
        try {
          for (const op of ops) {
            world.apply(op);
            world.check();
          }
        } finally {
          world.close();
        }
      }),
      { seed: hostileSeed(), numRuns: hostileRuns(60), endOnFailure: true },
    );
    expect(runs).toBe(hostileRuns(60));
  });
});

function openWorld(path: string) {
  const seal = createBodySeal([keyEncryptionKey(randomBytes(32))]);
  const secrets = createAesGcmSecretBox(randomBytes(32));
  let next = 0;
  let now = 1_700_000_000_000;
  const ids = { uuid: () => `00000000-0000-7000-8000-${String((next += 1)).padStart(12, '0')}` };
  const open = (): SqliteStore =>
    createSqliteStore({ path, secrets, bodies: seal, blindIndex: () => blind, ids, now: () => now });
  let store = open();
  const admin = new Database(path);
  admin
    .prepare(
      `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`,
    )
    .run();
  admin
    .prepare(
      `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, created_at, updated_at) VALUES ('acme', 'main', '127.0.0.1', 25, 'none', 0, 0)`,
    )
    .run();
  const expected = new Map<string, Expected>();

  const submit = (op: Extract<Op, { op: 'submit' }>): void => {
    const body = `${op.form}:${op.text}`;
    const bytes = Buffer.from(body);
    let content: NewMessage['content'];
    if (op.form === 'payload') content = { kind: 'payload', json: body };
    else if (op.form === 'raw') content = { kind: 'raw', bytes };
    else {
      const spoolId = store.spool.open(now, 'acme');
      const half = Math.ceil(bytes.length / 2);
      store.spool.append(spoolId, 0, bytes.subarray(0, half));
      store.spool.append(spoolId, 1, bytes.subarray(half));
      content = { kind: 'spooled', spoolId };
    }
    const message: NewMessage = {
      tenantId: 'acme', id: op.id, accountId: 'main', priority: 2, batchCode: null, deferredUntil: null, content,
      subject: `subject of ${op.id}`, messageId: `<${op.id}@acme.example>`, mailFrom: 'app@acme.example', rcptTo: [op.to],
      sizeBytes: bytes.length, suspended: false,
    }; // prettier-ignore
    const result = store.queue.enqueue([message], now, null);
    if (result.notWaiting.length > 0) {
      if (content.kind === 'spooled') store.spool.discard(content.spoolId);
      return;
    }
    expected.set(op.id, { body, to: op.to, state: 'waiting', reported: false, gone: false, erased: false });
  };

  const send = (): void => {
    const claimed = store.queue.claim({ tenantId: 'acme', accountId: 'main', limit: 10, now, leaseOwner: 'me', leaseUntil: now + 60_000 });
    for (const message of claimed) {
      const stored = message.spoolId === null ? { key: message.key, parts: message.body === null ? [] : [message.body] } : store.queue.spooledContent(message.spoolId);
      // What the relay would be handed opens to the body last submitted under this id.
      expect(openStored(seal, 'acme', stored)?.toString()).toBe(expected.get(message.id)?.body);
      store.queue.record([{ pk: message.pk, attempt: message.attempts, at: now, kind: 'sent', replyCode: 250, enhancedStatus: '2.0.0', text: 'ok', refused: [] }]);
      const model = expected.get(message.id);
      if (model !== undefined) model.state = 'sent';
    }
  }; // prettier-ignore

  const erased = (matches: (id: string, model: Expected) => boolean): void => {
    for (const [id, model] of expected)
      if (matches(id, model)) {
        model.gone = true;
        model.erased = true;
        if (model.state === 'waiting') model.state = 'error';
      }
  };

  const apply = (op: Op): void => {
    now += 1000;
    switch (op.op) {
      case 'submit':
        return submit(op);
      case 'send':
        return send();
      case 'report':
        admin.prepare(`UPDATE messages SET reported_at = ? WHERE state IN ('sent', 'error') AND reported_at IS NULL`).run(now);
        for (const model of expected.values()) if (model.state !== 'waiting') model.reported = true;
        return;
      case 'retention':
        // As retention runs: the bodies shredded, then the sealed bytes of every shredded body removed
        // (an erasure's too, until now left beside their rows without a key).
        store.messages.shredBodies(now, now);
        while (store.messages.removeShreddedBodies() > 0);
        for (const model of expected.values()) if (model.state !== 'waiting' && model.reported) model.gone = true;
        return;
      case 'restart':
        store.close();
        store = open();
        return;
      case 'bounce':
        store.bounces.record({ tenantId: 'acme', clientId: op.id, type: 'hard', code: '5.1.1', reason: 'user unknown', recipient: null, at: now });
        return;
      case 'resend': {
        const outcome = store.messages.resend('acme', [op.id], now, null);
        const model = expected.get(op.id);
        if (outcome.done.length > 0 && model !== undefined) Object.assign(model, { state: 'waiting', reported: false });
        return;
      }
      case 'eraseId':
        store.erasure.erase({ kind: 'messages', tenantId: 'acme', ids: [op.id] }, now, null);
        return erased((id) => id === op.id);
      case 'eraseAddress':
        store.erasure.erase({ kind: 'address', tenantId: 'acme', address: op.to }, now, null);
        return erased((_, model) => model.to === op.to);
    }
  }; // prettier-ignore

  const check = (): void => {
    const rows = admin.prepare(`SELECT id, ${BODY_COLUMNS}, spool_id, body_shredded_at FROM messages`).all() as Array<{ id: string; body: Buffer | null; key: Buffer | null; spool_id: number | null; body_shredded_at: number | null }>;
    let live = 0;
    let kept = 0;
    for (const row of rows) {
      const model = expected.get(row.id);
      // The envelope, sealed under a key of its own, outlives a body that retention shredded; an erasure takes it.
      const envelope = store.messages.detail('acme', row.id)?.message.rcptTo;
      expect(envelope, `${row.id}'s envelope`).toEqual(model === undefined || model.erased ? [] : [model.to]);
      if (model !== undefined && !model.erased) kept += 1;
      const stored = row.spool_id === null ? { key: row.key, parts: row.body === null ? [] : [row.body] } : spoolReader(admin)(row.spool_id);
      const opened = openStored(seal, 'acme', stored);
      if (model === undefined || model.gone) {
        expect(opened, `${row.id} was shredded or erased`).toBeNull();
        expect(row.body_shredded_at).not.toBeNull();
      } else {
        expect(opened?.toString(), `${row.id} opens to what was submitted`).toBe(model.body);
        live += 1;
      }
    }
    // Every key seals a body still readable (in its row, or a spool's in data_keys) or the envelope of a
    // message not erased: no key outlives what it seals, and none is without it.
    const keys = admin.prepare(`SELECT count(body_key) AS bodies, count(personal_key) AS envelopes, (SELECT count(*) FROM data_keys) AS spools,
        count(CASE WHEN body_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM message_bodies b WHERE b.pk = messages.pk) THEN 1 END) AS without
      FROM messages`).get() as { bodies: number; envelopes: number; spools: number; without: number };
    expect(keys.bodies + keys.spools).toBe(live);
    expect([keys.envelopes, keys.without]).toEqual([kept, 0]);
    // Sealed bytes without their key are only those listed for retention to remove.
    expect(admin.prepare(`SELECT count(*) FROM message_bodies b WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.pk = b.pk AND m.body_key IS NOT NULL)
        AND b.pk NOT IN (SELECT pk FROM shredded_bodies)`).pluck().get()).toBe(0);
  }; // prettier-ignore

  return {
    apply,
    check,
    close: () => {
      store.close();
      admin.close();
    },
  };
}
