/** The real clock and id source, for the composition root. */
import { randomUUID } from 'node:crypto';
import type { Clock, IdSource } from '../core/index.js';

export const systemClock: Clock = { now: () => Date.now() };

/**
 * UUIDv7 (RFC 9562 §5.7): 48 bits of milliseconds, then random bits. Ids made
 * later sort later, so the indexes they key (outbox, audit) grow at their end
 * instead of splitting pages at random places.
 */
export function uuidv7(now: number = Date.now()): string {
  // randomUUID draws from a cached entropy pool; randomBytes(16) per id cost a
  // syscall each, a visible share of HTTP intake in a profile. Its v4 layout already has the
  // RFC variant bits; we overwrite the time field and the version nibble.
  const random = randomUUID();
  return `${timeField(now)}-7${random.slice(15)}`;
}

/** `tttttttt-tttt` of a millisecond, kept while ids are made within the same one. */
let lastTime = { ms: -1, text: '' };
function timeField(ms: number): string {
  if (ms !== lastTime.ms) {
    const hex = ms.toString(16).padStart(12, '0');
    lastTime = { ms, text: `${hex.slice(0, 8)}-${hex.slice(8, 12)}` };
  }
  return lastTime.text;
}

export const randomIds: IdSource = { uuid: () => uuidv7() };
