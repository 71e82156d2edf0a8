/**
 * The shapes the fleet and the mirror write to NATS and read back, each a codec over its zod
 * schema. A schema accepts what every earlier version wrote: objects are loose (a field a later
 * version adds is kept, not refused) except where the reader builds its value from known fields.
 */
import { z } from 'zod';
import type { ChangeRecord } from '../core/change-record.js';
import type { ClaimRecord } from '../core/claim-ledger.js';
import type { ConfigKey, ConfigValue } from '../core/config-replica.js';
import type { AdoptAnswer, MessageTransfer, StoredTransfer } from '../core/fleet-drain.js';
import type { LatestState } from '../core/latest-state.js';
import { jsonCodec } from './codec.js';

const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const CLAIM_KEY = /^[0-9a-f]{32}$/;
/** Bounds what one record can make the index do: a request holds at most a few thousand messages. */
const MAX_CLAIM_KEYS = 10_000;

const nodeId = z.string().regex(NODE_ID);
const epochMs = z.number().int().min(0);

/**
 * A claim log record. Another version's or another writer's entry is refused rather than guessed
 * at (its keys then stay as they were, which errs on answering a repeat through the holder's own
 * check); only the known fields are kept.
 */
const claimCommon = { node: nodeId, at: epochMs, keys: z.array(z.string().regex(CLAIM_KEY)).min(1).max(MAX_CLAIM_KEYS) };
const claimRecordSchema: z.ZodType<ClaimRecord> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('claim'), ...claimCommon }),
  z.object({ kind: z.literal('take'), from: nodeId, ...claimCommon }),
  z.object({ kind: z.literal('assign'), ...claimCommon }),
]);
export const claimRecordCodec = jsonCodec(claimRecordSchema, 'claim record');

const configKeySchema: z.ZodType<ConfigKey> = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('tenant'), tenantId: z.string() }),
  z.looseObject({ kind: z.literal('account'), tenantId: z.string(), accountId: z.string() }),
  z.looseObject({ kind: z.literal('suppression'), tenantId: z.string(), address: z.string() }),
  z.looseObject({ kind: z.literal('suspensions'), tenantId: z.string() }),
]);

const changeRecordSchema: z.ZodType<ChangeRecord> = z.looseObject({
  eventId: z.string(),
  occurredAt: z.number(),
  actor: z.string(),
  command: z.string(),
  tenantId: z.string(),
  aggregateType: z.enum(['tenant', 'account', 'suspension', 'message', 'suppression']),
  aggregateId: z.string(),
  eventType: z.string(),
  eventVersion: z.number(),
  data: z.record(z.string(), z.unknown()),
  correlationId: z.string().nullable(),
  node: z.string().optional(),
  auditOnly: z.boolean().optional(),
});

/** A configuration object in the fleet's bucket: its value with the key it was written under. */
export type StoredConfig = ConfigValue & { key: ConfigKey };
const storedConfigSchema: z.ZodType<StoredConfig> = z.looseObject({
  key: configKeySchema,
  rows: z.array(z.record(z.string(), z.unknown())).nullable(),
  origin: z.string(),
  changes: z.array(changeRecordSchema),
});
export const storedConfigCodec = jsonCodec(storedConfigSchema, 'configuration value');

/** Asked of the holder of client ids: which of these it has (or is committing). */
export interface HolderRequest {
  items: Array<{ tenant_id: string; id: string }>;
}
const holderRequestSchema: z.ZodType<HolderRequest> = z.object({ items: z.array(z.object({ tenant_id: z.string(), id: z.string() })) });
export const holderRequestCodec = jsonCodec(holderRequestSchema, 'holder request');
export const holderAnswerCodec = jsonCodec(z.object({ has: z.array(z.boolean()) }), 'holder answer');

/** A waiting message as the store hands it over: what a drain carries and the replicated spool holds. */
const storedTransferShape = {
  origin_pk: z.number().int(),
  tenant_id: z.string(),
  id: z.string(),
  account_id: z.string(),
  priority: z.number().int(),
  batch_code: z.string().nullable(),
  source: z.enum(['http', 'smtp']),
  payload: z.string().nullable(),
  raw_base64: z.string().nullable(),
  mail_from: z.string(),
  rcpt_to: z.string(),
  subject: z.string().nullable(),
  message_id_header: z.string().nullable(),
  size_bytes: z.number().int(),
  state: z.enum(['queued', 'deferred']),
  attempts: z.number().int(),
  next_attempt_at: z.number(),
  created_at: z.number(),
  deferred_at: z.number().nullable(),
  deferred_reason: z.string().nullable(),
};
export const storedTransferSchema: z.ZodType<StoredTransfer> = z.object(storedTransferShape);
const messageTransferSchema: z.ZodType<MessageTransfer> = z.object({ origin_node: z.string(), ...storedTransferShape });
export const messageTransferCodec = jsonCodec(messageTransferSchema, 'message transfer');

const adoptAnswerSchema: z.ZodType<AdoptAnswer> = z.union([
  z.object({ ok: z.literal(true), pk: z.number().int(), already: z.boolean() }),
  z.object({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export const adoptAnswerCodec = jsonCodec(adoptAnswerSchema, 'answer to an adopt request');

/** Field order as core/latest-state.ts builds it: whether a merge advances is judged on the JSON text. */
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
  seq?: number;
  error?: { code?: number; err_code?: number; description?: string };
}
const pubAckSchema: z.ZodType<PubAck> = z.looseObject({
  seq: z.number().optional(),
  error: z.looseObject({ code: z.number().optional(), err_code: z.number().optional(), description: z.string().optional() }).optional(),
});
export const pubAckCodec = jsonCodec(pubAckSchema, 'JetStream acknowledgement');
