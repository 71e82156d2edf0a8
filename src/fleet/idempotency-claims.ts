/**
 * The fleet's claims on client ids (issue 24, "idempotency fleet-wide"): one
 * key per tenant and client id in a KV bucket of its own, `idem.<sha256>`,
 * holding the node that accepted it. `kv.create` is the claim: it fails when
 * the key exists. The bucket's TTL ages the claims out with the local
 * retention of messages, so an id is remembered fleet-wide as long as locally.
 */
import { createHash } from 'node:crypto';
import type { KV, NatsConnection } from 'nats';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface ClaimSettings {
  bucket: string;
  replicas: number;
  ttlMs: number;
}

/** Who holds a client id: `self` (claimed now, or before by this node), or another node. */
export type ClaimOutcome = { holder: 'self' } | { holder: 'other'; node: string; key: string; revision: number };

export const claimKey = (tenantId: string, id: string): string => `idem.${createHash('sha256').update(tenantId).update('\u0000').update(id).digest('hex')}`;

interface ClaimValue {
  node: string;
  tenant_id: string;
  at: number;
}

export function createClaimBucket(settings: ClaimSettings, nodeId: string) {
  let opening: Promise<KV> | null = null;
  const bucket = (nc: NatsConnection): Promise<KV> => {
    opening ??= nc
      .jetstream()
      .views.kv(settings.bucket, { history: 1, replicas: settings.replicas, ttl: settings.ttlMs })
      .catch((error: unknown) => {
        opening = null;
        throw error;
      });
    return opening;
  };
  const value = (tenantId: string, node: string, at: number): Uint8Array =>
    encoder.encode(JSON.stringify({ node, tenant_id: tenantId, at } satisfies ClaimValue));

  return {
    /** Claims the id for this node; answers who holds it. Throws when the cluster does not answer. */
    async claim(nc: NatsConnection, tenantId: string, id: string, at: number): Promise<ClaimOutcome> {
      const kv = await bucket(nc);
      const key = claimKey(tenantId, id);
      try {
        await kv.create(key, value(tenantId, nodeId, at));
        return { holder: 'self' };
      } catch (error) {
        const entry = await kv.get(key);
        // Not there after all: the create failed for another reason (the cluster), reported as such.
        if (entry === null || entry.operation !== 'PUT') throw error;
        const held = JSON.parse(decoder.decode(entry.value)) as ClaimValue;
        return held.node === nodeId ? { holder: 'self' } : { holder: 'other', node: held.node, key, revision: entry.revision };
      }
    },
    /** Takes over a claim whose holder answered that it has no such message (compare-and-set on the revision). */
    async takeOver(nc: NatsConnection, tenantId: string, key: string, revision: number, at: number): Promise<boolean> {
      const kv = await bucket(nc);
      return kv.update(key, value(tenantId, nodeId, at), revision).then(
        () => true,
        () => false,
      );
    },
    /** Names this node as the holder (a message adopted from a draining node now lives here). */
    async assign(nc: NatsConnection, tenantId: string, id: string, at: number): Promise<void> {
      const kv = await bucket(nc);
      await kv.put(claimKey(tenantId, id), value(tenantId, nodeId, at));
    },
  };
}

export type ClaimBucket = ReturnType<typeof createClaimBucket>;
