/**
 * Shared configuration in fleet mode: what is replicated, how a
 * change names its object, and the ports the replication runs over. Pure:
 * the bucket (fleet/) and the rows (store/) are adapters behind the ports.
 */
import type { ChangeRecord } from '../events/change-record.js';

/**
 * One replicated configuration object: a tenant (with its API key digest), an account, a
 * suppression (named by its address's blind-index digest: the bucket's keys hold no address),
 * a tenant's suspensions.
 */
export type ConfigKey =
  | { kind: 'tenant'; tenantId: string }
  | { kind: 'account'; tenantId: string; accountId: string }
  | { kind: 'suppression'; tenantId: string; digest: string }
  | { kind: 'suspensions'; tenantId: string };

/**
 * What the bucket holds under a key: the object's rows as stored (secrets and a suppressed
 * address still sealed with the daemon key every node shares; the API key as its digest only),
 * null once deleted, the node that took the change and the change's audit records.
 */
export interface ConfigValue {
  rows: Record<string, unknown>[] | null;
  origin: string;
  changes: ChangeRecord[];
}

/** A value at its bucket revision. */
export interface ConfigEntry {
  key: ConfigKey;
  revision: number;
  value: ConfigValue;
}

/** The node's own copy of the configuration (its SQLite), by key. */
export interface ConfigRows {
  /** Runs `fn` in a transaction that is always rolled back, and answers what `fn` answered. */
  dryRun<T>(fn: () => T): T;
  /** The object's rows as stored now; null when it does not exist. */
  read(key: ConfigKey): Record<string, unknown>[] | null;
  /** The bucket revision this node last applied under the key; null when none. */
  appliedRevision(key: ConfigKey): number | null;
  /** The highest revision applied under any key (where a watch resumes); 0 when none. */
  lastRevision(): number;
  /**
   * Writes the entry's rows and audit records (naming its origin node) with its
   * revision, in one transaction; false, changing nothing, when this revision or
   * a later one was applied already.
   */
  apply(entry: ConfigEntry): boolean;
}

/** The replicated bucket. Failures are AppErrors: CONFIG_CONFLICT (the revision moved), FLEET_UNAVAILABLE. */
export interface ConfigBucket {
  /** Creates the key when `expected` is null, else compare-and-set on `expected`; answers the new revision. */
  write(key: ConfigKey, value: ConfigValue, expected: number | null): Promise<number>;
}

/**
 * A service whose configuration writes may wait for the fleet: in fleet mode they
 * answer once the bucket has the change, so callers await them (a plain value in
 * single-node mode, where nothing waits).
 */
export type ConfigWrites<S, K extends keyof S> = Omit<S, K> & {
  [P in K]: S[P] extends (...args: infer A) => infer R ? (...args: A) => R | Promise<Awaited<R>> : never;
};

const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const encoder = new TextEncoder();

/** A key segment as KV keys allow (`[-/_=.a-zA-Z0-9]`): identifiers as they are, anything else as `=` and its UTF-8 in hex. */
function segment(text: string): string {
  if (SAFE_SEGMENT.test(text)) return text;
  return `=${[...encoder.encode(text)].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/** The bucket key of an object, e.g. `account.acme.main`; also the key of the node's applied revisions. */
export function configKeyName(key: ConfigKey): string {
  switch (key.kind) {
    case 'tenant':
      return `tenant.${segment(key.tenantId)}`;
    case 'account':
      return `account.${segment(key.tenantId)}.${segment(key.accountId)}`;
    case 'suppression':
      return `suppression.${segment(key.tenantId)}.${segment(key.digest)}`;
    case 'suspensions':
      return `suspension.${segment(key.tenantId)}`;
  }
}

const decoder = new TextDecoder();

/** A key segment back to its text (segment's inverse); null for one that is not a segment. */
function textOf(segmentText: string): string | null {
  if (SAFE_SEGMENT.test(segmentText)) return segmentText;
  if (!/^=(?:[0-9a-f]{2})+$/.test(segmentText)) return null;
  return decoder.decode(Buffer.from(segmentText.slice(1), 'hex'));
}

/**
 * The suppressions' keys in the bucket: `suppression.<tenant>.<digest>`. A key whose last segment
 * is an encoded text (`=` and hex) was written by a version before digests and names the address
 * itself (`legacy`); a digest is always a plain segment.
 */
export const suppressionKeys = {
  /** The filter over the keys of one tenant's suppressions, or every tenant's. */
  filter: (tenantId: string | null, last = '*'): string =>
    `suppression.${tenantId === null ? '*' : segment(tenantId)}.${last}`,
  /** The last segment of an address's key: its digest's, or (`legacy`) the address's own from before digests. */
  lastSegment: (text: string): string => segment(text),
  /** The tenant and digest a key names; null for a key of another kind or from before digests. */
  parse(name: string): { tenantId: string; digest: string | null } | null {
    const parts = name.split('.');
    if (parts.length !== 3 || parts[0] !== 'suppression') return null;
    const tenantId = textOf(parts[1] as string);
    const last = parts[2] as string;
    if (tenantId === null || textOf(last) === null) return null;
    return { tenantId, digest: last.startsWith('=') ? null : last };
  },
};

/** The object an admin change wrote, or null when the change is not configuration (a message command). */
export function configKeyOf(
  change: Pick<ChangeRecord, 'aggregateType' | 'aggregateId' | 'tenantId'>,
): ConfigKey | null {
  const { tenantId } = change;
  const rest = change.aggregateId.startsWith(`${tenantId}/`) ? change.aggregateId.slice(tenantId.length + 1) : null;
  switch (change.aggregateType) {
    case 'tenant':
      return { kind: 'tenant', tenantId };
    case 'account':
      return rest === null ? null : { kind: 'account', tenantId, accountId: rest };
    case 'suppression':
      return rest === null ? null : { kind: 'suppression', tenantId, digest: rest };
    case 'suspension':
      return { kind: 'suspensions', tenantId };
    default:
      return null;
  }
}
