/**
 * What the fleet's link writes about its nodes: each node's heartbeat in the membership bucket.
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
