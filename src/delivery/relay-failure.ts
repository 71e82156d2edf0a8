/**
 * What a nodemailer failure says, as the Relay port's data: the reply code and enhanced
 * status (RFC 5321 §4.2, RFC 3463), the stage the conversation stopped at, the socket's
 * error code. Shared by the pooled relay and the connection test (relay-probe.ts).
 */
import { getSystemErrorName } from 'node:util';
import type { RecipientRefusal, RelayReply, RelayStage } from '../core/delivery/index.js';

/** The fields nodemailer puts on its errors (smtp-connection `_formatError`). */
export interface SmtpFailure {
  message: string;
  code?: string;
  errno?: number;
  responseCode?: number;
  response?: string;
  command?: string;
  /** Set by OpenSSL errors (wrong version number, handshake failure). */
  library?: string;
  recipient?: string;
  rejectedErrors?: SmtpFailure[];
}

// RFC 5321 §4.2: three-digit code; RFC 3463 §2: class.subject.detail after it.
const REPLY_LINE = /^([2-5]\d\d)(?:[ -]+([245]\.\d{1,3}\.\d{1,3})(?!\S))?/;
// Certificate and handshake errors reach us as ESOCKET with Node's own code overwritten.
const TLS_FAILURE = /certificate|\bSSL\b|\bTLS\b|handshake|self[- ]signed/i;
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EDNS',
  'ECONNECTION',
  'ESOCKET',
]);

export function parseReply(text: string): { replyCode: number | null; enhancedStatus: string | null } {
  const match = REPLY_LINE.exec(text.trimStart());
  return { replyCode: match?.[1] ? Number(match[1]) : null, enhancedStatus: match?.[2] ?? null };
}

export function failureReply(failure: SmtpFailure): Extract<RelayReply, { ok: false }> {
  const text = (failure.response ?? failure.message).trim();
  const parsed = parseReply(failure.response ?? '');
  return {
    ok: false,
    stage: stageOf(failure),
    replyCode: failure.responseCode ?? parsed.replyCode,
    enhancedStatus: parsed.enhancedStatus,
    text,
    errorCode: errorCodeOf(failure),
    refused: (failure.rejectedErrors ?? []).map((error) => refusalOf(error.recipient ?? '', error)),
  };
}

/**
 * Where the conversation stopped, from nodemailer's error code, command and
 * message. Message patterns apply only to local failures (no server reply), so
 * a relay's "451 Timeout waiting for data" stays a data-stage answer.
 */
function stageOf(failure: SmtpFailure): RelayStage {
  const code = failure.code ?? '';
  const lowLevel = errorCodeOf(failure) ?? '';
  const local = failure.responseCode === undefined;
  if (code === 'ETIMEDOUT' || lowLevel === 'ETIMEDOUT' || (local && /\btime(?:d ?)?out\b/i.test(failure.message)))
    return 'timeout';
  if (code === 'EAUTH') return 'auth';
  if (code === 'ETLS' || failure.command === 'STARTTLS' || failure.library !== undefined) return 'tls';
  if ((local && TLS_FAILURE.test(failure.message)) || /required STARTTLS/.test(failure.message)) return 'tls';
  if (code === 'EMESSAGE' || failure.command === 'DATA') return 'data';
  if (code === 'EENVELOPE') return 'envelope';
  if (CONNECT_CODES.has(code) || CONNECT_CODES.has(lowLevel)) return 'connect';
  // The pool's own words when a connection or the pool closed under a queued message.
  if (/connection (?:pool )?was closed|closed unexpectedly|unexpected socket close/i.test(failure.message))
    return 'connect';
  return 'protocol';
}

/** The socket's errno name (ECONNREFUSED) when nodemailer wrapped it, else nodemailer's code. */
function errorCodeOf(failure: SmtpFailure): string | null {
  if (typeof failure.errno === 'number' && failure.errno < 0) {
    try {
      return getSystemErrorName(failure.errno);
    } catch {
      // not a system errno: fall through to nodemailer's code
    }
  }
  return failure.code ?? null;
}

export function toSmtpFailure(error: unknown): SmtpFailure {
  if (error instanceof Error) return error as Error & SmtpFailure;
  return { message: String(error) };
}

/** One recipient the relay refused, with its own words. */
export function refusalOf(recipient: string, error: SmtpFailure | undefined): RecipientRefusal {
  const text = (error?.response ?? '').trim();
  return {
    recipient,
    replyCode: error?.responseCode ?? parseReply(text).replyCode,
    enhancedStatus: parseReply(text).enhancedStatus,
    text,
  };
}
