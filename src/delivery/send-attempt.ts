/**
 * One attempt at one message: build its bytes, hand them to the relay, and turn
 * the answer into the outcome to record. Never throws: every failure is data.
 */
import type { Account } from '../core/account/index.js';
import {
  decideDelivery,
  type DeliveryDecision,
  type Handoff,
  type HandoffResult,
  type JobEnvelope,
  nextRetry,
  type RetryPolicy,
} from '../core/delivery/index.js';
import type { BodyBytes, ClaimedMessage, RecordedOutcome } from '../core/message/index.js';
import {
  dkimSigners,
  takesUnsubscribe,
  unsubscribeHeaders,
  type DkimSigner,
  type SendingDomain,
  type Tenant,
  type UnsubscribeLinks,
} from '../core/tenant/index.js';
import { errorText } from '../core/index.js';

/**
 * A tenant's DKIM signers, made once per tenant as the store hands it out (it keeps a tenant read
 * until a tenant is written; a written one is a new object, so a changed list is never served
 * stale), not once per message.
 */
const signers = new WeakMap<readonly SendingDomain[], DkimSigner[]>();
function signersOf(tenant: Tenant): DkimSigner[] {
  if (tenant.sendingDomains.length === 0) return [];
  let made = signers.get(tenant.sendingDomains);
  if (made === undefined) {
    made = dkimSigners(tenant.sendingDomains);
    signers.set(tenant.sendingDomains, made);
  }
  return made;
}

/** An HTTP submission's envelope is built from its payload where it is composed (handoff.ts): none is opened for it here. */
const BUILT_FROM_PAYLOAD = { mailFrom: '', rcptTo: [] as string[] };

/** An SMTP submission's envelope goes sealed as stored, opened in the thread that relays it; in clear only from a row before sealing. */
const envelopeOf = (message: ClaimedMessage): JobEnvelope => {
  if (message.source !== 'smtp') return BUILT_FROM_PAYLOAD;
  return message.sealedEnvelope === null ? message.envelope() : { sealed: message.sealedEnvelope };
};

/** The one-click unsubscribe lines of a message whose tenant asks for them and that may carry them (one recipient). */
function unsubscribeLines(links: UnsubscribeLinks | null, message: ClaimedMessage, tenant: Tenant): string[] | null {
  const settings = tenant.listUnsubscribe;
  if (links === null || settings === null) return null;
  // Opened only for a tenant that asks for the links: their token names the recipient.
  const { rcptTo } = message.envelope();
  const recipient = rcptTo[0];
  if (recipient === undefined || !takesUnsubscribe(settings, { rcptTo, batchCode: message.batchCode })) return null;
  const token = links.issue({ tenantId: tenant.id, messageId: message.id, recipient, list: message.batchCode });
  return unsubscribeHeaders(settings, token);
}

export interface SendAttemptDeps {
  handoff: Handoff;
  /** The parts of a spooled SMTP submission and their key, read only now so that waiting messages hold no bytes. */
  readSpool: (spoolId: number) => { key: Buffer | null; parts: Buffer[] };
  /** A body in the body store, its sealed parts, read only now as a spool is; null when the store has no such object. */
  readObject: (name: string) => Promise<Buffer[] | null>;
  retry: RetryPolicy;
  /** The envelope sender to use instead of the client's (VERP), or null. */
  returnPath: (tenantId: string, messagePk: number) => string | null;
  /** Seals one-click unsubscribe links; null: none is added. */
  unsubscribeLinks: UnsubscribeLinks | null;
  now: () => number;
  random: () => number;
}

export interface AttemptResult {
  outcome: RecordedOutcome;
  decision: DeliveryDecision;
  /** The SMTP transaction's duration; null when the message did not reach the relay. */
  relayMs: number | null;
}

/** A message that could not be built, as a relay-like decision: a fetch that may work later is transient. */
function decide(result: HandoffResult): DeliveryDecision {
  if (result.built) return decideDelivery(result.reply);
  if (!result.transient)
    return { kind: 'failed', reason: result.reason, replyCode: null, enhancedStatus: null, refused: [] };
  return { kind: 'deferred', reason: result.reason, replyCode: null, enhancedStatus: null, retryAfterMs: null };
}

export async function attemptSend(
  deps: SendAttemptDeps,
  message: ClaimedMessage,
  account: Account,
  tenant: Tenant,
): Promise<AttemptResult> {
  let result: HandoffResult;
  try {
    const body = await bodyOf(message, deps);
    if ('missing' in body) return attemptOf(deps, message, body.missing);
    result = await deps.handoff.deliver({
      clientId: message.id,
      source: message.source,
      body,
      messageIdHeader: message.messageIdHeader,
      envelope: envelopeOf(message),
      returnPath: deps.returnPath(message.tenantId, message.pk),
      account,
      tenant: {
        id: tenant.id,
        clientBaseUrl: tenant.clientBaseUrl,
        clientAttachmentPath: tenant.clientAttachmentPath,
        clientAuth: tenant.clientAuth,
        // A PEC message must carry its attachments: its account never offloads them.
        attachmentOffload: account.isPec ? null : tenant.attachmentOffload,
      },
      dkim: signersOf(tenant),
      listUnsubscribe: unsubscribeLines(deps.unsubscribeLinks, message, tenant),
    });
  } catch (error) {
    // The handoff itself broke (a relay thread died): the message is retried.
    result = { built: false, reason: errorText(error), transient: true };
  }
  return attemptOf(deps, message, result);
}

function attemptOf(deps: SendAttemptDeps, message: ClaimedMessage, result: HandoffResult): AttemptResult {
  const decision = decide(result);
  const relayMs = result.built ? (result.reply.transactionMs ?? null) : null;
  const outcome = toOutcome(deps, message, decision);
  // The offloaded attachments' links live once the relay took the message that carries them.
  if (result.built && result.files !== undefined) outcome.files = result.files;
  return { decision, outcome, relayMs };
}

/**
 * The body as the handoff takes it: sealed (opened in the thread that builds or sends it), or in
 * clear from before sealing. One in the body store is read now: a store that does not answer
 * throws (the attempt is retried), one that answers without it fails the message, whose body is lost.
 */
async function bodyOf(
  message: ClaimedMessage,
  deps: Pick<SendAttemptDeps, 'readSpool' | 'readObject'>,
): Promise<BodyBytes | { missing: HandoffResult }> {
  if (message.object !== undefined && message.key !== null && message.key.length > 0) {
    const parts = await deps.readObject(message.object);
    if (parts === null)
      return { missing: { built: false, reason: 'the body is missing from the body store', transient: false } };
    return { sealed: { tenantId: message.tenantId, key: message.key, parts } };
  }
  const { key, parts } =
    message.spoolId === null
      ? { key: message.key, parts: [message.body ?? Buffer.alloc(0)] }
      : deps.readSpool(message.spoolId);
  if (key === null) return { clear: parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts) };
  return { sealed: { tenantId: message.tenantId, key, parts } };
}

export function toOutcome(
  deps: Pick<SendAttemptDeps, 'retry' | 'now' | 'random'>,
  message: ClaimedMessage,
  decision: DeliveryDecision,
): RecordedOutcome {
  const at = deps.now();
  const base = {
    pk: message.pk,
    attempt: message.attempts,
    at,
    ...(message.viaAccountId === undefined ? {} : { via: message.viaAccountId }),
  };
  switch (decision.kind) {
    case 'sent':
      return {
        ...base,
        kind: 'sent',
        replyCode: decision.replyCode,
        enhancedStatus: decision.enhancedStatus,
        text: decision.text,
        refused: decision.refused,
      };
    case 'failed':
      return {
        ...base,
        kind: 'failed',
        replyCode: decision.replyCode,
        enhancedStatus: decision.enhancedStatus,
        reason: decision.reason,
        refused: decision.refused,
      };
    case 'account_problem':
      return {
        ...base,
        kind: 'released',
        replyCode: decision.replyCode,
        enhancedStatus: null,
        reason: `account paused: ${decision.reason}`,
      };
    case 'deferred': {
      const retry = nextRetry(deps.retry, {
        attempts: message.attempts,
        now: at,
        createdAt: message.createdAt,
        hintMs: decision.retryAfterMs,
        random: deps.random(),
      });
      const codes = { replyCode: decision.replyCode, enhancedStatus: decision.enhancedStatus };
      return retry.retry
        ? { ...base, ...codes, kind: 'deferred', nextAttemptAt: retry.at, reason: decision.reason }
        : {
            ...base,
            ...codes,
            kind: 'failed',
            reason: `${retry.reason}; last: ${decision.reason}`,
            refused: [],
            expired: true,
          };
    }
  }
}
