/** The real clock and id source, for the composition root. */
import { randomUUID } from 'node:crypto';
import type { Clock, IdSource } from '../core/clock.js';

export const systemClock: Clock = { now: () => Date.now() };
export const randomIds: IdSource = { uuid: () => randomUUID() };
