/**
 * Commands over JetStream (received by outbox/command-consumer.ts), applied as
 * the HTTP API applies them: the same parser for add-messages bodies, the same
 * submission service and message commands, acting as the tenant named in the
 * subject. Each command's inbox entry, and an audit entry with its event,
 * commit with its effect.
 */
import {
  AppError,
  type Clock,
  type IdSource,
  type ChangeLog,
  type TenantRepository,
  type Transactor,
} from '../../core/index.js';
import {
  parseCommandBody,
  type CommandHandler,
  type CommandName,
  type CommandRequest,
  type InboxStore,
} from '../../core/events/index.js';
import type { MessageCommands, SubmissionService } from '../../core/message/index.js';
import type { CommandContext, Principal } from '../../core/tenant/index.js';
import { parseSubmission, type ParserLimits } from '../http/index.js';
import { commandRecord, type CommandRecord } from './command-record.js';

export interface CommandDeps {
  store: Pick<Transactor, 'transaction'> & {
    inbox: InboxStore;
    changes: ChangeLog;
    tenants: Pick<TenantRepository, 'isActive'>;
  };
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

/** What a command came to: its result, or why it can never be applied. */
type Applied = Record<string, unknown> | { poison: string };
type MessageCommandRequest = CommandRequest & { command: Exclude<CommandName, 'add-messages'> };
const isMessageCommand = (request: CommandRequest): request is MessageCommandRequest =>
  request.command !== 'add-messages';

export function createCommandHandler(deps: CommandDeps): CommandHandler {
  const { store } = deps;
  const remember = commandRecord(deps);
  const apply = (request: CommandRequest): Promise<Applied> =>
    isMessageCommand(request) ? messageCommand(deps, request, remember) : addMessages(deps, request, remember);

  return async (request) => {
    if (store.inbox.has(request.inboxId)) return { kind: 'duplicate' };
    if (store.tenants.isActive(request.tenantId) === null)
      return { kind: 'poison', code: 'UNKNOWN_TENANT', reason: `no tenant ${request.tenantId}` };
    try {
      const outcome = await apply(request);
      if ('poison' in outcome) return { kind: 'poison', code: 'INVALID_COMMAND', reason: String(outcome.poison) };
      return { kind: 'done', result: outcome };
    } catch (error) {
      if (isTransient(error)) throw error;
      // A second delivery racing the first: the inbox's key refused it, the first one counts.
      if (store.inbox.has(request.inboxId)) return { kind: 'duplicate' };
      return {
        kind: 'poison',
        code: error instanceof AppError ? error.code : 'INTERNAL',
        reason: (error as Error).message,
      };
    }
  };
}

/** The body parsed as /add-messages parses it; the inbox row commits with the queued messages. */
async function addMessages(deps: CommandDeps, request: CommandRequest, remember: CommandRecord): Promise<Applied> {
  const principal: Principal = { kind: 'tenant', tenantId: request.tenantId };
  const parsed = parseSubmission(request.body, deps.parserLimits);
  if (!parsed.ok) return { poison: `${parsed.error.code}: ${parsed.error.message}` };
  const result = await deps.submissions.enqueue(
    principal,
    parsed.submission.items,
    parsed.submission.defaultPriority,
    request.inboxId,
    (outcome) => remember(request, { queued: outcome.queued, rejected: outcome.rejected }),
  );
  return { queued: result.queued, rejected: result.rejected };
}

/** A resend, suspend or activate, as the tenant the subject names; the inbox row commits with its effect. */
async function messageCommand(
  deps: CommandDeps,
  request: MessageCommandRequest,
  remember: CommandRecord,
): Promise<Applied> {
  const { store } = deps;
  const principal: Principal = { kind: 'tenant', tenantId: request.tenantId };
  const ctx = { principal, correlationId: request.inboxId };
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
}
