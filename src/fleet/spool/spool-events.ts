/**
 * The store's events, as the replicated spool sees them: noted inside the
 * event's transaction, acted on after its commit, all of one commit's
 * messages together (one replicated write for a whole batch).
 */
import { REWRITE_EVENTS, type SpoolRows, type SpoolLedger } from '../../core/fleet/index.js';
import type { SpoolChains } from './spool-chains.js';
import type { SpoolWriter } from './spool-writer.js';

/** The most entries one round writes (one record per NATS message's worth). */
const WRITE_PAGE = 1000;

export interface SpoolEvents {
  /** A message's event, inside its transaction: read after the commit. */
  observe(eventType: string, messagePk: number): void;
  /** Acts on the events noted so far: their writes are under way once it returns. */
  flush(): void;
  /** Whether an event of the message waits to be acted on. */
  noted(pk: number): boolean;
}

export function createSpoolEvents(deps: {
  rows: Pick<SpoolRows, 'waitingOf' | 'entriesOf'>;
  ledger: Pick<SpoolLedger, 'holds'>;
  chains: Pick<SpoolChains, 'busy' | 'pending'>;
  writer: Pick<SpoolWriter, 'write' | 'finish'>;
}): SpoolEvents {
  const { rows, ledger, chains, writer } = deps;
  /** Messages whose events were written since the last flush, each with whether its content (or its waiting) is new. */
  const touched = new Map<number, boolean>();

  /**
   * A message no longer waiting lets its entry go; one whose content is new, or that waits anew,
   * or that this node holds no entry for, has it written, together with the rest of the commit's.
   */
  const flush = (): void => {
    if (touched.size === 0) return;
    const batch = [...touched];
    touched.clear();
    const known = (pk: number): boolean => ledger.holds(pk) || chains.busy(pk) || chains.pending.has(pk);
    // Most events change nothing of an entry (a send starting, a deferral): for those, whether the message still waits is
    // asked first, and the row read only when it has no entry yet. A message queued or waiting anew has its row read at once.
    const unchanged = batch.flatMap(([pk, rewrite]) => (rewrite ? [] : [pk]));
    const waiting = rows.waitingOf(unchanged);
    const toRead = batch.flatMap(([pk, rewrite]) => (rewrite || (waiting.has(pk) && !known(pk)) ? [pk] : []));
    for (const pk of unchanged) if (!waiting.has(pk) && known(pk)) void writer.finish(pk).catch(() => undefined);
    const writes: Array<readonly [number, Uint8Array]> = [];
    for (const [pk, entry] of rows.entriesOf(toRead)) {
      if (entry !== null) writes.push([pk, entry]);
      else if (known(pk)) void writer.finish(pk).catch(() => undefined);
    }
    for (let at = 0; at < writes.length; at += WRITE_PAGE)
      void writer.write(writes.slice(at, at + WRITE_PAGE)).catch(() => undefined);
  };

  return {
    observe(eventType, messagePk) {
      if (touched.size === 0) setImmediate(flush);
      touched.set(messagePk, (touched.get(messagePk) ?? false) || REWRITE_EVENTS.has(eventType));
    },
    flush,
    noted: (pk) => touched.has(pk),
  };
}
