/**
 * Operator commands on a tenant's messages: suspend, activate, delete, resend,
 * retry-now, cleanup, run-now, and reading one message. Each write is audited and mirrored.
 */
import { notFound } from './app-error.js';
import { changeRecorder } from './change-record.js';
import type { Clock, IdSource } from './clock.js';
import type { ConfigWrites } from './config-replica.js';
import type { IdsOutcome, MessageAdmin } from './message-admin.js';
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

/** A per-message command: its audit name and event, its store call, and its answer's field names. */
interface PerMessageCommand<Done extends string, Skipped extends string> {
  name: string;
  eventType: string;
  run: (tenantId: string, now: number) => IdsOutcome;
  /** The answer's field for the ids it acted on. */
  done: Done;
  /** The answer's field for the ids it found but left alone. */
  skipped: Skipped;
  wakes: boolean;
}

type PerMessageResult<Done extends string, Skipped extends string> = { [K in Done | 'not_found' | Skipped]: string[] };

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

  /**
   * A command on a list of the tenant's messages (delete, resend, retry-now): one store call
   * in the command's transaction, its change record naming the ids it acted on, and an answer
   * that lists them under the command's own field names. `wakes`: the dispatcher is woken
   * after the commit, as the command may have made messages due.
   */
  const perMessage = <Done extends string, Skipped extends string>(
    ctx: CommandContext,
    requested: string | undefined,
    spec: PerMessageCommand<Done, Skipped>,
  ): PerMessageResult<Done, Skipped> => {
    const outcome = command(ctx, requested, spec.name, (tenant, now) => {
      const acted = spec.run(tenant, now);
      // Built in this order: the answer's JSON keeps its fields in it.
      const result = { [spec.done]: acted.done, not_found: acted.notFound, [spec.skipped]: acted.skipped } as PerMessageResult<Done, Skipped>;
      return { result, data: { ids: acted.done }, eventType: spec.eventType };
    });
    if (spec.wakes) deps.wake();
    return outcome;
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
      const account = store.accounts.get(scoped, message.accountId);
      const why = whyWaiting({
        message,
        tenantActive: store.tenants.get(scoped)?.active ?? false,
        suspensions: messages.suspensions(scoped),
        account,
        usage: account === null ? null : deps.queue.usage(scoped, message.accountId, now),
        suppressed: [...deps.queue.suppressed(scoped, message.rcptTo, now)],
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
