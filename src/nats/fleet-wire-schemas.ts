/**
 * The codecs of the rest of what the fleet writes to NATS (and of its identity file, JSON too):
 * the view's replies and cursor, the replicated spool's records and leases, the membership's
 * heartbeats. Objects are loose, as the readers these replace kept every field they were given.
 */
import { z } from 'zod';
import type { AdoptionLease, SpoolRegistration } from '../core/cluster-spool.js';
import type { NodeBeat } from '../core/fleet.js';
import type { StoredTransfer } from '../core/fleet-drain.js';
import type { FleetCursor, NodePosition } from '../core/fleet-view.js';
import { jsonCodec } from './codec.js';
import { storedTransferSchema } from './wire-schemas.js';

/** A node's answer in the fleet's view (fleet/view-protocol.ts): the use-case's value, or its AppError as data. */
export type ViewReplyValue = { ok: unknown } | { error: { code: string; message: string; details?: unknown } };
const viewReplySchema: z.ZodType<ViewReplyValue> = z.union([
  z.object({ error: z.looseObject({ code: z.string(), message: z.string(), details: z.unknown().optional() }) }),
  z.object({ ok: z.unknown() }),
]);
export const viewReplyCodec = jsonCodec(viewReplySchema, 'fleet view reply');

const safeInt = z.number().int();
const nodePositionSchema: z.ZodType<NodePosition> = z.union([
  z.literal('done'),
  z.looseObject({ after: z.looseObject({ pk: safeInt, nextAttemptAt: safeInt.optional() }).nullable(), skip: safeInt.min(0) }),
]);
/** The fleet cursor (fleet/fleet-cursor.ts), inside its base64url token; the reader checks its order against the query's. */
const fleetCursorSchema: z.ZodType<FleetCursor> = z.looseObject({
  order: z.enum(['newest', 'next_attempt']),
  nodes: z.record(z.string(), nodePositionSchema),
});
export const fleetCursorCodec = jsonCodec(fleetCursorSchema, 'fleet cursor');

/**
 * A record of the replicated spool's stream (fleet/spool-records.ts WireRecord), inflated: a group
 * of entries, ends, a large entry's object, or (written by an earlier version) one entry with its
 * raw bytes perhaps in an object. The union is tried in that order, as the reader tells them apart.
 */
export type SpoolWireRecord = { entries: StoredTransfer[] } | { ended: number[] } | { object: string } | (StoredTransfer & { raw_object?: string });
const spoolWireRecordSchema: z.ZodType<SpoolWireRecord> = z.union([
  z.object({ entries: z.array(storedTransferSchema) }),
  z.object({ ended: z.array(safeInt) }),
  z.object({ object: z.string() }),
  z.intersection(storedTransferSchema, z.object({ raw_object: z.string().optional() })),
]);
export const spoolWireRecordCodec = jsonCodec(spoolWireRecordSchema, 'spool record');
/** A large entry's object (fleet/spool-stream.ts): one stored transfer. */
export const spoolEntryCodec = jsonCodec(storedTransferSchema, 'spool entry');

/** The lease on adopting a spool (fleet/spool-return.ts, spool-adoption.ts). */
const adoptionLeaseSchema: z.ZodType<AdoptionLease> = z.looseObject({
  node: z.string(),
  instance: z.string(),
  by: z.string(),
  state: z.enum(['adopting', 'done']),
  at: z.number(),
  adopted: z.number(),
});
export const adoptionLeaseCodec = jsonCodec(adoptionLeaseSchema, 'adoption lease');

/** A spool registered in the fleet's bucket (fleet/spool-adoption.ts), with when it was. */
const spoolRegistrationSchema: z.ZodType<SpoolRegistration & { at: number }> = z.looseObject({ node: z.string(), instance: z.string(), at: z.number() });
export const spoolRegistrationCodec = jsonCodec(spoolRegistrationSchema, 'spool registration');

/** A node's heartbeat in the membership bucket (fleet/node-registry.ts). */
const nodeBeatSchema: z.ZodType<NodeBeat> = z.looseObject({
  node_id: z.string(),
  instance: z.string(),
  state: z.enum(['active', 'stopped', 'draining', 'drained']),
  started_at: z.number(),
  version: z.string(),
});
export const nodeBeatCodec = jsonCodec(nodeBeatSchema, 'node heartbeat');

/** The data directory's `fleet-node.json` (fleet/node-identity.ts): the same JSON, read from a file. */
export const nodeIdentityCodec = jsonCodec(z.looseObject({ node_id: z.string(), instance: z.string() }), 'fleet node identity');
