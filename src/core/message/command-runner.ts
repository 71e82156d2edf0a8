/**
 * How a message command runs: the tenant resolved and checked, the change and its
 * audit record in one transaction, and for a command on a list of messages, an answer
 * under the command's own field names. Part of the message commands (message-commands.ts).
 */
import { notFound } from '../app-error.js';
import { changeRecorder } from '../events/change-record.js';
import type { Clock, IdSource } from '../clock.js';
import type { IdsOutcome } from './admin.js';
import type { AdminStore } from '../ports.js';
import { scopeTenant } from '../tenant/principal.js';
import type { CommandContext } from '../tenant/tenant-service.js';

interface MessageCommandRunnerDeps {
  store: AdminStore;
  clock: Clock;
  ids: IdSource;
  wake: () => void;
}

/** A per-message command: its audit name and event, its store call, and its answer's field names. */
interface PerMessageCommand<Done extends string, Skipped extends string> {
  name: string;
  eventType: string;
  run: (tenantId: string, now: number) => IdsOutcome;
  /** The answer's field for the ids it acted on. */
  done: Done;
  /** The answer's field for the ids it found but left alone. */
  skipped: Skipped;
  /** The answer's field for the ids whose body is gone (resend), when the command has one. */
  gone?: string;
  wakes: boolean;
}

type PerMessageResult<Done extends string, Skipped extends string> = { [K in Done | 'not_found' | Skipped]: string[] };

export function createMessageCommandRunner(deps: MessageCommandRunnerDeps) {
  const { store, clock } = deps;

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
      store.changes.record(
        record({ command: `messages.${name}`, eventType, tenantId, aggregateType, aggregateId: tenantId, data }),
      );
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
      const result = {
        [spec.done]: acted.done,
        not_found: acted.notFound,
        [spec.skipped]: acted.skipped,
        ...(spec.gone === undefined ? {} : { [spec.gone]: acted.gone ?? [] }),
      } as PerMessageResult<Done, Skipped>;
      return { result, data: { ids: acted.done }, eventType: spec.eventType };
    });
    if (spec.wakes) deps.wake();
    return outcome;
  };

  return { command, perMessage };
}

export type MessageCommandRunner = ReturnType<typeof createMessageCommandRunner>;
