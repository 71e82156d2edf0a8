/**
 * A message event's personal fields (whom it names: a bounce's or a provider's
 * recipient, the recipients a relay refused, a PEC receipt's addresses) are kept
 * in its outbox row only sealed, as the payload's `sealed`, under the key of the
 * message's envelope (personal-fields.ts) and bound to the event's id: an erasure
 * that destroys that key leaves every copy unreadable, a backup's included. The rest
 * of the payload (ids, states, codes, texts with their addresses redacted) stays
 * readable, and the mirror publishes none of the personal fields (core/contracts/event.ts).
 */
import type { BodySeal } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';

/** The payload fields that name a person: sealed as they are written. */
const NAMING_FIELDS = ['recipient', 'recipients', 'address', 'refused', 'refused_recipients', 'from', 'to', 'subject'];

/** Where a payload keeps its sealed fields (base64). */
export const SEALED_FIELD = 'sealed';

const eventContext = (tenantId: string, eventId: string): string => `${tenantId}\0event\0${eventId}`;

/** Message `pk`'s envelope key, wrapped (null: none, from before envelopes were sealed, or erased), and whether it was erased. */
function envelopeKeys(db: SqliteDatabase) {
  return db.prepare<[number], { tenantId: string; wrapped: Buffer | null; erased: number }>(
    `SELECT tenant_id AS tenantId, personal_key AS wrapped, erased_at IS NOT NULL AS erased FROM messages WHERE pk = ?`,
  );
}

/** The wrapped key of an outbox row's message envelope, for a query on `outbox` (null: none, or the message is gone). */
export const EVENT_KEY_COLUMN = `CASE WHEN instr(payload, '"${SEALED_FIELD}"') > 0 THEN
  (SELECT personal_key FROM messages WHERE messages.pk = outbox.message_pk) END AS personal_key`;

/**
 * Seals the naming fields of an event of message `pk` (inside the writer's transaction). A message
 * erased has no key: its event keeps none of them. One from before envelopes were sealed keeps
 * them in clear, as its envelope is, until an erasure scrubs them.
 */
export function eventFieldSealer(
  db: SqliteDatabase,
  seal: BodySeal,
): (pk: number, tenantId: string, eventId: string, data: Record<string, unknown>) => Record<string, unknown> {
  const keyOf = envelopeKeys(db);
  return (pk, tenantId, eventId, data) => {
    const naming = NAMING_FIELDS.filter((field) => data[field] !== undefined);
    if (naming.length === 0) return data;
    const found = keyOf.get(pk);
    if (found?.wrapped === null || found?.wrapped === undefined)
      return found?.erased === 1 ? without(data, naming) : data;
    const sealed = seal.sealField(
      seal.reopen(found.wrapped),
      eventContext(tenantId, eventId),
      Buffer.from(JSON.stringify(Object.fromEntries(naming.map((field) => [field, data[field]]))), 'utf8'),
    );
    return { ...without(data, naming), [SEALED_FIELD]: sealed.toString('base64') };
  };
}

const without = (data: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(data).filter(([field]) => !fields.includes(field)));

/** An event's payload with its sealed fields opened in place (gone, when their key was destroyed). */
export function eventFieldOpener(
  seal: BodySeal,
): (row: {
  tenantId: string;
  eventId: string;
  data: Record<string, unknown> | null;
  key: Buffer | null;
}) => Record<string, unknown> | null {
  return ({ tenantId, eventId, data, key }) => {
    const sealed = data?.[SEALED_FIELD];
    if (data === null || typeof sealed !== 'string') return data;
    const rest = without(data, [SEALED_FIELD]);
    if (key === null || key.length === 0) return rest;
    const opened = seal.openField(key, eventContext(tenantId, eventId), Buffer.from(sealed, 'base64'));
    return { ...rest, ...(JSON.parse(opened.toString('utf8')) as Record<string, unknown>) };
  };
}

const refusedContext = (tenantId: string, pk: number): string => `${tenantId}\0refused\0${pk}`;

/**
 * A message's refused recipients (messages.refused_recipients, JSON) as stored: sealed under its
 * envelope key like an event's naming fields, `{"sealed": …}`; in clear for a message from before
 * envelopes were sealed.
 */
export function refusedSealer(db: SqliteDatabase, seal: BodySeal): (pk: number, refused: string) => string {
  const keyOf = envelopeKeys(db);
  return (pk, refused) => {
    const found = keyOf.get(pk);
    if (found?.wrapped === null || found?.wrapped === undefined) return refused;
    const sealed = seal.sealField(seal.reopen(found.wrapped), refusedContext(found.tenantId, pk), Buffer.from(refused));
    return JSON.stringify({ [SEALED_FIELD]: sealed.toString('base64') });
  };
}

/** Opens what refusedSealer stored (null when its key was destroyed). */
export function openRefused(
  seal: BodySeal,
  row: { tenant_id: string; pk: number; refused_recipients: string | null; personal_key: Buffer | null },
): unknown[] | null {
  if (row.refused_recipients === null) return null;
  const stored = JSON.parse(row.refused_recipients) as unknown;
  if (Array.isArray(stored)) return stored;
  const sealed = (stored as Record<string, unknown>)[SEALED_FIELD];
  if (typeof sealed !== 'string' || row.personal_key === null || row.personal_key.length === 0) return null;
  const opened = seal.openField(row.personal_key, refusedContext(row.tenant_id, row.pk), Buffer.from(sealed, 'base64'));
  return JSON.parse(opened.toString('utf8')) as unknown[];
}
