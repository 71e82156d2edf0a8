/**
 * Operator actions over every message a search filter finds: resend, delete,
 * retry now, and suspend / activate. A dry run counts; a real run works in
 * chunks, each chunk one transaction with its audit and events, and lets the
 * event loop turn between chunks, so a huge queue never blocks intake.
 */
import { AppError, notFound } from '../app-error.js';
import { changeRecorder } from '../events/change-record.js';
import type { Clock, IdSource } from '../clock.js';
import type { IdsOutcome, MessageAdmin } from './admin.js';
import type { MessageCommands } from './commands.js';
import type { MessageFilter, MessageStatus } from './search.js';
import type { MessageSelection, SelectedMessage, Selection } from './selection.js';
import type { AdminStore } from '../ports.js';
import { scopeTenant } from '../tenant/principal.js';
import type { CommandContext } from '../tenant/tenant-service.js';

export const BULK_ACTIONS = ['resend', 'delete', 'retry-now', 'suspend', 'activate'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** The statuses each action applies to; the rest of what the filter finds is `not_applicable`. */
const APPLIES_TO: Record<BulkAction, readonly MessageStatus[]> = {
  resend: ['sent', 'error', 'bounced'],
  // A message in flight cannot be recalled from its relay.
  delete: ['queued', 'deferred', 'suspended', 'sent', 'error', 'bounced'],
  // Not yet due (selected with dueAfter = now); a held message waits for its activation, not for a time.
  'retry-now': ['queued', 'deferred'],
  suspend: ['queued', 'deferred'],
  activate: ['suspended'],
};

/**
 * Suspension is not per message in this model: it holds a tenant, or one batch
 * of it (`suspensions` table). A bulk suspend or activate therefore takes only
 * those two filters and acts as POST /commands/suspend or /activate does.
 */
const HOLD_ACTIONS: ReadonlySet<BulkAction> = new Set(['suspend', 'activate']);
const HOLD_FILTERS = new Set<keyof MessageFilter>(['tenantId', 'batchCode']);

export interface BulkRequest {
  action: BulkAction;
  /** `tenantId` as asked (undefined: none named); the scope is decided here. */
  filter: Omit<MessageFilter, 'tenantId'>;
  tenantId: string | undefined;
  /** The admin's explicit "every tenant". */
  allTenants: boolean;
  /** At most this many messages acted on by one run (the rest is counted in `remaining`). */
  max: number;
}

export interface BulkPreview {
  action: BulkAction;
  dry_run: true;
  /** Messages the filter finds. */
  matching: number;
  /** Of those, the ones the action applies to. */
  applicable: number;
  /** A few of the applicable ones, newest first. */
  sample: Array<{ tenantId: string; clientId: string }>;
}

export interface BulkResult {
  action: BulkAction;
  dry_run: false;
  matching: number;
  /** Acted on. */
  done: number;
  /** Found by the filter but not in a state the action applies to (in flight, already sent, ...). */
  not_applicable: number;
  /** Still applicable after the run: more than `max`, or arrived meanwhile. */
  remaining: number;
  /** suspend / activate: the tenant's suspensions afterwards. */
  suspensions?: string[] | undefined;
}

export interface BulkCommandsDeps {
  store: AdminStore;
  messages: MessageAdmin;
  selection: MessageSelection;
  commands: Pick<MessageCommands, 'suspend' | 'activate'>;
  clock: Clock;
  ids: IdSource;
  wake: () => void;
  /** Lets other work run between two chunks (setImmediate). */
  yieldTurn: () => Promise<void>;
  /** Messages per transaction. */
  chunkSize?: number;
}

export const BULK_SAMPLE_SIZE = 20;
const DEFAULT_CHUNK = 500;

type PerIds = (
  admin: MessageAdmin,
  tenantId: string,
  ids: readonly string[],
  at: number,
  correlationId: string | null,
) => IdsOutcome;
const PER_IDS: Record<'resend' | 'delete' | 'retry-now', { run: PerIds; eventType: string }> = {
  resend: {
    run: (admin, tenant, ids, at, correlation) => admin.resend(tenant, ids, at, correlation),
    eventType: 'message.resend_requested',
  },
  delete: {
    run: (admin, tenant, ids, at) => admin.deleteMessages(tenant, ids, at),
    eventType: 'message.delete_requested',
  },
  'retry-now': {
    run: (admin, tenant, ids, at, correlation) => admin.retryNow(tenant, ids, at, correlation),
    eventType: 'message.retry_now_requested',
  },
};

export function createBulkCommands(deps: BulkCommandsDeps) {
  const { selection } = deps;
  const selectionOf = bulkSelection(deps);

  const matching = (wanted: Selection): number => selection.count({ ...wanted, statuses: null, dueAfter: null });

  return {
    /** The dry run: what the filter finds, what the action would reach, and a sample of it. */
    preview(ctx: CommandContext, request: BulkRequest): BulkPreview {
      const wanted = selectionOf(ctx, request);
      const sample = selection
        .page(wanted, null, BULK_SAMPLE_SIZE)
        .map((m) => ({ tenantId: m.tenantId, clientId: m.id }));
      return {
        action: request.action,
        dry_run: true,
        matching: matching(wanted),
        applicable: selection.count(wanted),
        sample,
      };
    },

    async run(ctx: CommandContext, request: BulkRequest): Promise<BulkResult> {
      const wanted = selectionOf(ctx, request);
      const found = matching(wanted);
      const applicable = selection.count(wanted);
      const base = {
        action: request.action,
        dry_run: false as const,
        matching: found,
        not_applicable: found - applicable,
      };
      const { action } = request;
      if (action === 'suspend' || action === 'activate')
        return { ...base, ...(await runHold(deps.commands, ctx, action, wanted)) };
      const { done, seen } = await runInChunks(deps, ctx, action, wanted, request.max);
      if (done > 0 && action !== 'delete') deps.wake();
      // Counted again with a fresh "now": what is still applicable is what the run left (or what came since).
      const remaining = selection.count(selectionOf(ctx, request));
      return { ...base, not_applicable: base.not_applicable + (seen - done), done, remaining };
    },
  };
}

/** One chunk, one transaction: the page read, acted on per tenant, and each tenant's audit record. */
function runChunk(
  deps: BulkCommandsDeps,
  ctx: CommandContext,
  action: keyof typeof PER_IDS,
  wanted: Selection,
  beforePk: number | null,
  limit: number,
) {
  const { store, selection, clock } = deps;
  const record = changeRecorder(ctx, { now: () => clock.now(), uuid: () => deps.ids.uuid() });
  return store.transaction(() => {
    const page = selection.page(wanted, beforePk, limit);
    let done = 0;
    for (const [tenantId, ids] of byTenant(page)) {
      const outcome = PER_IDS[action].run(deps.messages, tenantId, ids, clock.now(), ctx.correlationId);
      done += outcome.done.length;
      const data = { ids: outcome.done, bulk: true };
      const eventType = PER_IDS[action].eventType;
      store.changes.record(
        record({
          command: `messages.bulk_${action.replace('-', '_')}`,
          eventType,
          tenantId,
          aggregateType: 'message',
          aggregateId: tenantId,
          data,
        }),
      );
    }
    return { page, done };
  });
}

/** Up to `max` messages in chunks, the event loop given a turn between them: how many were acted on, and seen. */
async function runInChunks(
  deps: BulkCommandsDeps,
  ctx: CommandContext,
  action: keyof typeof PER_IDS,
  wanted: Selection,
  max: number,
) {
  const chunkSize = deps.chunkSize ?? DEFAULT_CHUNK;
  let done = 0;
  let seen = 0;
  let beforePk: number | null = null;
  while (seen < max) {
    const limit = Math.min(chunkSize, max - seen);
    const chunk = runChunk(deps, ctx, action, wanted, beforePk, limit);
    done += chunk.done;
    seen += chunk.page.length;
    const last = chunk.page[chunk.page.length - 1];
    if (last === undefined || chunk.page.length < limit) break;
    beforePk = last.pk;
    await deps.yieldTurn();
  }
  return { done, seen };
}

export type BulkCommands = ReturnType<typeof createBulkCommands>;

/** What a request selects: its scope decided (a tenant key its own tenant, the admin one named or all explicitly) and its filter checked. */
function bulkSelection({ store, clock }: Pick<BulkCommandsDeps, 'store' | 'clock'>) {
  /** The tenant (or every tenant, null) the request reaches: a tenant key its own, the admin one named or all explicitly. */
  const scope = (ctx: CommandContext, request: BulkRequest): string | null => {
    if (request.allTenants) {
      if (ctx.principal.kind !== 'admin') throw new AppError('FORBIDDEN', 'all_tenants requires the admin token');
      if (request.tenantId !== undefined) throw invalid('all_tenants', 'name a tenant_id or all_tenants, not both');
      if (HOLD_ACTIONS.has(request.action))
        throw invalid('all_tenants', 'suspend and activate act on one tenant (or one batch of it)');
      return null;
    }
    if (ctx.principal.kind === 'admin' && request.tenantId === undefined)
      throw invalid('tenant_id', 'the admin token names a tenant_id, or all_tenants: true');
    const tenantId = scopeTenant(ctx.principal, request.tenantId);
    if (store.tenants.get(tenantId) === null) throw notFound('tenant', tenantId);
    return tenantId;
  };

  const selectionOf = (ctx: CommandContext, request: BulkRequest): Selection => {
    const filter: MessageFilter = { ...request.filter, tenantId: scope(ctx, request) };
    if (HOLD_ACTIONS.has(request.action)) {
      const extra = (Object.keys(filter) as Array<keyof MessageFilter>).filter(
        (key) => !HOLD_FILTERS.has(key) && filter[key] !== null,
      );
      if (extra.length > 0)
        throw invalid(
          'filter',
          `suspend and activate hold a tenant or a batch: filter them by tenant_id and batch_code only (not ${extra.join(', ')})`,
        );
    }
    return {
      filter,
      statuses: APPLIES_TO[request.action],
      dueAfter: request.action === 'retry-now' ? clock.now() : null,
    };
  };

  return selectionOf;
}

/** A bulk suspend or activate is the tenant's (or batch's) own command. */
async function runHold(
  commands: BulkCommandsDeps['commands'],
  ctx: CommandContext,
  action: 'suspend' | 'activate',
  wanted: Selection,
): Promise<Pick<BulkResult, 'done' | 'remaining' | 'suspensions'>> {
  const tenantId = wanted.filter.tenantId ?? undefined;
  const batch = wanted.filter.batchCode ?? undefined;
  const held =
    action === 'suspend' ? await commands.suspend(ctx, tenantId, batch) : await commands.activate(ctx, tenantId, batch);
  const done = 'suspended_messages' in held ? held.suspended_messages : held.activated_messages;
  return { done, remaining: 0, suspensions: held.suspensions };
}

function byTenant(page: readonly SelectedMessage[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const message of page) {
    const ids = groups.get(message.tenantId);
    if (ids === undefined) groups.set(message.tenantId, [message.id]);
    else ids.push(message.id);
  }
  return groups;
}

const invalid = (path: string, message: string): AppError =>
  new AppError('VALIDATION_FAILED', message, { details: [{ path, message }] });
