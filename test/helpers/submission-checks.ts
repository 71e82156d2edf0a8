/**
 * Whether an accepted /add-messages item was kept whole: its stored row and
 * payload (opened from its seal) against what was sent, and its relayed copy's header section against
 * the fields and headers sent (nothing more, nothing split, nothing injected).
 */
import { domainToUnicode } from 'node:url';
import type Database from 'better-sqlite3';
import { expect } from 'vitest';
import { parseMailbox } from '../../src/core/address.js';
import type { SinkMessage } from '../peers/smtp-sink.js';
import { addressesOf, decodeWords, fieldValue, headerFields, parseRelayed } from './relayed-mail.js';
import { storedBody, storedPersonal } from './stored-body.js';

export interface StoredRow {
  id: string;
  batch_code: string | null;
  state: string;
  next_attempt_at: number;
  error: string | null;
}

export function storedRow(db: Database.Database, id: string, tenantId = 'acme'): StoredRow | undefined {
  return db
    .prepare<[string, string], StoredRow>(
      'SELECT id, batch_code, state, next_attempt_at, error FROM messages WHERE tenant_id = ? AND id = ?',
    )
    .get(tenantId, id);
}

const list = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The stored message is the one sent: every field as given, verbatim (SQL metacharacters, quotes, non-ASCII). */
export function expectStoredAsSent(db: Database.Database, dataDir: string, item: Record<string, unknown>): void {
  const row = storedRow(db, item.id as string);
  expect(row, `accepted ${String(item.id)} is stored`).toBeDefined();
  // The subject is kept sealed with the envelope (issue 45): opened as the daemon opens it.
  const subject = storedPersonal(db, { dataDir }).find((fields) => fields.id === item.id)?.subject;
  const body = storedBody(db, { dataDir }, `tenant_id = 'acme' AND id = ?`, item.id);
  const payload = JSON.parse(body?.toString('utf8') ?? 'null') as Record<string, unknown>;
  const attachments = list(item.attachments) as Array<Record<string, unknown>>;
  expect({
    from: payload.from,
    to: payload.to,
    cc: payload.cc,
    bcc: payload.bcc,
    replyTo: payload.replyTo,
    returnPath: payload.returnPath,
    subject: payload.subject,
    body: payload.body,
    html: payload.html,
    headers: payload.headers,
    attachments: (payload.attachments as Array<Record<string, unknown>>).map((a) => [
      a.filename,
      a.storagePath,
      a.mimeType,
    ]),
    subjectColumn: subject,
    batchCode: row?.batch_code,
  }).toEqual({
    from: item.from,
    to: list(item.to),
    cc: list(item.cc),
    bcc: list(item.bcc),
    replyTo: item.reply_to ?? null,
    returnPath: item.return_path ?? null,
    subject: item.subject ?? '',
    body: item.body ?? null,
    html: item.html ?? null,
    headers: item.headers ?? {},
    attachments: attachments.map((a) => [a.filename, a.storage_path, a.mime_type ?? null]),
    subjectColumn: item.subject ?? '',
    batchCode: item.batch_code ?? null,
  });
}

/** The relayed copy whose X-Genro-Mail-ID is `id`. */
export function relayedById(messages: readonly SinkMessage[], id: string): Buffer | undefined {
  return messages.find((message) => fieldValue(headerFields(message.raw), 'X-Genro-Mail-ID') === id)?.raw;
}

/**
 * Headers the builder writes itself (src/delivery/message-builder.ts); a client's copy of one of them is dropped.
 * Content-Disposition tops a message whose only part is one attachment (nodemailer makes it the root).
 */
const BUILDER_HEADERS = [
  'from',
  'to',
  'cc',
  'reply-to',
  'subject',
  'message-id',
  'date',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'x-genro-mail-id',
];
const OWNED = new Set([...BUILDER_HEADERS.filter((name) => name !== 'date' && name !== 'content-disposition'), 'bcc']);

/** An address as mailparser gives it back: lower case, quotes of a quoted local part dropped, the domain in Unicode. */
function comparable(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at).replace(/^"(.*)"$/, '$1')}@${domainToUnicode(address.slice(at + 1))}`.toLowerCase();
}
const bare = (text: unknown): string => comparable(parseMailbox(String(text))?.address ?? String(text));

/** The relayed header section holds the fields sent and the builder's own, each decoding to what was sent. */
export async function expectRelayedAsSent(raw: Buffer, item: Record<string, unknown>): Promise<void> {
  const fields = headerFields(raw);
  const sentHeaders = (item.headers ?? {}) as Record<string, string>;
  const custom = Object.keys(sentHeaders).filter((name) => !OWNED.has(name.toLowerCase()));
  const allowed = new Set([...BUILDER_HEADERS, ...custom.map((name) => name.toLowerCase())]);
  const names = fields.map((field) => field.name.toLowerCase());
  expect(
    names.filter((name) => !allowed.has(name)),
    `no header beyond those sent in ${String(item.id)}: ${raw.toString('latin1').slice(0, 1500)}`,
  ).toEqual([]);
  for (const name of new Set(names))
    expect(
      names.filter((n) => n === name),
      `${name} appears once`,
    ).toHaveLength(1);

  const parsed = await parseRelayed(raw);
  const addresses = (value: unknown) => list(value).map(bare);
  expect(
    {
      subject: (parsed.subject ?? '').trim(),
      from: addressesOf(parsed.from).map(comparable),
      to: addressesOf(parsed.to).map(comparable),
      cc: addressesOf(parsed.cc).map(comparable),
      replyTo: addressesOf(parsed.replyTo).map(comparable),
      custom: Object.fromEntries(custom.map((name) => [name, decodeWords(fieldValue(fields, name) ?? '').trim()])),
    },
    `relayed ${String(item.id)}`,
  ).toEqual({
    // Whitespace around an unstructured value does not survive a header line (RFC 5322 §2.2.3 folding, parsers trim).
    subject: String(item.subject ?? '').trim(),
    from: addresses(item.from),
    to: addresses(item.to),
    cc: addresses(item.cc),
    replyTo: addresses(item.reply_to),
    custom: Object.fromEntries(custom.map((name) => [name, String(sentHeaders[name]).trim()])),
  });
}
