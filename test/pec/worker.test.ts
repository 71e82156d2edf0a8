/**
 * The PEC parser's worker-thread entry (src/pec/pec-parser.thread.ts, compiled)
 * under the daemon's own worker pool: a receipt's bytes in, its findings out,
 * as plain data across the thread boundary.
 */
import { describe, expect, it } from 'vitest';
import type { PecReceiptFindings } from '../../src/core/pec/pec.js';
import { createLogger } from '../../src/runtime/logger.js';
import { createWorkerPool, workerScript } from '../../src/runtime/worker-pool.js';
import { assertBuiltFromCurrentSources } from '../helpers/built-parser.js';
import { buildEnvelope, buildReceipt } from './receipt-fixtures.js';

describe('the PEC parser worker', () => {
  it("answers a receipt's findings and an envelope's none from its own thread", async () => {
    assertBuiltFromCurrentSources();
    const script = workerScript(new URL('../../src/pec/pec-parser.thread.js', import.meta.url));
    const pool = createWorkerPool<Uint8Array, PecReceiptFindings>({
      script,
      size: 1,
      name: 'pec-parser',
      log: createLogger({ level: 'silent' }),
    });
    try {
      const receipt = await pool.run(buildReceipt({ type: 'avvenuta-consegna', mailId: 'genro-9' }));
      expect(receipt).toMatchObject({
        type: 'avvenuta-consegna',
        recognisedBy: 'header',
        mailId: 'genro-9',
        referencedMessageId: '<fattura-2024-001@acme.example>',
      });
      expect((await pool.run(buildEnvelope())).type).toBeNull();
    } finally {
      await pool.close();
    }
  });
});
