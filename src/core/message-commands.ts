/**
 * Operator commands on a tenant's messages: suspend, activate, delete, resend,
 * retry-now, cleanup, run-now, and reading one message. Each write is audited and mirrored.
 */
import { notFound } from './app-error.js';
import { changeRecorder } from './change-record.js';
import type { Clock, IdSource } from './clock.js';
import type { ConfigWrites } from './config-replica.js';
import type { MessageAdmin } from './message-admin.js';
import type { AdminStore } from './ports.js';
import type { MessageQueue } from './queue.js';
import { whyWaiting } from './waiting-reasons.js';
import { scopeTenant } from './principal.js';
import type { CommandContext } from './tenant-service.js';

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
}

export const WHOLE_TENANT = '*';

export function createMessageCommands(deps: MessageCommandsDeps) {
  const { store, messages, clock } = deps;

  /** Resolves the tenant, checks it exists, and runs `fn` in one transaction with its change record. */
  const command = <T>(
    ctx: CommandContext,
    requested: string | undefined,
    name: string,
    fn: (tenantId: string, now: number) => { result: T; data: Record<string, unknown>; eventType: string },
  ): T => {
    const tenantId = scopeTenant(ctx.principal, requested);
    const record = changeRecorder(ctx, { now: () => clock.now(), uuid: () => deps.ids.uuid() });
    return store.transaction(() => {
      if (store.tenants.get(tenantId) === null) throw notFound('tenant', tenantId);
      const { result, data, eventType } = fn(tenantId, clock.now());
      const aggregateType = name === 'suspend' || name === 'activate' ? 'suspension' : 'message';
      store.changes.record(record({ command: `messages.${name}`, eventType, tenantId, aggregateType, aggregateId: tenantId, data }));
      return result;
    });
  };

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

    deleteMessages(ctx: CommandContext, tenantId: string | undefined, ids: readonly string[]) {
      return command(ctx, tenantId, 'delete', (tenant, now) => {
        const outcome = messages.deleteMessages(tenant, ids, now);
        return {
          result: { deleted: outcome.done, not_found: outcome.notFound, in_flight: outcome.skipped },
          data: { ids: outcome.done },
          eventType: 'message.delete_requested',
        };
      });
    },

    resend(ctx: CommandContext, tenantId: string | undefined, ids: readonly string[]) {
      const outcome = command(ctx, tenantId, 'resend', (tenant, now) => {
        const moved = messages.resend(tenant, ids, now, ctx.correlationId);
        return {
          result: { resent: moved.done, not_found: moved.notFound, not_final: moved.skipped },
          data: { ids: moved.done },
          eventType: 'message.resend_requested',
        };
      });
      deps.wake();
      return outcome;
    },

    /** The next attempt of deferred or scheduled messages becomes now, and the dispatcher is woken. */
    retryNow(ctx: CommandContext, tenantId: string | undefined, ids: readonly string[]) {
      const outcome = command(ctx, tenantId, 'retry_now', (tenant, now) => {
        const moved = messages.retryNow(tenant, ids, now, ctx.correlationId);
        return {
          result: { retried: moved.done, not_found: moved.notFound, not_applicable: moved.skipped },
          data: { ids: moved.done },
          eventType: 'message.retry_now_requested',
        };
      });
      deps.wake();
      return outcome;
    },

    cleanup(ctx: CommandContext, tenantId: string | undefined, olderThanSeconds: number) {
      return command(ctx, tenantId, 'cleanup', (tenant, now) => {
        const removed = messages.removeReported(tenant, now - olderThanSeconds * 1000);
        return { result: { removed }, data: { older_than_seconds: olderThanSeconds, removed }, eventType: 'message.cleaned_up' };
      });
    },

    runNow(ctx: CommandContext, tenantId: string | undefined) {
      const tenant = scopeTenant(ctx.principal, tenantId);
      if (store.tenants.get(tenant) === null) throw notFound('tenant', tenant);
      deps.wake();
      return { woken: true };
    },

    /** The message, its timeline, and what holds it back if it is still waiting. */
    detail(ctx: CommandContext, tenantId: string | undefined, id: string) {
      const scoped = scopeTenant(ctx.principal, tenantId);
      const found = messages.detail(scoped, id);
      if (found === null) throw notFound('message', id);
      const { message } = found;
      const now = clock.now();
      const account = store.accounts.get(scoped, message.account_id);
      const why = whyWaiting({
        message,
        tenantActive: store.tenants.get(scoped)?.active ?? false,
        suspensions: messages.suspensions(scoped),
        account,
        usage: account === null ? null : deps.queue.usage(scoped, message.account_id, now),
        suppressed: [...deps.queue.suppressed(scoped, message.rcpt_to, now)],
        maxAgeSeconds: deps.maxAgeSeconds,
        now,
      });
      return { ...found, why };
    },
  };
}

/** Suspensions are shared configuration in fleet mode: suspend and activate may wait for the fleet (config-replica.ts). */
export const SHARED_COMMANDS = ['suspend', 'activate'] as const;
export type MessageCommands = ConfigWrites<ReturnType<typeof createMessageCommands>, (typeof SHARED_COMMANDS)[number]>;
