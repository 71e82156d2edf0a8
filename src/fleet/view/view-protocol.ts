/**
 * The wire of the fleet's one view: NATS request/reply addressed to one node,
 * JSON both ways. The subjects sit outside the event stream's `mailproxy.>`
 * (a request there would be stored by JetStream and answered with its PubAck).
 * Errors cross as plain data (code, message, details) and become AppErrors again.
 */
import { AppError } from '../../core/index.js';

export const VIEW_PREFIX = 'mailproxy-fleet-view';

export type ViewKind = 'page' | 'detail' | 'command' | 'queue' | 'provider' | 'file' | 'file-downloaded';

export const viewSubject = (nodeId: string, kind: ViewKind): string => `${VIEW_PREFIX}.${nodeId}.${kind}`;

/** A node's answer: the use-case's value, or its AppError as data. */
export type ViewReply = { ok: unknown } | { error: { code: string; message: string; details?: unknown } };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encode = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));
export const decode = (data: Uint8Array): unknown => JSON.parse(decoder.decode(data));

/** An AppError crosses as data; anything else as INTERNAL, saying nothing of the node's insides. */
function errorReply(error: unknown): ViewReply {
  if (error instanceof AppError) return { error: { code: error.code, message: error.message, details: error.details } };
  return { error: { code: 'INTERNAL', message: 'the node could not answer' } };
}

export function replyOf(run: () => unknown): ViewReply {
  try {
    return { ok: run() };
  } catch (error) {
    return errorReply(error);
  }
}

/** replyOf for a use-case that answers later. */
export async function replyOfAsync(run: () => Promise<unknown>): Promise<ViewReply> {
  try {
    return { ok: await run() };
  } catch (error) {
    return errorReply(error);
  }
}

/** The value of a reply, or its error thrown again as an AppError. */
export function valueOf(reply: ViewReply): unknown {
  if ('ok' in reply) return reply.ok;
  throw new AppError<string>(reply.error.code, reply.error.message, {
    details: reply.error.details as Record<string, unknown> | undefined,
  });
}
