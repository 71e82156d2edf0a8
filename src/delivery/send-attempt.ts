/**
 * One attempt at one message: build its bytes, hand them to the relay, and turn
 * the answer into the outcome to record. Never throws: every failure is data.
 */
import type { Account } from '../core/account.js';
import { isAppError } from '../core/app-error.js';
import { decideDelivery, type DeliveryDecision } from '../core/delivery-outcome.js';
import type { ClaimedMessage, RecordedOutcome } from '../core/queue.js';
import type { BuiltMessage, MessageBuilder, Relay } from '../core/relay.js';
import { nextRetry, type RetryPolicy } from '../core/retry-policy.js';
import type { Tenant } from '../core/tenant.js';

export interface SendAttemptDeps {
  relay: Relay;
  builder: MessageBuilder;
  retry: RetryPolicy;
  now: () => number;
  random: () => number;
}

export interface AttemptResult {
  outcome: RecordedOutcome;
  decision: DeliveryDecision;
}

async function build(message: ClaimedMessage, tenant: Tenant, builder: MessageBuilder): Promise<BuiltMessage> {
  if (message.raw !== null) {
    return { raw: message.raw, envelope: { mailFrom: message.mailFrom, rcptTo: message.rcptTo }, messageIdHeader: '' };
  }
  if (message.payload === null) throw new Error(`message ${message.pk} has neither payload nor raw bytes`);
  return builder.build({ clientId: message.id, payload: message.payload, tenant });
}

/** A build failure as a relay-like decision: a fetch that may work later is transient. */
function buildFailure(error: unknown): DeliveryDecision {
  const reason = error instanceof Error ? error.message : String(error);
  if (isAppError(error) && !error.transient) return { kind: 'failed', reason, replyCode: null, enhancedStatus: null, refused: [] };
  return { kind: 'deferred', reason, replyCode: null, enhancedStatus: null, retryAfterMs: null };
}

export async function attemptSend(deps: SendAttemptDeps, message: ClaimedMessage, account: Account, tenant: Tenant): Promise<AttemptResult> {
  let decision: DeliveryDecision;
  try {
    const built = await build(message, tenant, deps.builder);
    decision = decideDelivery(await deps.relay.send(account, built.envelope, built.raw, built.messageIdHeader));
  } catch (error) {
    decision = buildFailure(error);
  }
  return { decision, outcome: toOutcome(deps, message, decision) };
}

export function toOutcome(deps: Pick<SendAttemptDeps, 'retry' | 'now' | 'random'>, message: ClaimedMessage, decision: DeliveryDecision): RecordedOutcome {
  const at = deps.now();
  const base = { pk: message.pk, attempt: message.attempts, at };
  switch (decision.kind) {
    case 'sent':
      return { ...base, kind: 'sent', replyCode: decision.replyCode, enhancedStatus: decision.enhancedStatus, text: decision.text, refused: decision.refused };
    case 'failed':
      return { ...base, kind: 'failed', replyCode: decision.replyCode, enhancedStatus: decision.enhancedStatus, reason: decision.reason, refused: decision.refused };
    case 'account_problem':
      return { ...base, kind: 'released', replyCode: decision.replyCode, enhancedStatus: null, reason: `account paused: ${decision.reason}` };
    case 'deferred': {
      const retry = nextRetry(deps.retry, { attempts: message.attempts, now: at, createdAt: message.createdAt, hintMs: decision.retryAfterMs, random: deps.random() });
      const codes = { replyCode: decision.replyCode, enhancedStatus: decision.enhancedStatus };
      return retry.retry
        ? { ...base, ...codes, kind: 'deferred', nextAttemptAt: retry.at, reason: decision.reason }
        : { ...base, ...codes, kind: 'failed', reason: `${retry.reason}; last: ${decision.reason}`, refused: [] };
    }
  }
}
