/**
 * The message as the queue sees it: who sends it, through which account, when,
 * in which order, and what it carries. Two state machines (ARCHITECTURE.md §3):
 * our handoff (`HandoffState`) and the provider's later verdict (bounces).
 */
import type { MessageOffload } from './attachment-offload.js';
import type { SealedEnvelope } from './envelope-seal.js';

export const PRIORITY_LABELS = ['immediate', 'high', 'normal', 'low'] as const;
export type PriorityLabel = (typeof PRIORITY_LABELS)[number];
/** 0 immediate, 1 high, 2 normal (default), 3 low. */
export type Priority = 0 | 1 | 2 | 3;

export function toPriority(value: number | PriorityLabel): Priority {
  if (typeof value === 'number') return value as Priority;
  return PRIORITY_LABELS.indexOf(value) as Priority;
}

/** A priority given as text (a header, a query string): 0-3 or a label, any case; undefined when neither. */
export function parsePriority(text: string): Priority | undefined {
  const trimmed = text.trim().toLowerCase();
  if (/^[0-3]$/.test(trimmed)) return Number(trimmed) as Priority;
  const index = (PRIORITY_LABELS as readonly string[]).indexOf(trimmed);
  return index === -1 ? undefined : (index as Priority);
}

export type HandoffState = 'queued' | 'deferred' | 'sending' | 'sent' | 'error';
/** States in which a message may still change before it is handed off. */
export const WAITING_STATES: readonly HandoffState[] = ['queued', 'deferred'];

export type FetchMode = 'base64' | 'http_url' | 'endpoint';

export interface AttachmentSpec {
  filename: string;
  /** base64: the content itself; http_url: the URL; endpoint: the path the client resolves. */
  storagePath: string;
  fetchMode: FetchMode;
  mimeType: string | null;
  /** Hex MD5 of the content, checked after fetching when given. */
  contentMd5: string | null;
}

/** A header's value by case-insensitive name, or null. */
export function headerValue(headers: Readonly<Record<string, string>>, name: string): string | null {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return null;
}

/** What an HTTP submission asks us to build and send (stored as JSON). */
export interface MessagePayload {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string | null;
  returnPath: string | null;
  subject: string;
  body: string | null;
  html: string | null;
  contentType: 'plain' | 'html';
  headers: Record<string, string>;
  attachments: AttachmentSpec[];
  messageId: string | null;
  /** Whether its large attachments go as download links (attachment-offload.ts); absent: as the tenant says. */
  offload?: MessageOffload;
}

/**
 * A message's content as it is stored. `payload`: an HTTP submission's
 * MessagePayload as JSON (serialized at the edge), built into MIME at delivery.
 * `raw`: the RFC 5322 bytes of an SMTP submission, relayed as they are.
 * `spooled`: the same, too large to hold in memory: the store already has its
 * bytes under `spoolId`, written while they arrived.
 */
export type MessageContent =
  | { kind: 'payload'; json: string }
  | { kind: 'raw'; bytes: Uint8Array }
  | { kind: 'spooled'; spoolId: number }
  /**
   * A body sealed where it was read (an HTTP payload in a parser thread, SMTP bytes in a session
   * process; `source` says which, absent for a payload), under a new data key: `key` wrapped,
   * `body` its one part, bound to `tenantId` (the store seals it again if that is not the message's).
   */
  | { kind: 'sealed'; tenantId: string; key: Uint8Array; body: Uint8Array; source?: 'smtp' }
  /**
   * The same, its sealed part written to the body store (BodyObjects) as `object` before the
   * commit: the database keeps the key and the name, not the bytes.
   */
  | { kind: 'stored'; tenantId: string; key: Uint8Array; object: string; source?: 'smtp' };

/** A validated submission, ready to be committed. */
export interface NewMessage {
  tenantId: string;
  /** The client's id: idempotency key per tenant, and the `X-Genro-Mail-ID`. */
  id: string;
  accountId: string;
  priority: Priority;
  batchCode: string | null;
  /** Not before this instant (ms); null = now. */
  deferredUntil: number | null;
  /** What is relayed: the core decides about a message without looking inside it. */
  content: MessageContent;
  subject: string;
  /** The Message-ID the client gave (field or header); the submission fixes one when null. */
  messageId: string | null;
  mailFrom: string;
  rcptTo: string[];
  sizeBytes: number;
  /** Enters suspended: its batch or its tenant is suspended, or the tenant is inactive. */
  suspended: boolean;
  /** The envelope and subject already sealed, by the parser thread that read them; else the store seals them. */
  envelope?: SealedEnvelope | null;
}
