/**
 * What the event mirror reads back from NATS: a message's latest state in the KV bucket, and
 * JetStream's answer to a publish. Objects are loose: a field a later version (or server) adds is kept.
 */
import { z } from 'zod';
import type { LatestState } from '../core/events/index.js';
import { jsonCodec } from '../nats/index.js';

/** Field order as core/events/latest-state.ts builds it: whether a merge advances is judged on the JSON text. */
const latestStateSchema: z.ZodType<LatestState> = z.looseObject({
  tenant_id: z.string(),
  message_id: z.string().nullable(),
  message_pk: z.number(),
  handoff_state: z.string(),
  provider_state: z.string(),
  rank: z.number(),
  provider_rank: z.number(),
  version: z.number(),
  at: z.string(),
  handoff_version: z.number(),
  provider_version: z.number(),
  reported_at: z.string().nullable(),
});
export const latestStateCodec = jsonCodec(latestStateSchema, 'latest state');

/** JetStream's answer to a publish: the stream sequence, or the API error that refused it. */
export interface PubAck {
  seq?: number | undefined;
  error?: { code?: number | undefined; err_code?: number | undefined; description?: string | undefined } | undefined;
}
const pubAckSchema: z.ZodType<PubAck> = z.looseObject({
  seq: z.number().optional(),
  error: z
    .looseObject({ code: z.number().optional(), err_code: z.number().optional(), description: z.string().optional() })
    .optional(),
});
export const pubAckCodec = jsonCodec(pubAckSchema, 'JetStream acknowledgement');
