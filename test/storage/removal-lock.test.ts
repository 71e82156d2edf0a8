/**
 * The body store's removal loop, with nothing to remove, expire, sweep or forget, leaves the
 * writer's lock alone: a backup or an operator's CLI may hold it a while, and a write the loop did
 * not need would wait on the main thread for the busy timeout, then fail. Every question of a run
 * is asked with a read first, so another connection holding the lock neither fails a run nor holds it up.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';

describe('the removal loop while another connection holds the writer’s lock', () => {
  let fx: QueueFixture;
  beforeAll(async () => {
    fx = await startQueueFixture();
  });
  afterAll(async () => {
    await fx?.stop();
    fx?.t.cleanup();
  });

  it('runs through, its hourly sweep included, without asking for the lock', async () => {
    const loop = fx.t.daemon.bodyRemoval;
    expect(loop).not.toBeNull();
    await loop?.tick();
    const holder = new Database(join(fx.t.dataDir, 'mailproxy.db'));
    holder.pragma('busy_timeout = 0');
    holder.prepare('BEGIN IMMEDIATE').run();
    try {
      // Past the next hourly sweep: a run that removes, expires, sweeps and forgets nothing.
      fx.clock.advance(2 * 3_600_000);
      await loop?.tick();
    } finally {
      holder.prepare('ROLLBACK').run();
      holder.close();
    }
    expect(fx.t.logLines.filter((line) => line.includes('"loop step failed"'))).toEqual([]);
  });
});
