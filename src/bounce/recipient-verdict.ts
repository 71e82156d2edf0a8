/**
 * One failed recipient's verdict from what the report or the prose gave:
 * the most precise enhanced status and reply code, why, and hard or soft
 * (core/bounce/classify.ts judges; this only gathers the texts).
 */
import { bounceTypeOf, findCodes, findStatus, reasonIn } from '../core/bounce/index.js';
import { isMailbox } from './addresses.js';
import type { RecipientVerdict } from './bounce-analysis.js';
import type { DsnRecipientFields } from './dsn-fields.js';

/**
 * The report's Status field, or the diagnostic's own status when it is of the
 * same class: the remote server's words (5.7.1) are more precise than a
 * reporting MTA's summary (5.0.0) or its queue's (4.4.7 "expired").
 */
function preciseStatus(given: string | null, fromDiagnostic: string | null): string | null {
  if (given === null) return fromDiagnostic;
  if (fromDiagnostic === null || fromDiagnostic[0] !== given[0]) return given;
  return fromDiagnostic;
}

/**
 * `context` are further texts about this recipient (the prose around its
 * address, then the whole prose), read for the reason and for permanence
 * after the diagnostic; `transcript` is the SMTP session the prose quotes,
 * read for the phase of the refusal only.
 */
export function verdictOf(
  fields: DsnRecipientFields & { replyCode?: string | null },
  context: string[] = [],
  transcript = '',
): RecipientVerdict {
  const text = fields.diagnostic ?? '';
  const codes = findCodes(text);
  const status = preciseStatus(fields.status === null ? null : findStatus(fields.status), codes.status);
  const replyCode = fields.replyCode ?? codes.replyCode;
  const reason = reasonIn({
    status,
    replyCode,
    primary: codes.remoteWords,
    texts: [text, ...context],
    transcript,
    action: fields.action,
  });
  const bounceType = bounceTypeOf({
    action: fields.action,
    status,
    replyCode,
    reason,
    text: [text, ...context].join('\n'),
  });
  return {
    recipient: fields.recipient !== null && isMailbox(fields.recipient) ? fields.recipient : null,
    alternates: fields.alternates ?? [],
    action: fields.action,
    status,
    replyCode,
    diagnostic: fields.diagnostic,
    remoteMta: fields.remoteMta,
    bounceType,
    reason,
  };
}
