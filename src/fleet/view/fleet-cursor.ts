/**
 * The fleet cursor as an opaque URL token (base64url of its JSON, written and
 * read through the wire codec), checked field by field when it comes back: a
 * cursor this API did not give out is a 400.
 */
import { AppError } from '../../core/index.js';
import type { FleetCursor } from '../../core/fleet/index.js';
import { fleetCursorCodec } from './view-wire-schemas.js';

export const encodeFleetCursor = (cursor: FleetCursor): string =>
  Buffer.from(fleetCursorCodec.encode(cursor)).toString('base64url');

export function decodeFleetCursor(text: string, order: FleetCursor['order']): FleetCursor {
  const read = fleetCursorCodec.read(Buffer.from(text, 'base64url'));
  if (read.ok && read.value.order === order) return read.value;
  throw new AppError('VALIDATION_FAILED', 'cursor is not one this API gave out', {
    details: [{ path: 'cursor', message: 'pass back next_cursor unchanged, with the same sort' }],
  });
}
