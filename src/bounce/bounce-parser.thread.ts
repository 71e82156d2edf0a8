/**
 * Worker-thread entry (started from bounce-service.ts): the bounce parser,
 * off the main thread. A message the parser cannot finish in time is
 * abandoned with its worker (worker-pool.ts timeoutMs); the daemon's event
 * loop never waits on it.
 */
import { analyseBounce, type BounceAnalysis } from './bounce-parser.js';
import { serveTasks } from '../runtime/index.js';

serveTasks<Uint8Array, BounceAnalysis>((raw) => analyseBounce(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)));
