/**
 * The fleet cursor as an opaque URL token (base64url JSON), checked field by
 * field when it comes back: a cursor this API did not give out is a 400.
 */
import { AppError } from '../../core/index.js';
import type { FleetCursor, NodePosition } from '../../core/fleet/index.js';

export const encodeFleetCursor = (cursor: FleetCursor): string =>
  Buffer.from(JSON.stringify(cursor)).toString('base64url');

const isInt = (value: unknown): boolean => Number.isSafeInteger(value);

function isPosition(value: unknown): value is NodePosition {
  if (value === 'done') return true;
  if (typeof value !== 'object' || value === null) return false;
  const { after, skip } = value as Record<string, unknown>;
  if (!isInt(skip) || (skip as number) < 0) return false;
  if (after === null) return true;
  if (typeof after !== 'object' || after === undefined) return false;
  const { pk, nextAttemptAt } = after as Record<string, unknown>;
  return isInt(pk) && (nextAttemptAt === undefined || isInt(nextAttemptAt));
}

export function decodeFleetCursor(text: string, order: FleetCursor['order']): FleetCursor {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;
    const nodes = value.nodes as Record<string, unknown>;
    if (
      value.order === order &&
      typeof nodes === 'object' &&
      nodes !== null &&
      !Array.isArray(nodes) &&
      Object.values(nodes).every(isPosition)
    )
      return value as unknown as FleetCursor;
  } catch {
    // reported below
  }
  throw new AppError('VALIDATION_FAILED', 'cursor is not one this API gave out', {
    details: [{ path: 'cursor', message: 'pass back next_cursor unchanged, with the same sort' }],
  });
}
