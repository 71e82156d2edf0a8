/**
 * What the fleet writes to NATS about waiting messages and reads back: a drain's transfers and
 * their answers, the replicated spool's records and large entries, the lease on adopting a spool
 * and a spool's registration. A schema accepts what every earlier version wrote: a spool record
 * outlives the version that wrote it, and one refused here is mail a survivor cannot adopt.
 */
import { z } from 'zod';
import type {
  AdoptionLease,
  SpoolRegistration,
  AdoptAnswer,
  MessageTransfer,
  StoredTransfer,
} from '../../core/fleet/index.js';
import { jsonCodec } from '../../nats/index.js';

const safeInt = z.number().int();

/**
 * A waiting message as the store hands it over: what a drain carries and the replicated spool
 * holds. Every version wrote every field (nulls included), so each is required; only the known
 * fields are kept, as the adopting store inserts those alone.
 */
const storedTransferShape = {
  origin_pk: safeInt,
  tenant_id: z.string(),
  id: z.string(),
  account_id: z.string(),
  priority: safeInt,
  batch_code: z.string().nullable(),
  source: z.enum(['http', 'smtp']),
  payload: z.string().nullable(),
  raw_base64: z.string().nullable(),
  // Written since bodies are sealed (issue 45); absent from earlier records. Its object in the shared body store
  // instead of its parts since a fleet may share one (issue 46).
  sealed: z
    .union([
      z.object({ key: z.string(), parts: z.array(z.string()).min(1) }),
      // A name the daemon gave it: hex, after the writing node's id and a slash in a fleet.
      z.object({ key: z.string(), object: z.string().regex(/^(?:[A-Za-z0-9_-]{1,64}\/)?[0-9a-f]{16,128}$/) }),
    ])
    .nullable()
    .optional(),
  // Written since personal fields are sealed (migration 19); absent from earlier records.
  personal: z.object({ key: z.string(), sealed: z.string(), terms: z.string() }).nullable().optional(),
  mail_from: z.string(),
  rcpt_to: z.string(),
  subject: z.string().nullable(),
  message_id_header: z.string().nullable(),
  size_bytes: safeInt,
  state: z.enum(['queued', 'deferred']),
  attempts: safeInt,
  next_attempt_at: z.number(),
  created_at: z.number(),
  deferred_at: z.number().nullable(),
  deferred_reason: z.string().nullable(),
  // Written since per-destination limits (migration 26); absent from earlier records.
  rcpt_domains: z.string().nullable().optional(),
};
const storedTransferSchema: z.ZodType<StoredTransfer> = z.object(storedTransferShape);
const messageTransferSchema: z.ZodType<MessageTransfer> = z.object({ origin_node: z.string(), ...storedTransferShape });
export const messageTransferCodec = jsonCodec(messageTransferSchema, 'message transfer');

const adoptAnswerSchema: z.ZodType<AdoptAnswer> = z.union([
  z.object({ ok: z.literal(true), pk: safeInt, already: z.boolean() }),
  z.object({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export const adoptAnswerCodec = jsonCodec(adoptAnswerSchema, 'answer to an adopt request');

/**
 * A record of the replicated spool's stream, inflated: a group of entries, ends, a large entry's
 * object, or (written by an earlier version) one entry with its raw bytes perhaps in an object.
 * The union is tried in that order, as the reader tells them apart.
 */
export type SpoolWireRecord =
  | { entries: StoredTransfer[] }
  | { ended: number[] }
  | { object: string }
  | (StoredTransfer & { raw_object?: string | undefined });
const spoolWireRecordSchema: z.ZodType<SpoolWireRecord> = z.union([
  z.object({ entries: z.array(storedTransferSchema) }),
  z.object({ ended: z.array(safeInt) }),
  z.object({ object: z.string() }),
  z.intersection(storedTransferSchema, z.object({ raw_object: z.string().optional() })),
]);
export const spoolWireRecordCodec = jsonCodec(spoolWireRecordSchema, 'spool record');
/** A large entry's object: one stored transfer. */
export const spoolEntryCodec = jsonCodec(storedTransferSchema, 'spool entry');

/** The lease on adopting a spool, in the fleet's bucket. */
const adoptionLeaseSchema: z.ZodType<AdoptionLease> = z.looseObject({
  node: z.string(),
  instance: z.string(),
  by: z.string(),
  state: z.enum(['adopting', 'done']),
  at: z.number(),
  adopted: z.number(),
});
export const adoptionLeaseCodec = jsonCodec(adoptionLeaseSchema, 'adoption lease');

/** A spool registered in the fleet's bucket, with when it was. */
const spoolRegistrationSchema: z.ZodType<SpoolRegistration & { at: number }> = z.looseObject({
  node: z.string(),
  instance: z.string(),
  at: z.number(),
});
export const spoolRegistrationCodec = jsonCodec(spoolRegistrationSchema, 'spool registration');
