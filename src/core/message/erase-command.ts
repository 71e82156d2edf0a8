/**
 * POST /commands/erase and `mailproxy erase`: a tenant key erases in its own tenant, the admin
 * token in any (an address in every tenant when it names none). Each tenant touched gets its
 * audit row and `message.erase_requested` event in the erasure's transaction; neither names the
 * address (an audit that kept it would be a copy of what was erased). It answers once that
 * transaction is durable; the store scrubs what SQLite keeps of the erased rows elsewhere right
 * after, in the background (core/message/erasure.ts).
 */
import { notFound } from '../app-error.js';
import { normalizeAddress } from '../address.js';
import type { Clock, IdSource } from '../clock.js';
import { changeRecorder } from '../events/change-record.js';
import type { AdminStore } from '../ports.js';
import { scopeTenant, scopeTenantOrAll } from '../tenant/principal.js';
import type { CommandContext } from '../tenant/tenant-service.js';
import type { ErasureCounts, ErasureStore, ErasureTarget } from './erasure.js';

export type ErasureRequest =
  | { by: 'messages'; tenantId?: string | undefined; ids: readonly string[] }
  | { by: 'address'; tenantId?: string | undefined; address: string }
  | { by: 'tenant'; tenantId?: string | undefined };

/** The answer: what was erased, summed over the tenants touched. */
export interface ErasureResult {
  tenants: string[];
  erased_messages: number;
  stopped_waiting: number;
  in_flight: number;
  not_found: string[];
  suppressions: number;
  mailbox_records: number;
  pec_receipts: number;
  events_scrubbed: number;
}

export interface EraseCommandDeps {
  store: AdminStore;
  erasure: ErasureStore;
  clock: Clock;
  ids: IdSource;
}

function targetsOf(deps: EraseCommandDeps, ctx: CommandContext, request: ErasureRequest): ErasureTarget[] {
  if (request.by === 'address') {
    const address = normalizeAddress(request.address);
    const scoped = scopeTenantOrAll(ctx.principal, request.tenantId);
    if (scoped !== null) return [{ kind: 'address', tenantId: scoped, address }];
    // Every tenant, each an index range of its own; then what belongs to no tenant.
    const tenants = deps.store.tenants.list().map((tenant): string | null => tenant.id);
    return [...tenants, null].map((tenantId) => ({ kind: 'address', tenantId, address }));
  }
  const tenantId = scopeTenant(ctx.principal, request.tenantId);
  if (deps.store.tenants.get(tenantId) === null) throw notFound('tenant', tenantId);
  return [request.by === 'messages' ? { kind: 'messages', tenantId, ids: request.ids } : { kind: 'tenant', tenantId }];
}

const sum = (counts: ErasureCounts[], key: keyof Omit<ErasureCounts, 'notFound'>): number =>
  counts.reduce((total, count) => total + count[key], 0);

export function createEraseCommand(deps: EraseCommandDeps) {
  const { store, erasure, clock } = deps;
  return (ctx: CommandContext, request: ErasureRequest): ErasureResult => {
    const targets = targetsOf(deps, ctx, request);
    const record = changeRecorder(ctx, { now: () => clock.now(), uuid: () => deps.ids.uuid() });
    const counts = store.transaction(() =>
      targets.map((target) => {
        const now = clock.now();
        const count = erasure.erase(target, now, ctx.correlationId);
        const tenantId = target.tenantId;
        // The records of no tenant are erased under the audit rows of the tenants' passes.
        if (tenantId === null) return count;
        store.changes.record(
          record({
            command: 'messages.erase',
            eventType: 'message.erase_requested',
            tenantId,
            aggregateType: 'message',
            aggregateId: tenantId,
            // What and how much, never whom: the ids are the client's own references.
            data: {
              by: request.by,
              ...(target.kind === 'messages' ? { ids: target.ids } : {}),
              messages: count.messages,
              stopped_waiting: count.waiting,
            },
          }),
        );
        return count;
      }),
    );
    return {
      tenants: targets.flatMap((target) => (target.tenantId === null ? [] : [target.tenantId])),
      erased_messages: sum(counts, 'messages'),
      stopped_waiting: sum(counts, 'waiting'),
      in_flight: sum(counts, 'inFlight'),
      not_found: counts.flatMap((count) => count.notFound),
      suppressions: sum(counts, 'suppressions'),
      mailbox_records: sum(counts, 'mailboxRecords'),
      pec_receipts: sum(counts, 'pecReceipts'),
      events_scrubbed: sum(counts, 'events'),
    };
  };
}
