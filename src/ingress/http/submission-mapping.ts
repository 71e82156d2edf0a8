/** /add-messages items -> core submission items: shape errors become per-message rejections. */
import { randomUUID } from 'node:crypto';
import { parseMailbox } from '../../core/index.js';
import {
  headerValue,
  type MessageOffload,
  type MessagePayload,
  type SubmissionItem,
} from '../../core/message/index.js';
import { fieldProblems } from './request-input.js';
import { messageItem, type MessageItem } from './message-schemas.js';
import { ILL_FORMED, illFormedPath } from './well-formed.js';

export interface SubmissionLimits {
  maxMessageBytes: number;
  maxRecipients: number;
}

const bare = (text: string): string => parseMailbox(text)?.address ?? text;
const domainOf = (from: string): string => {
  const address = bare(from);
  return address.slice(address.lastIndexOf('@') + 1) || 'mailproxy.invalid';
};

function payloadOf(item: MessageItem): MessagePayload {
  // The Message-ID may come as the field or as a header; the field wins. Without
  // either, it is fixed now, as SMTP intake does: it is stored with the message,
  // and a bounce that quotes only the original's Message-ID still finds it.
  const messageId =
    item.message_id ?? headerValue(item.headers ?? {}, 'message-id') ?? `${randomUUID()}@${domainOf(item.from)}`;
  return {
    from: item.from,
    to: item.to ?? [],
    cc: item.cc ?? [],
    bcc: item.bcc ?? [],
    replyTo: item.reply_to ?? null,
    returnPath: item.return_path ?? null,
    subject: item.subject,
    body: item.body ?? null,
    html: item.html ?? null,
    contentType: item.content_type,
    headers: item.headers ?? {},
    attachments: (item.attachments ?? []).map((attachment) => ({
      filename: attachment.filename,
      storagePath: attachment.storage_path,
      fetchMode: attachment.fetch_mode,
      mimeType: attachment.mime_type ?? null,
      contentMd5: attachment.content_md5 ?? null,
    })),
    messageId: messageId === null || messageId.startsWith('<') ? messageId : `<${messageId}>`,
    ...offloadOf(item),
  };
}

/** The message's own offload choice, kept in the payload only when it makes one. */
function offloadOf(item: MessageItem): Pick<MessagePayload, 'offload'> {
  const offload: MessageOffload = {
    ...(item.offload_attachments_over_bytes === undefined ? {} : { overBytes: item.offload_attachments_over_bytes }),
    ...(item.attachment_link_lifetime_seconds === undefined
      ? {}
      : { linkLifetimeSeconds: item.attachment_link_lifetime_seconds }),
    ...(item.relay_whole === undefined ? {} : { relayWhole: item.relay_whole }),
  };
  return Object.keys(offload).length === 0 ? {} : { offload };
}

/** Bytes the message will take at least: bodies, headers and inline (base64) attachments. */
function estimatedSize(payload: MessagePayload): number {
  let size =
    Buffer.byteLength(payload.body ?? '') + Buffer.byteLength(payload.html ?? '') + Buffer.byteLength(payload.subject);
  for (const value of Object.values(payload.headers)) size += Buffer.byteLength(value);
  for (const attachment of payload.attachments)
    if (attachment.fetchMode === 'base64') size += Math.floor((attachment.storagePath.length * 3) / 4);
  return size;
}

function uniqueRecipients(payload: MessagePayload): string[] {
  const seen = new Map<string, string>();
  for (const text of [...payload.to, ...payload.cc, ...payload.bcc]) {
    const address = bare(text);
    if (!seen.has(address.toLowerCase())) seen.set(address.toLowerCase(), address);
  }
  return [...seen.values()];
}

export function toSubmissionItem(raw: unknown, index: number, limits: SubmissionLimits): SubmissionItem {
  const id =
    typeof raw === 'object' && raw !== null && typeof (raw as { id?: unknown }).id === 'string'
      ? (raw as { id: string }).id
      : null;
  const illFormed = illFormedPath(raw);
  if (illFormed !== null) return { index, id, problem: illFormed === '' ? ILL_FORMED : `${illFormed}: ${ILL_FORMED}` };
  const parsed = messageItem.safeParse(raw);
  if (!parsed.success) {
    return {
      index,
      id,
      problem: fieldProblems(parsed.error)
        .map((problem) => (problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`))
        .join('; '),
    };
  }
  const item = parsed.data;
  const payload = payloadOf(item);
  const rcptTo = uniqueRecipients(payload);
  if (rcptTo.length > limits.maxRecipients)
    return { index, id, problem: `too many recipients (${rcptTo.length}, at most ${limits.maxRecipients})` };
  const sizeBytes = estimatedSize(payload);
  if (sizeBytes > limits.maxMessageBytes)
    return { index, id, problem: `message too large (${sizeBytes} bytes, at most ${limits.maxMessageBytes})` };
  return {
    index,
    id: item.id,
    tenantId: item.tenant_id,
    accountId: item.account_id,
    priority: item.priority,
    // For routing rules that read a header (a message naming its account is not routed).
    ...(item.account_id === undefined && item.headers !== undefined && Object.keys(item.headers).length > 0
      ? { headers: Object.entries(item.headers).map(([name, value]) => ({ name, value })) }
      : {}),
    message: {
      id: item.id,
      batchCode: item.batch_code ?? null,
      deferredUntil:
        item.deferred_ts === undefined || item.deferred_ts === null ? null : Math.round(item.deferred_ts * 1000),
      content: { kind: 'payload', json: JSON.stringify(payload) },
      subject: payload.subject,
      messageId: payload.messageId,
      mailFrom: bare(payload.returnPath ?? payload.from),
      rcptTo,
      sizeBytes,
    },
  };
}
