/**
 * What the daemon and its SMTP session processes say to each other over the
 * IPC channel (`serialization: 'advanced'`, so Buffers cross as Buffers). A
 * session process asks (answered by id) and tells (no answer); what one side
 * says in one turn leaves as one message, since each message wakes the other
 * process. Listening sockets and connections travel alone, as a message's handle.
 */
import type { AccountChoice } from '../../core/account/index.js';
import { AppError, type SmtpListener } from '../../core/index.js';
import type { PriorityLabel, SubmissionItem, SubmissionResult } from '../../core/message/index.js';
import type { Principal } from '../../core/tenant/index.js';
import type { LogRecord } from '../../runtime/index.js';
import type { SealingMaterial } from '../../security/index.js';
import type { SmtpIngressOptions } from './server.js';
import { SmtpReply } from './replies.js';
import type { SmtpPolicy } from './session-deps.js';

/** Questions to the daemon, whose store decides them. */
export type Ask =
  | { op: 'admit'; client: string }
  | { op: 'auth'; password: string; client: string; tenantId: string | null }
  | { op: 'accounts'; tenantId: string }
  | { op: 'suppressed'; tenantId: string; addresses: readonly string[]; now: number }
  | {
      op: 'enqueue';
      principal: Principal;
      items: readonly SubmissionItem[];
      priority: number | PriorityLabel | undefined;
      correlationId: string | null;
    };

/** What each question is answered with. */
export interface Answers {
  admit: WireReply | null;
  auth: null;
  accounts: readonly AccountChoice[] | null;
  suppressed: readonly string[];
  enqueue: SubmissionResult;
}

/**
 * News for the daemon. A spool is named by the session process's own number;
 * the daemon keeps the store's spool under it until the message takes it or
 * it is discarded.
 */
export type Tell =
  | { op: 'release'; client: string }
  | { op: 'spool-open'; spool: number; now: number; tenantId: string }
  | { op: 'spool-append'; spool: number; seq: number; bytes: Uint8Array }
  | { op: 'spool-discard'; spool: number }
  | { op: 'connected'; listener: SmtpListener }
  | { op: 'rejected'; code: number; status: string }
  | { op: 'submitted'; elapsedMs: number }
  | { op: 'listening'; listener: SmtpListener }
  | { op: 'tls-reloaded'; ok: boolean }
  | { op: 'closed' }
  | LogRecord;

export type FromSession = Array<{ id: number; ask: Ask } | { tell: Tell }>;

/** What a session process needs to run its listeners (the ports are its questions). */
export type SessionSettings = Pick<SmtpIngressOptions, 'tls' | 'maxConnections' | 'commandTimeoutMs'> & {
  policy: SmtpPolicy;
  logLevel: string;
  index: number;
  /**
   * The keys a process seals what it receives with, as a parser thread does for HTTP (absent: the
   * daemon seals it). A session process runs as the daemon's user, who can read the data
   * directory's secret key anyway: it holds nothing the daemon's threads do not.
   */
  sealing?: SealingMaterial;
};

export type ToSession =
  | { t: 'start'; settings: SessionSettings }
  /** With the listening socket as its handle. */
  | { t: 'listen'; listener: SmtpListener }
  /** With a connection the daemon took itself (it shares the listening socket) as its handle. */
  | { t: 'socket'; listener: SmtpListener }
  | { t: 'answers'; answers: WireAnswer[]; draining: boolean }
  | { t: 'close'; deadlineMs: number }
  | { t: 'reload-tls' };

export type WireAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };

/** An error as it crosses: an AppError keeps its code and details, anything else its message. */
export interface WireError {
  message: string;
  code?: string;
  details?: unknown;
  transient?: boolean;
}

export function toWire(error: unknown): WireError {
  if (error instanceof AppError)
    return { message: error.message, code: error.code, details: error.details, transient: error.transient };
  return { message: error instanceof Error ? error.message : String(error) };
}

export function fromWire(error: WireError): Error {
  if (error.code === undefined) return new Error(error.message);
  return new AppError(error.code as never, error.message, {
    details: error.details as Record<string, unknown> | undefined,
    transient: error.transient ?? false,
  });
}

/** An SMTP reply as it crosses (an SmtpReply is an Error, which does not keep its fields). */
export interface WireReply {
  code: number;
  status: string;
  text: string;
}

export const replyToWire = (reply: SmtpReply | null): WireReply | null =>
  reply === null ? null : { code: reply.responseCode, status: reply.status, text: reply.text };

export const replyFromWire = (reply: WireReply | null): SmtpReply | null =>
  reply === null ? null : new SmtpReply(reply.code, reply.status, reply.text);
