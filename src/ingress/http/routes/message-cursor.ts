/** Where a page of GET /messages ended, as an opaque URL token (base64url JSON) the client passes back unchanged. */
import { AppError } from '../../../core/index.js';
import type { MessageCursor } from '../../../core/message/index.js';

export const encodeCursor = (cursor: MessageCursor): string =>
  Buffer.from(JSON.stringify(cursor)).toString('base64url');

export function decodeCursor(text: string): MessageCursor {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (
      Number.isSafeInteger(value.pk) &&
      (value.nextAttemptAt === undefined || Number.isSafeInteger(value.nextAttemptAt))
    )
      return value as unknown as MessageCursor;
  } catch {
    // reported below
  }
  throw new AppError('VALIDATION_FAILED', 'cursor is not one this API gave out', {
    details: [{ path: 'cursor', message: 'pass back next_cursor unchanged' }],
  });
}
