/**
 * DATA's durable accept: the message is read (its control headers decided, an
 * account they name checked), enqueued, and answered only once committed. A
 * refusal is thrown as an SmtpReply; what was spooled for a refused message is discarded.
 */
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { Rejection } from '../../core/message/index.js';
import { accountProblem } from './account-checks.js';
import type { SmtpIdentity } from './identity.js';
import { discard, receiveMessage, type DataStream, type Received } from './message-receiver.js';
import type { ReceivedHeader } from './received-header.js';
import { acceptedTexts, replies, SmtpReply } from './replies.js';
import type { SmtpSessionDeps } from './session-deps.js';
import type { AccountsAtMail } from './session-envelope.js';
import { decideHeaders, type SubmissionHeaders } from './submission-headers.js';

/** A message up to this size is held in memory; a larger one goes to the spool in parts of this size. */
export const IN_MEMORY_BYTES = 512 * 1024;

/** Reads, commits and answers one DATA: resolves with the 250 text, rejects with an SmtpReply or a failure. */
export type DataAcceptance = (
  stream: SMTPServerDataStream,
  session: SMTPServerSession,
  identity: SmtpIdentity,
) => Promise<string>;

export function createDataAcceptance(
  deps: Pick<SmtpSessionDeps, 'submissions' | 'spool' | 'clock' | 'ids' | 'log' | 'policy' | 'intake'>,
  accountsAtMail: AccountsAtMail,
  received: ReceivedHeader,
): DataAcceptance {
  const { policy, log } = deps;
  return async (stream, session, identity) => {
    const now = deps.clock.now();
    const mailFrom = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
    let headers: SubmissionHeaders | null = null;
    // The header fields, for routing rules that read one (held only until the message is admitted).
    let fieldsRead: ReadonlyArray<{ name: string; value: string }> = [];
    const outcome = await receiveMessage(
      stream as DataStream,
      (fields) => {
        const decided = decideHeaders(fields, {
          newId: deps.ids.uuid,
          now,
          mailFrom,
          received: policy.addReceivedHeader ? received(session) : null,
        });
        if (decided instanceof SmtpReply) return decided;
        // An account named in the header is checked before the message is stored, against
        // the tenant's accounts as MAIL FROM read them (when it read them: see
        // reuseMailCheckMs); the user's was checked at MAIL, and the submission itself checks again in its
        // transaction (a default account, an account deleted meanwhile).
        const accounts = accountsAtMail.get(session.envelope);
        const problem =
          decided.accountId === null || decided.accountId === identity.accountId || accounts === undefined
            ? null
            : accountProblem(accounts, decided.accountId);
        if (problem !== null) return problem;
        headers = decided;
        fieldsRead = fields;
        return decided;
      },
      {
        spool: deps.spool,
        tenantId: identity.tenantId,
        now: deps.clock.now,
        maxHeaderBytes: policy.maxHeaderBytes,
        maxMessageBytes: policy.maxMessageBytes,
        memoryBytes: IN_MEMORY_BYTES,
        onStoreError: (error) => log.error({ err: error, session: session.id }, 'spooling a message failed'),
      },
    );
    if (!outcome.ok) throw outcome.reply;
    // From the final dot: the client's upload of the data is not ours.
    const receivedAt = performance.now();
    const head = headers as SubmissionHeaders | null;
    if (head === null) throw new Error('the header was accepted but not recorded');
    const spoolId = outcome.content.kind === 'spooled' ? outcome.content.spoolId : null;
    const rcptTo = session.envelope.rcptTo.map((address) => address.address);
    const accountId = head.accountId ?? identity.accountId;
    let result;
    try {
      const submission = {
        ...submissionOf(identity, head, { accountId, mailFrom, rcptTo, received: outcome }),
        ...(accountId === null ? { headers: fieldsRead } : {}),
      };
      result = await deps.submissions.enqueue(
        { kind: 'tenant', tenantId: identity.tenantId },
        [submission],
        undefined,
        `smtp:${session.id}`,
      );
      deps.intake?.submitted('smtp', performance.now() - receivedAt);
    } catch (error) {
      discard(deps.spool, spoolId);
      throw error;
    }
    const rejection = result.rejected[0];
    if (rejection === undefined) return acceptedTexts.queued(head.id);
    discard(deps.spool, spoolId);
    // A repeated X-Genro-Mail-ID of a message already on its way is a client retrying
    // after a lost reply: it was accepted once, and is not sent twice.
    if (rejection.code === 'ALREADY_SENT') return acceptedTexts.alreadyAccepted(head.id);
    throw replyFor(rejection, accountId);
  };
}

/** The enqueue request for one SMTP message: its envelope, its control headers and what was received. */
function submissionOf(
  identity: SmtpIdentity,
  head: SubmissionHeaders,
  message: { accountId: string | null; mailFrom: string; rcptTo: string[]; received: Extract<Received, { ok: true }> },
) {
  const { accountId, received } = message;
  return {
    index: 0,
    id: head.id,
    tenantId: identity.tenantId,
    ...(accountId === null ? {} : { accountId }),
    ...(head.priority === null ? {} : { priority: head.priority }),
    message: {
      id: head.id,
      batchCode: head.batchCode,
      deferredUntil: head.deferredUntil,
      content: received.content,
      subject: head.subject,
      messageId: head.messageId,
      mailFrom: message.mailFrom,
      rcptTo: message.rcptTo,
      sizeBytes: received.sizeBytes,
    },
  };
}

/** The reply to a message the submission refused (ALREADY_SENT is an acceptance, answered by the caller). */
function replyFor(rejection: Rejection, accountId: string | null): SmtpReply {
  switch (rejection.code) {
    case 'SUPPRESSED':
      return replies.suppressed();
    case 'UNKNOWN_ACCOUNT':
    case 'UNKNOWN_TENANT':
      return replies.accountNotOwned(accountId ?? '(default)');
    case 'NO_DEFAULT_ACCOUNT':
      return replies.noAccount();
    default:
      return replies.refused(rejection.reason);
  }
}
