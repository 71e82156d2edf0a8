/**
 * What the fleet's claims write to NATS and read back: the claim log's records, and a holder's
 * request and answer about client ids. A claim record is refused rather than guessed at when it is
 * not one of ours; the reader builds its value from the known fields only.
 */
import { z } from 'zod';
import type { ClaimRecord } from '../../core/fleet/index.js';
import { jsonCodec } from '../../nats/index.js';

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
const claimCommon = {
  node: nodeId,
  at: epochMs,
  keys: z.array(z.string().regex(CLAIM_KEY)).min(1).max(MAX_CLAIM_KEYS),
};
const claimRecordSchema: z.ZodType<ClaimRecord> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('claim'), ...claimCommon }),
  z.object({ kind: z.literal('take'), from: nodeId, ...claimCommon }),
  z.object({ kind: z.literal('assign'), ...claimCommon }),
]);
export const claimRecordCodec = jsonCodec(claimRecordSchema, 'claim record');

/** Asked of the holder of client ids: which of these it has (or is committing). */
export interface HolderRequest {
  items: Array<{ tenant_id: string; id: string }>;
}
const holderRequestSchema: z.ZodType<HolderRequest> = z.object({
  items: z.array(z.object({ tenant_id: z.string(), id: z.string() })),
});
export const holderRequestCodec = jsonCodec(holderRequestSchema, 'holder request');
export const holderAnswerCodec = jsonCodec(z.object({ has: z.array(z.boolean()) }), 'holder answer');
