/**
 * What the fleet's view reads off the wire: a node's reply, and the fleet cursor inside its
 * base64url token. Objects are loose, as the readers these replace kept every field they were given.
 */
import { z } from 'zod';
import type { FleetCursor, NodePosition } from '../../core/fleet/index.js';
import { jsonCodec } from '../../nats/index.js';

/** A node's answer in the fleet's view (view-protocol.ts): the use-case's value, or its AppError as data. */
export type ViewReplyValue = { ok: unknown } | { error: { code: string; message: string; details?: unknown } };
const viewReplySchema: z.ZodType<ViewReplyValue> = z.union([
  z.object({ error: z.looseObject({ code: z.string(), message: z.string(), details: z.unknown().optional() }) }),
  z.object({ ok: z.unknown() }),
]);
export const viewReplyCodec = jsonCodec(viewReplySchema, 'fleet view reply');

const safeInt = z.number().int();
const nodePositionSchema: z.ZodType<NodePosition> = z.union([
  z.literal('done'),
  z.looseObject({
    after: z.looseObject({ pk: safeInt, nextAttemptAt: safeInt.optional() }).nullable(),
    skip: safeInt.min(0),
  }),
]);
/** The fleet cursor (fleet-cursor.ts), inside its base64url token; the reader checks its order against the query's. */
const fleetCursorSchema: z.ZodType<FleetCursor> = z.looseObject({
  order: z.enum(['newest', 'next_attempt']),
  nodes: z.record(z.string(), nodePositionSchema),
});
export const fleetCursorCodec = jsonCodec(fleetCursorSchema, 'fleet cursor');

/** An offloaded attachment's record as the node that keeps it answers (fleet-files.ts): its wrapped key in base64. */
export interface FileWire {
  file_id: string;
  object: string | null;
  key: string | null;
  expires_at: number;
}
export const fileWireSchema: z.ZodType<FileWire | null> = z
  .object({ file_id: z.string(), object: z.string().nullable(), key: z.string().nullable(), expires_at: z.number() })
  .nullable();
