/**
 * A message's envelope and subject as they are kept (issue 45): sealed under a data key
 * of their own, bound to the tenant, beside their search terms (blind-search.ts). Sealed
 * by the store, or already in the parser thread that read the request (the main thread
 * then only stores what it is given).
 */
import type { BlindIndex } from '../blind-index.js';
import { searchTerms, type PersonalFields } from './blind-search.js';
import type { BodySeal, DataKey } from './sealed-body.js';

/** An envelope sealed where its message was parsed, for the store to keep as it is. */
export interface SealedEnvelope {
  /** The tenant it is bound to: the store seals it again if that is not the message's. */
  tenantId: string;
  /** Its data key, wrapped. */
  key: Uint8Array;
  sealed: Uint8Array;
  terms: string;
}

/** What an envelope is sealed as (associated data): moved to another tenant, it does not open. */
const envelopeContext = (tenantId: string): string => `${tenantId}\0envelope`;

const encoded = (fields: PersonalFields): Buffer =>
  Buffer.from(JSON.stringify([fields.mailFrom, fields.rcptTo, fields.subject]), 'utf8');

/** Seals `fields` under `key` (a new one, or the one of the message it replaces). */
export const sealEnvelope = (seal: BodySeal, key: DataKey, tenantId: string, fields: PersonalFields): Buffer =>
  seal.sealField(key, envelopeContext(tenantId), encoded(fields));

/** Seals `fields` under a new data key, with their search terms. */
export function newSealedEnvelope(
  seal: BodySeal,
  index: BlindIndex,
  tenantId: string,
  fields: PersonalFields,
): SealedEnvelope {
  const key = seal.newKey();
  return {
    tenantId,
    key: key.wrapped,
    sealed: sealEnvelope(seal, key, tenantId, fields),
    terms: searchTerms(index, fields),
  };
}

/** The fields a sealed envelope holds; throws when it was altered, moved or its key is unknown. */
export function openEnvelope(
  seal: BodySeal,
  wrapped: Uint8Array,
  tenantId: string,
  sealed: Uint8Array,
): PersonalFields {
  const [mailFrom, rcptTo, subject] = JSON.parse(
    seal.openField(wrapped, envelopeContext(tenantId), sealed).toString('utf8'),
  ) as [string, string[], string | null];
  return { mailFrom, rcptTo, subject };
}
