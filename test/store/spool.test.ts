import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/core/message/message.js';
import { openDatabase, type SqliteDatabase } from '../../src/store/database.js';
import { createSqliteMessageQueue } from '../../src/store/message-queue.js';
import { createMessageEventWriter } from '../../src/store/message-event-writer.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createBodySealing } from '../../src/store/message-enqueue.js';
import { createSqliteSpool } from '../../src/store/spool.js';
import { openStored } from '../../src/store/stored-body.js';

const seal = createBodySeal([keyEncryptionKey(randomBytes(32))]);

/** The spool of large SMTP submissions and its bond with the message that names it (migration 3). */
describe('message spool', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const setup = () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-spool-'));
    dirs.push(dir);
    const { db } = openDatabase({ path: join(dir, 'db.sqlite') });
    db.prepare(
      `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`,
    ).run();
    db.prepare(
      `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, created_at, updated_at) VALUES ('acme', 'main', '127.0.0.1', 25, 'none', 0, 0)`,
    ).run();
    let next = 0;
    const spool = createSqliteSpool(db, seal);
    const queue = createSqliteMessageQueue(
      db,
      createMessageEventWriter(
        db,
        { uuid: () => `00000000-0000-7000-8000-${String((next += 1)).padStart(12, '0')}` },
        seal,
      ),
      createBodySealing(db, seal, createBlindIndex(randomBytes(32)), spool),
      () => new Set(),
    );
    return { db, spool, queue };
  };
  const count = (db: SqliteDatabase, table: string): number =>
    (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  const spooled = (id: string, spoolId: number): NewMessage => ({
    tenantId: 'acme',
    id,
    accountId: 'main',
    priority: 2,
    batchCode: null,
    deferredUntil: null,
    content: { kind: 'spooled', spoolId },
    subject: 's',
    messageId: '<m@acme.example>',
    mailFrom: 'a@acme.example',
    rcptTo: ['b@example.net'],
    sizeBytes: 6,
    suspended: false,
  });

  it('gives back the parts in order to the message that names the spool', () => {
    const { spool, queue } = setup();
    const id = spool.open(1, 'acme');
    spool.append(id, 0, Buffer.from('abc'));
    spool.append(id, 1, new Uint8Array([0x64, 0x65, 0x66]));
    queue.enqueue([spooled('m-1', id)], 1, null);
    const [claimed] = queue.claim({
      tenantId: 'acme',
      accountId: 'main',
      limit: 1,
      now: 2,
      leaseOwner: 'me',
      leaseUntil: 1000,
    });
    expect(claimed).toMatchObject({ body: null, key: null, spoolId: id });
    const stored = queue.spooledContent(id);
    // Sealed part by part under the spool's key: nothing of the body on disk in clear.
    expect(Buffer.concat(stored.parts).includes('abc')).toBe(false);
    expect(openStored(seal, 'acme', stored)?.toString()).toBe('abcdef');
  });

  it('discards a spool no message took, never one a message names', () => {
    const { db, spool, queue } = setup();
    const taken = spool.open(1, 'acme');
    spool.append(taken, 0, Buffer.from('kept'));
    queue.enqueue([spooled('m-1', taken)], 1, null);
    const abandoned = spool.open(1, 'acme');
    spool.append(abandoned, 0, Buffer.from('dropped'));
    spool.discard(taken);
    spool.discard(abandoned);
    expect(db.prepare('SELECT id FROM spools').pluck().all()).toEqual([taken]);
    expect(count(db, 'spool_parts')).toBe(1);
  });

  it('sweeps abandoned spools older than the cut-off only', () => {
    const { db, spool, queue } = setup();
    const old = spool.open(10, 'acme');
    const recent = spool.open(50, 'acme');
    const taken = spool.open(10, 'acme');
    queue.enqueue([spooled('m-1', taken)], 1, null);
    expect(spool.sweep(20)).toBe(1);
    expect(db.prepare('SELECT id FROM spools ORDER BY id').pluck().all()).toEqual([recent, taken]);
    expect(old).toBeLessThan(recent);
  });

  it('goes with its message: deleted with it, and replaced when a resubmission brings new content', () => {
    const { db, spool, queue } = setup();
    const first = spool.open(1, 'acme');
    spool.append(first, 0, Buffer.from('first'));
    queue.enqueue([spooled('m-1', first)], 1, null);
    const second = spool.open(2, 'acme');
    spool.append(second, 0, Buffer.from('second'));
    queue.enqueue([spooled('m-1', second)], 2, null);
    expect(db.prepare('SELECT id FROM spools').pluck().all()).toEqual([second]);
    // The spool's key (the message's own keys are in its row): the first spool's went with it.
    expect(count(db, 'data_keys')).toBe(1);
    db.prepare(`DELETE FROM messages WHERE id = 'm-1'`).run();
    // Its key goes too: nothing of it can be opened from a copy of the pages.
    expect([count(db, 'spools'), count(db, 'spool_parts'), count(db, 'data_keys')]).toEqual([0, 0, 0]);
  });
});
