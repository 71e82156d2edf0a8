/**
 * Commands over JetStream (received by outbox/command-consumer.ts), applied as
 * the HTTP API applies them: the same parser for add-messages bodies, the same
 * submission service and message commands, acting as the tenant named in the
 * subject. Each command's inbox entry, and an audit entry with its event,
 * commit with its effect.
 */
import { AppError } from '../../core/app-error.js';
import { changeRecorder } from '../../core/change-record.js';
import type { Clock, IdSource } from '../../core/clock.js';
import { parseCommandBody, type CommandHandler, type CommandRequest, type InboxStore } from '../../core/inbound.js';
import type { MessageCommands } from '../../core/message-commands.js';
import type { CommandContext } from '../../core/tenant-service.js';
import type { ChangeLog, TenantRepository, Transactor } from '../../core/ports.js';
import type { Principal } from '../../core/principal.js';
import type { SubmissionService } from '../../core/submission-service.js';
import { parseSubmission, type ParserLimits } from '../http/submission-parser.js';

export interface CommandDeps {
  store: Pick<Transactor, 'transaction'> & { inbox: InboxStore; changes: ChangeLog; tenants: Pick<TenantRepository, 'isActive'> };
  submissions: SubmissionService;
  commands: MessageCommands;
  /**
   * Fleet mode: a resend reaches the node holding each message (the command consumer is shared,
   * so any node may take the command). Absent for a single node.
   */
  fleetResend?: (ctx: CommandContext, tenantId: string, ids: string[]) => Promise<Record<string, unknown>>;
  parserLimits: ParserLimits;
  clock: Clock;
  ids: IdSource;
}

const isTransient = (error: unknown): boolean => error instanceof AppError && error.transient;

export function createCommandHandler(deps: CommandDeps): CommandHandler {
  const { store, clock } = deps;

  /** The inbox row and the command's audit entry (mirrored as `command.processed`). */
  const remember = (request: CommandRequest, outcome: Record<string, unknown>): void => {
    const receivedAt = clock.now();
    store.inbox.record({ id: request.inboxId, subject: request.subject, tenantId: request.tenantId, command: request.command, receivedAt, outcome });
    const record = changeRecorder(
      { principal: { kind: 'tenant', tenantId: request.tenantId }, correlationId: request.inboxId },
      { now: () => receivedAt, uuid: () => deps.ids.uuid() },
    );
    store.changes.record(
      record({
        command: `nats.${request.command}`,
        eventType: 'command.processed',
        tenantId: request.tenantId,
        aggregateType: 'message',
        aggregateId: request.tenantId,
        data: { command: request.command, inbox_id: request.inboxId, subject: request.subject, outcome },
      }),
    );
  };

  const apply = async (request: CommandRequest): Promise<Record<string, unknown> | { poison: string }> => {
    const principal: Principal = { kind: 'tenant', tenantId: request.tenantId };
    const ctx = { principal, correlationId: request.inboxId };
    if (request.command === 'add-messages') {
      const parsed = parseSubmission(request.body, deps.parserLimits);
      if (!parsed.ok) return { poison: `${parsed.error.code}: ${parsed.error.message}` };
      const result = await deps.submissions.enqueue(principal, parsed.submission.items, parsed.submission.defaultPriority, request.inboxId, (outcome) =>
        remember(request, { queued: outcome.queued, rejected: outcome.rejected }),
      );
      return { queued: result.queued, rejected: result.rejected };
    }
    const body = parseCommandBody(request.command, request.body);
    if (typeof body === 'string') return { poison: body };
    if ('ids' in body && deps.fleetResend !== undefined) {
      // Answered by every node over request/reply: the inbox row follows in its own transaction (a resend is idempotent).
      const resent = await deps.fleetResend(ctx, request.tenantId, body.ids);
      store.transaction(() => remember(request, resent));
      return resent;
    }
    const done = store.transaction(() => {
      const result =
        'ids' in body
          ? deps.commands.resend(ctx, request.tenantId, body.ids)
          : request.command === 'suspend'
            ? deps.commands.suspend(ctx, request.tenantId, body.batchCode)
            : deps.commands.activate(ctx, request.tenantId, body.batchCode);
      if (result instanceof Promise) return result;
      remember(request, result as unknown as Record<string, unknown>);
      return result as unknown as Record<string, unknown>;
    });
    if (!(done instanceof Promise)) return done;
    // Fleet mode: a suspension waits for the fleet's bucket, so the inbox row follows in its own transaction (both are idempotent).
    const shared = (await done) as unknown as Record<string, unknown>;
    store.transaction(() => remember(request, shared));
    return shared;
  };

  return async (request) => {
    if (store.inbox.has(request.inboxId)) return { kind: 'duplicate' };
    if (store.tenants.isActive(request.tenantId) === null) return { kind: 'poison', code: 'UNKNOWN_TENANT', reason: `no tenant ${request.tenantId}` };
    try {
      const outcome = await apply(request);
      if ('poison' in outcome) return { kind: 'poison', code: 'INVALID_COMMAND', reason: String(outcome.poison) };
      return { kind: 'done', result: outcome };
    } catch (error) {
      if (isTransient(error)) throw error;
      // A second delivery racing the first: the inbox's key refused it, the first one counts.
      if (store.inbox.has(request.inboxId)) return { kind: 'duplicate' };
      return { kind: 'poison', code: error instanceof AppError ? error.code : 'INTERNAL', reason: (error as Error).message };
    }
  };
}
