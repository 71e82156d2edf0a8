/**
 * What the fleet's link writes about its nodes: each node's heartbeat in the membership bucket, the
 * data directory's identity beside it, and the failure a node answers another's request with.
 * Objects are loose: a field a later version adds is kept.
 */
import { z } from 'zod';
import type { NodeBeat } from '../../core/fleet/index.js';
import { jsonCodec } from '../../nats/index.js';

/** A node's heartbeat in the membership bucket (node-registry.ts). */
const nodeBeatSchema: z.ZodType<NodeBeat> = z.looseObject({
  node_id: z.string(),
  instance: z.string(),
  state: z.enum(['active', 'stopped', 'draining', 'drained']),
  started_at: z.number(),
  version: z.string(),
});
export const nodeBeatCodec = jsonCodec(nodeBeatSchema, 'node heartbeat');

/** Which node a data directory is: `fleet-node.json` (node-identity.ts), the same JSON, kept on disk. */
export interface NodeIdentity {
  node_id: string;
  instance: string;
}
const nodeIdentitySchema: z.ZodType<NodeIdentity> = z.looseObject({ node_id: z.string(), instance: z.string() });
export const nodeIdentityCodec = jsonCodec(nodeIdentitySchema, 'fleet node identity');

/** A request another node could not be answered (fleet-responder.ts): the error's stable code and its message. */
export interface RequestFailure {
  ok: false;
  code: string;
  message: string;
}
const requestFailureSchema: z.ZodType<RequestFailure> = z.object({
  ok: z.literal(false),
  code: z.string(),
  message: z.string(),
});
export const requestFailureCodec = jsonCodec(requestFailureSchema, 'fleet request failure');
