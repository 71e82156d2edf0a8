/**
 * Worker-thread entry (started from pec-service.ts): the PEC receipt
 * parser, off the main thread. A message the parser cannot finish in time is
 * abandoned with its worker (worker-pool.ts timeoutMs); the daemon's event
 * loop never waits on it.
 */
import type { PecReceiptFindings } from '../core/pec/index.js';
import { analysePecReceipt } from './pec-receipt-parser.js';
import { serveTasks } from '../runtime/index.js';

serveTasks<Uint8Array, PecReceiptFindings>((raw) =>
  analysePecReceipt(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)),
);
