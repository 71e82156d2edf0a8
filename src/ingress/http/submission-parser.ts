/**
 * An /add-messages body -> submission items, as a pure function of its bytes:
 * JSON parsing, the request's shape, the batch cap and each message's own
 * validation. It runs in a worker thread (submission-parser.thread.ts), so its
 * result is plain data and a refusal is an error as data, not a thrown AppError.
 */
import { AppError, type ErrorDetails, errorText } from '../../core/index.js';
import {
  sealedWhereRead,
  type PriorityLabel,
  type SealingKeys,
  type SubmissionItem,
} from '../../core/message/index.js';
import type { HttpErrorCode } from './http-error.js';
import { addMessagesBody } from './message-schemas.js';
import { fieldProblems } from './request-input.js';
import { toSubmissionItem, type SubmissionLimits } from './submission-mapping.js';

export interface ParserLimits extends SubmissionLimits {
  maxBatchMessages: number;
}

export interface ParsedSubmission {
  items: SubmissionItem[];
  defaultPriority: number | PriorityLabel | undefined;
}

export type ParseOutcome =
  | { ok: true; submission: ParsedSubmission }
  | { ok: false; error: { code: HttpErrorCode; message: string; details: ErrorDetails } };

const refuse = (code: HttpErrorCode, message: string, details: ErrorDetails): ParseOutcome => ({
  ok: false,
  error: { code, message, details },
});

const decoder = new TextDecoder('utf-8', { fatal: true });

export function parseSubmission(body: Uint8Array, limits: ParserLimits): ParseOutcome {
  let json: unknown;
  try {
    const text = decoder.decode(body);
    json = text.trim() === '' ? {} : (JSON.parse(text) as unknown);
  } catch (error) {
    return refuse('INVALID_JSON', 'the body is not valid JSON', { reason: errorText(error) });
  }
  const parsed = addMessagesBody.safeParse(json);
  if (!parsed.success) return refuse('VALIDATION_FAILED', 'invalid request body', fieldProblems(parsed.error));
  const { messages, default_priority: defaultPriority } = parsed.data;
  if (messages.length > limits.maxBatchMessages) {
    return refuse(
      'VALIDATION_FAILED',
      `too many messages in one request (${messages.length}, at most ${limits.maxBatchMessages})`,
      [{ path: 'messages', message: `at most ${limits.maxBatchMessages} messages` }],
    );
  }
  return {
    ok: true,
    submission: { items: messages.map((raw, index) => toSubmissionItem(raw, index, limits)), defaultPriority },
  };
}

/**
 * Seals each valid message's payload under a new data key of its tenant (the item's, else
 * `tenantHint`, the tenant of the key that sent the request), and its envelope and subject under
 * another with their search terms, as a parser thread does: the main thread, which owns SQLite and
 * limits intake, then stores the sealed bytes without a cipher of its own. An item with no tenant
 * yet is left for the store to seal (admission refuses it anyway).
 */
export function sealPayloads(outcome: ParseOutcome, keys: SealingKeys, tenantHint: string | null): ParseOutcome {
  if (!outcome.ok) return outcome;
  const items = outcome.submission.items.map((item): SubmissionItem => {
    const tenantId = item.tenantId ?? tenantHint;
    const message = item.message;
    if (message === undefined || message.content.kind !== 'payload' || tenantId === null) return item;
    return {
      ...item,
      message: sealedWhereRead(message, tenantId, keys, Buffer.from(message.content.json, 'utf8'), 'http'),
    };
  });
  return { ok: true, submission: { ...outcome.submission, items } };
}

/** Parses a body where the caller chose to: on this thread or in a worker pool. */
export type SubmissionParser = (body: ArrayBuffer, tenantHint?: string | null) => Promise<ParsedSubmission>;

export function unwrap(outcome: ParseOutcome): ParsedSubmission {
  if (outcome.ok) return outcome.submission;
  throw new AppError<HttpErrorCode>(outcome.error.code, outcome.error.message, { details: outcome.error.details });
}

export function inlineSubmissionParser(limits: ParserLimits): SubmissionParser {
  return (body) => Promise.resolve(unwrap(parseSubmission(new Uint8Array(body), limits)));
}
