/**
 * The fleet's claims on client ids ("idempotency fleet-wide") over
 * the claim log: one key per tenant and client id, a digest of both, claimed
 * for a whole request in one record. Who holds a key is what the log's order
 * says (core/fleet/claim-ledger.ts), read from this node's index once the record
 * is applied. Claims age out with the local retention of messages.
 */
import { createHash } from 'node:crypto';
import type { ClaimIndex } from '../../core/fleet/index.js';
import type { ClaimLog } from './claim-log.js';

/** 128 bits of SHA-256 over tenant and client id: short enough to carry thousands in a record, far from any collision. */
export const claimKey = (tenantId: string, id: string): string =>
  createHash('sha256').update(tenantId).update('\u0000').update(id).digest('hex').slice(0, 32);

export function createClientIdClaims(log: ClaimLog, index: ClaimIndex, nodeId: string) {
  return {
    /** Claims the keys for this node; answers each key's holder (this node's id where it is its own). Throws when the cluster does not answer. */
    async claim(keys: readonly string[], at: number): Promise<Map<string, string>> {
      await log.append({ kind: 'claim', node: nodeId, at, keys: [...keys] });
      return index.holders(keys);
    },
    /** Takes keys over from a holder that answered it has no such message; answers those now this node's. */
    async takeOver(from: string, keys: readonly string[], at: number): Promise<Set<string>> {
      await log.append({ kind: 'take', node: nodeId, from, at, keys: [...keys] });
      const holders = index.holders(keys);
      return new Set(keys.filter((key) => holders.get(key) === nodeId));
    },
    /** Names this node as the holder (a message adopted from a draining node now lives here). */
    async assign(tenantId: string, id: string, at: number): Promise<void> {
      await log.append({ kind: 'assign', node: nodeId, at, keys: [claimKey(tenantId, id)] });
    },
  };
}

export type ClientIdClaims = ReturnType<typeof createClientIdClaims>;
