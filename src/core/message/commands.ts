/**
 * Operator commands on a tenant's messages: suspend, activate, delete, resend,
 * retry-now, cleanup, run-now, erase, and reading one message. Each write is audited and
 * mirrored (message-command-runner.ts).
 */
import { notFound } from '../app-error.js';
import type { Clock, IdSource } from '../clock.js';
import type { AccountPaces } from '../delivery/relay-pace.js';
import type { ConfigWrites } from '../fleet/config-replica.js';
import type { MessageAdmin } from './admin.js';
import { createMessageCommandRunner, type MessageCommandRunner } from './command-runner.js';
import { createEraseCommand } from './erase-command.js';
import type { ErasureStore } from './erasure.js';
import type { AdminStore } from '../ports.js';
import type { MessageQueue } from './queue.js';
import { whyWaiting } from './waiting-reasons.js';
import { scopeTenant } from '../tenant/principal.js';
import type { CommandContext } from '../tenant/tenant-service.js';

export interface MessageCommandsDeps {
  store: AdminStore;
  messages: MessageAdmin;
  clock: Clock;
  ids: IdSource;
  /** Asks the dispatcher to look for due work now. */
  wake: () => void;
  /** What "why is it still queued" reads besides the message: usage and suppressions. */
  queue: Pick<MessageQueue, 'usage' | 'suppressed'>;
  /** dispatch.max_age_seconds: when a waiting message is given up. */
  maxAgeSeconds: number;
  /** Erasure of personal data (POST /commands/erase). */
  erasure: ErasureStore;
  /** The accounts this process paces after pushback (adaptive backoff), for "why is it still queued". */
  paces?: AccountPaces;
}

export const WHOLE_TENANT = '*';

export function createMessageCommands(deps: MessageCommandsDeps) {
  const { store, messages } = deps;
  const run = createMessageCommandRunner(deps);

  return {
    ...suspensionCommands(deps, run),
    ...listCommands(deps, run),

    cleanup(ctx: CommandContext, tenantId: string | undefined, olderThanSeconds: number) {
      return run.command(ctx, tenantId, 'cleanup', (tenant, now) => {
        const removed = messages.removeReported(tenant, now - olderThanSeconds * 1000);
        return {
          result: { removed },
          data: { older_than_seconds: olderThanSeconds, removed },
          eventType: 'message.cleaned_up',
        };
      });
    },

    runNow(ctx: CommandContext, tenantId: string | undefined) {
      const tenant = scopeTenant(ctx.principal, tenantId);
      if (store.tenants.get(tenant) === null) throw notFound('tenant', tenant);
      deps.wake();
      return { woken: true };
    },

    /** Erases messages, an address's traces or a tenant's mail (core/message/erase-command.ts). */
    erase: createEraseCommand({ store, erasure: deps.erasure, clock: deps.clock, ids: deps.ids }),

    /** The message, its timeline, and what holds it back if it is still waiting. */
    detail: (ctx: CommandContext, tenantId: string | undefined, id: string) => messageDetail(deps, ctx, tenantId, id),
  };
}

/** Suspend and activate a batch of the tenant's messages, or all of them (`*`). */
function suspensionCommands(deps: MessageCommandsDeps, { command }: MessageCommandRunner) {
  const { messages } = deps;
  return {
    suspend(ctx: CommandContext, tenantId: string | undefined, batchCode: string | undefined) {
      const batch = batchCode ?? WHOLE_TENANT;
      return command(ctx, tenantId, 'suspend', (tenant, now) => {
        const held = messages.suspend(tenant, batch, now);
        return {
          result: { batch_code: batch, suspended_messages: held, suspensions: messages.suspensions(tenant) },
          data: { batch_code: batch, held },
          eventType: 'suspension.suspended',
        };
      });
    },

    activate(ctx: CommandContext, tenantId: string | undefined, batchCode: string | undefined) {
      const batch = batchCode ?? WHOLE_TENANT;
      const outcome = command(ctx, tenantId, 'activate', (tenant, now) => {
        const released = messages.activate(tenant, batch, now);
        return {
          result: { batch_code: batch, activated_messages: released, suspensions: messages.suspensions(tenant) },
          data: { batch_code: batch, released },
          eventType: 'suspension.activated',
        };
      });
      deps.wake();
      return outcome;
    },
  };
}

/** Delete, resend and retry-now: commands on a list of the tenant's messages. */
function listCommands({ messages }: MessageCommandsDeps, { perMessage }: MessageCommandRunner) {
  return {
    deleteMessages(ctx: CommandContext, tenantId: string | undefined, ids: readonly string[]) {
      return perMessage(ctx, tenantId, {
        name: 'delete',
        eventType: 'message.delete_requested',
        run: (tenant, now) => messages.deleteMessages(tenant, ids, now),
        done: 'deleted',
        skipped: 'in_flight',
        wakes: false,
      });
    },

    resend(ctx: CommandContext, tenantId: string | undefined, ids: readonly string[]) {
      return perMessage(ctx, tenantId, {
        name: 'resend',
        eventType: 'message.resend_requested',
        run: (tenant, now) => messages.resend(tenant, ids, now, ctx.correlationId),
        done: 'resent',
        skipped: 'not_final',
        gone: 'body_erased',
        wakes: true,
      });
    },

    /** The next attempt of deferred or scheduled messages becomes now, and the dispatcher is woken. */
    retryNow(ctx: CommandContext, tenantId: string | undefined, ids: readonly string[]) {
      return perMessage(ctx, tenantId, {
        name: 'retry_now',
        eventType: 'message.retry_now_requested',
        run: (tenant, now) => messages.retryNow(tenant, ids, now, ctx.correlationId),
        done: 'retried',
        skipped: 'not_applicable',
        wakes: true,
      });
    },
  };
}

function messageDetail(deps: MessageCommandsDeps, ctx: CommandContext, tenantId: string | undefined, id: string) {
  const { store, messages, clock } = deps;
  const scoped = scopeTenant(ctx.principal, tenantId);
  const found = messages.detail(scoped, id);
  if (found === null) throw notFound('message', id);
  const { message } = found;
  const now = clock.now();
  const account = store.accounts.get(scoped, message.accountId);
  const why = whyWaiting({
    message,
    tenantActive: store.tenants.get(scoped)?.active ?? false,
    suspensions: messages.suspensions(scoped),
    account,
    usage: account === null ? null : deps.queue.usage(scoped, message.accountId, now),
    pace: account === null ? null : (deps.paces?.of(scoped, message.accountId) ?? null),
    suppressed: [...deps.queue.suppressed(scoped, message.rcptTo, now)],
    maxAgeSeconds: deps.maxAgeSeconds,
    now,
  });
  return { ...found, why };
}

/** Suspensions are shared configuration in fleet mode: suspend and activate may wait for the fleet (config-replica.ts). */
export const SHARED_COMMANDS = ['suspend', 'activate'] as const;
export type MessageCommands = ConfigWrites<ReturnType<typeof createMessageCommands>, (typeof SHARED_COMMANDS)[number]>;
