/**
 * Commands over JetStream (`<prefix>.commands.<tenant_id>.<command>`): which
 * exist, what their bodies must hold, and how handling one can end. The tenant
 * in the subject is the tenant acted on: who may publish there is NATS's to
 * decide (accounts and permissions, see README).
 */
import { IDENTIFIER_PATTERN } from '../identifiers.js';

export const COMMANDS = ['add-messages', 'resend', 'suspend', 'activate'] as const;
export type CommandName = (typeof COMMANDS)[number];

export interface CommandRequest {
  /** The inbox id: the Nats-Msg-Id, or `seq:<stream sequence>` without one. */
  inboxId: string;
  subject: string;
  tenantId: string;
  command: CommandName;
  body: Uint8Array;
}

/**
 * `done`: applied now; `duplicate`: applied before (the inbox knew it);
 * `poison`: can never be applied (bad subject, body, tenant): to the DLQ.
 * A transient failure (the store cannot write) is thrown: the command is redelivered.
 */
export type CommandOutcome =
  | { kind: 'done'; result: Record<string, unknown> }
  | { kind: 'duplicate' }
  | { kind: 'poison'; code: string; reason: string };

export type CommandHandler = (request: CommandRequest) => Promise<CommandOutcome>;

export interface InboxEntry {
  id: string;
  subject: string;
  tenantId: string;
  command: string;
  receivedAt: number;
  outcome: Record<string, unknown>;
}

export interface InboxStore {
  has(id: string): boolean;
  /** Inside the transaction of the command's effect. */
  record(entry: InboxEntry): void;
  /** Removes entries older than `before`; answers how many. */
  prune(before: number): number;
}

const IDENTIFIER = new RegExp(IDENTIFIER_PATTERN.source);

/** `<prefix>.commands.<tenant_id>.<command>` -> its parts, or null when it names no command of ours. */
export function parseCommandSubject(
  prefix: string,
  subject: string,
): { tenantId: string; command: CommandName } | null {
  const head = `${prefix}.commands.`;
  if (!subject.startsWith(head)) return null;
  const [tenantId, command, ...rest] = subject.slice(head.length).split('.');
  if (rest.length > 0 || tenantId === undefined || !IDENTIFIER.test(tenantId)) return null;
  return (COMMANDS as readonly string[]).includes(command ?? '') ? { tenantId, command: command as CommandName } : null;
}

/** The body of `resend` (`{"ids": [...]}`) or `suspend`/`activate` (`{"batch_code"?: "..."}`), or why not. */
export function parseCommandBody(
  command: Exclude<CommandName, 'add-messages'>,
  body: Uint8Array,
): { ids: string[] } | { batchCode: string | undefined } | string {
  let parsed: unknown;
  try {
    parsed = body.length === 0 ? {} : JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return 'the body is not UTF-8 JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'the body must be a JSON object';
  const fields = parsed as Record<string, unknown>;
  if (command === 'resend') {
    const ids = fields.ids;
    if (
      !Array.isArray(ids) ||
      ids.length === 0 ||
      ids.length > 10_000 ||
      !ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 256)
    ) {
      return '"ids" must be a list of 1 to 10000 message ids';
    }
    return { ids: ids as string[] };
  }
  const batchCode = fields.batch_code;
  if (batchCode !== undefined && (typeof batchCode !== 'string' || batchCode.length === 0 || batchCode.length > 128))
    return '"batch_code" must be a non-empty string';
  return { batchCode: batchCode as string | undefined };
}
