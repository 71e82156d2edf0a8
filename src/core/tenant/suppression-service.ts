/**
 * A tenant's suppression list: recipients it must not send to. Bounces and
 * complaints add to it (bounce/), operators list, add and remove entries here.
 * A tenant key manages its own list; the admin token any tenant's. Writes are
 * audited and mirrored like every admin change.
 */
import { isAddrSpec, normalizeAddress } from '../address.js';
import { AppError, notFound } from '../app-error.js';
import type { SuppressionRecord } from '../bounce/bounce.js';
import { changeRecorder } from '../events/change-record.js';
import type { Clock, IdSource } from '../clock.js';
import type { ConfigWrites } from '../fleet/config-replica.js';
import type { AdminStore } from '../ports.js';
import { scopeTenant } from './principal.js';
import type { CommandContext } from './tenant-service.js';

/** An entry as listed: the record with the digest it is kept and named under (core/blind-index.ts). */
export interface SuppressionEntry extends SuppressionRecord {
  /** The address's blind-index digest: the entry's key, what its events and audit rows name it by, the page cursor. */
  digest: string;
}

export interface SuppressionPage {
  suppressions: SuppressionEntry[];
  /** Pass as `after` for the next page; null on the last one. */
  next: string | null;
}

/**
 * The list keeps each address only sealed and matches it by its digest: addresses are taken and
 * answered in clear here, the store digests and seals them.
 */
export interface SuppressionRepository {
  /**
   * In digest order after `after` (a digest; the order is stable but says nothing of the
   * addresses); `address`: that address's entry only. Expired entries are left out.
   */
  list(
    tenantId: string,
    options: { after: string | null; limit: number; address: string | null; now: number },
  ): SuppressionEntry[];
  get(tenantId: string, address: string, now: number): SuppressionEntry | null;
  /** Inside the caller's transaction. A newer entry replaces an older one; a manual one is never shortened by a bounce. */
  upsert(record: SuppressionRecord): void;
  remove(tenantId: string, address: string): boolean;
  /** The digest an address's entry is kept under: events and audit rows name the entry by it, never by the address. */
  digestOf(address: string): string;
}

export interface SuppressionInput {
  address: string;
  reason?: string | null;
  /** Epoch ms; null or absent for until removed. */
  expiresAt?: number | null;
  /** Who asked: an operator (the default), or the recipient by a one-click link (unsubscribe-service.ts). */
  source?: 'manual' | 'unsubscribe';
}

export interface SuppressionServiceDeps {
  store: AdminStore & { suppressions: SuppressionRepository };
  clock: Clock;
  ids: IdSource;
}

const MAX_PAGE = 1000;

/** The address an operator typed, checked and in the form suppressions are kept in. */
function addressOf(text: string): string {
  const trimmed = text.trim();
  if (!isAddrSpec(trimmed))
    throw new AppError('VALIDATION_FAILED', 'not an e-mail address', {
      details: [{ path: 'address', message: 'expected an addr-spec such as user@example.com' }],
    });
  return normalizeAddress(trimmed);
}

/** A suppression from what an operator (or a recipient's link) asked for; its expiry must lie ahead. */
function manualSuppression(tenantId: string, input: SuppressionInput, now: number): SuppressionRecord {
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt !== null && expiresAt <= now)
    throw new AppError('VALIDATION_FAILED', 'expires_ts is in the past', {
      details: [{ path: 'expires_ts', message: 'must be in the future' }],
    });
  return {
    tenantId,
    address: addressOf(input.address),
    reason: input.reason ?? null,
    source: input.source ?? 'manual',
    createdAt: now,
    expiresAt,
  };
}

export function createSuppressionService(deps: SuppressionServiceDeps) {
  const { store, clock, ids } = deps;
  const tenantOf = (ctx: CommandContext, requested: string | undefined): string => {
    const tenantId = scopeTenant(ctx.principal, requested);
    if (store.tenants.get(tenantId) === null) throw notFound('tenant', tenantId);
    return tenantId;
  };
  const record = (
    ctx: CommandContext,
    command: string,
    eventType: string,
    tenantId: string,
    digest: string,
    data: Record<string, unknown>,
  ) =>
    // Named by digest: the audit, the outbox and the fleet's bucket (its key) never hold the address.
    changeRecorder(ctx, { now: () => clock.now(), uuid: () => ids.uuid() })({
      command,
      eventType,
      tenantId,
      aggregateType: 'suppression',
      aggregateId: `${tenantId}/${digest}`,
      data: { address_digest: digest, ...data },
    });

  return {
    list(
      ctx: CommandContext,
      requested: string | undefined,
      options: { after?: string; limit?: number; address?: string },
    ): SuppressionPage {
      const tenantId = tenantOf(ctx, requested);
      const limit = Math.min(options.limit ?? 100, MAX_PAGE);
      const rows = store.suppressions.list(tenantId, {
        after: options.after ?? null,
        limit: limit + 1,
        address: options.address === undefined ? null : addressOf(options.address),
        now: clock.now(),
      });
      const page = rows.slice(0, limit);
      return { suppressions: page, next: rows.length > limit ? (page[page.length - 1]?.digest ?? null) : null };
    },

    add(ctx: CommandContext, requested: string | undefined, input: SuppressionInput): SuppressionEntry {
      const tenantId = tenantOf(ctx, requested);
      const suppression = manualSuppression(tenantId, input, clock.now());
      const digest = store.suppressions.digestOf(suppression.address);
      store.transaction(() => {
        store.suppressions.upsert(suppression);
        store.changes.record(
          record(ctx, 'suppression.add', 'suppression.added', tenantId, digest, {
            reason: suppression.reason,
            source: suppression.source,
            expires_at: suppression.expiresAt,
          }),
        );
      });
      return { ...suppression, digest };
    },

    remove(ctx: CommandContext, requested: string | undefined, addressText: string): void {
      const tenantId = tenantOf(ctx, requested);
      const address = addressOf(addressText);
      store.transaction(() => {
        if (!store.suppressions.remove(tenantId, address)) throw notFound('suppression', address);
        store.changes.record(
          record(ctx, 'suppression.remove', 'suppression.removed', tenantId, store.suppressions.digestOf(address), {}),
        );
      });
    },
  };
}

/** The writes shared across a fleet (config-replica.ts): they may wait for it. */
export const SHARED_SUPPRESSION_WRITES = ['add', 'remove'] as const;
export type SuppressionService = ConfigWrites<
  ReturnType<typeof createSuppressionService>,
  (typeof SHARED_SUPPRESSION_WRITES)[number]
>;
