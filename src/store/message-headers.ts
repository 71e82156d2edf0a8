/**
 * SQLite side of a message's headers for reading: the header section of an
 * SMTP submission (from its bytes, or its spool's first part), or the fields
 * of an HTTP submission's payload, opened from their seal. Capped: a header section is for eyes.
 */
import {
  partsOf,
  type BodyObjects,
  type BodySeal,
  type MessageHeaders,
  type MessagePayload,
} from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { BODY_COLUMNS, keyOf, openStored } from './stored-body.js';

const MAX_HEADER_BYTES = 64 * 1024;

/** The bytes up to the first empty line (CRLF CRLF or LF LF), at most MAX_HEADER_BYTES. */
function headerSection(bytes: Buffer): string {
  const head = bytes.subarray(0, MAX_HEADER_BYTES);
  const crlf = head.indexOf('\r\n\r\n');
  const lf = head.indexOf('\n\n');
  const ends = [crlf, lf].filter((index) => index >= 0);
  return head
    .subarray(0, ends.length === 0 ? head.length : Math.min(...ends))
    .toString('utf8')
    .replace(/\r\n/g, '\n');
}

function payloadHeaders(json: string): string {
  const payload = JSON.parse(json) as Partial<MessagePayload>;
  const lines: Array<[string, string | null | undefined]> = [
    ['From', payload.from],
    ['To', payload.to?.join(', ')],
    ['Cc', payload.cc?.length ? payload.cc.join(', ') : null],
    ['Reply-To', payload.replyTo],
    ['Return-Path', payload.returnPath],
    ['Subject', payload.subject],
    ['Message-ID', payload.messageId],
    ...Object.entries(payload.headers ?? {}),
  ];
  return lines
    .filter((line): line is [string, string] => typeof line[1] === 'string' && line[1] !== '')
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
}

export function createSqliteMessageHeaders(
  db: SqliteDatabase,
  seal: BodySeal,
  objects: Pick<BodyObjects, 'get'> | null,
): MessageHeaders {
  const message = db.prepare<
    [string, string],
    {
      source: 'smtp' | 'http';
      body: Buffer | null;
      key: Buffer | null;
      spool_id: number | null;
      body_object: string | null;
    }
  >(`SELECT source, ${BODY_COLUMNS}, spool_id, body_object FROM messages WHERE tenant_id = ? AND id = ?`);
  /** A large body's parts from the body store (its first holds the header section); none when it is not there. */
  const objectParts = async (name: string): Promise<Buffer[]> => {
    // A store that does not answer now shows no header section rather than failing the page.
    const object = objects === null ? null : await objects.get(name).catch(() => null);
    return object === null ? [] : partsOf(object).slice(0, 1);
  };
  const spoolHead = db.prepare<[number], { head: Buffer; key: Buffer | null }>(
    `SELECT p.bytes AS head, ${keyOf('s.key_id')} AS key
     FROM spool_parts p JOIN spools s ON s.id = p.spool_id WHERE p.spool_id = ? ORDER BY p.seq LIMIT 1`,
  );
  return {
    async of(tenantId, id) {
      const row = message.get(tenantId, id);
      if (row === undefined) return null;
      // A spooled body's first part holds its header section (a part is 512 KiB).
      const first = row.spool_id === null ? null : (spoolHead.get(row.spool_id) ?? null);
      const inline = row.body === null ? [] : [row.body];
      const parts = row.body_object === null ? inline : await objectParts(row.body_object);
      const stored = first === null ? { key: row.key, parts } : { key: first.key, parts: [first.head] };
      const body = stored.parts.length === 0 ? null : openStored(seal, tenantId, stored);
      if (row.source === 'http')
        return { source: 'http', text: body === null ? '' : payloadHeaders(body.toString('utf8')) };
      return { source: 'smtp', text: body === null ? '' : headerSection(body.subarray(0, MAX_HEADER_BYTES)) };
    },
  };
}
