/**
 * Retention: what the store forgets once it has served its purpose. The bodies of
 * final, reported messages after `body_retention_seconds` (their data keys destroyed:
 * minimisation, issue 45), reported messages and their events after `report_retention_seconds`, published admin
 * events and processed commands after `outbox_retention_seconds`, handled bounce
 * records and applied provider events, PEC receipts when the operator set a limit, and SMTP spools that no
 * message took (a transfer abandoned without a trace). The sealed bytes of shredded bodies are removed here too.
 */
import type { Logger } from '../core/index.js';
import { SHRED_BATCH } from './body-retention.js';
import type { SqliteStore } from './sqlite-store.js';

export interface RetentionSettings {
  intervalMs: number;
  reportedMessagesMs: number;
  /** Null: bodies are kept as long as their messages (`body_retention_seconds = 0`). */
  bodyMs: number | null;
  adminEventsMs: number;
  /** Null: PEC receipts are kept until their tenant is deleted. */
  pecReceiptsMs: number | null;
  abandonedSpoolMs: number;
}

/** Runs `step` batch after batch, yielding between them so that intake and delivery go on meanwhile. */
async function inBatches(step: () => number): Promise<number> {
  let done = 0;
  for (let count = step(); count > 0; count = step()) {
    done += count;
    if (count < SHRED_BATCH) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return done;
}

export async function runRetention(
  store: SqliteStore,
  settings: RetentionSettings,
  now: number,
  log: Logger,
): Promise<void> {
  const removed = store.messages.removeReported(null, now - settings.reportedMessagesMs);
  if (removed > 0) log.info({ removed }, 'retention removed reported messages');
  const { bodyMs } = settings;
  if (bodyMs !== null) {
    const shredded = await inBatches(() => store.messages.shredBodies(now - bodyMs, now));
    if (shredded > 0) log.info({ shredded }, 'retention shredded the bodies of reported messages');
  }
  // The sealed bytes of bodies shredded by now (here, or by an erasure): unreadable already, and gone now.
  await inBatches(() => store.messages.removeShreddedBodies());
  store.mirror.pruneAdminEvents(now - settings.adminEventsMs);
  store.inbox.prune(now - settings.adminEventsMs);
  store.bounceLedger.prune(now - settings.reportedMessagesMs);
  // Provider events are remembered to apply a redelivered one once; providers redeliver for hours, not for a week.
  store.providerLedger.prune(now - settings.reportedMessagesMs);
  if (settings.pecReceiptsMs !== null) store.pecReceipts.prune(now - settings.pecReceiptsMs);
  const spools = store.spool.sweep(now - settings.abandonedSpoolMs);
  if (spools > 0) log.warn({ spools }, 'retention removed abandoned smtp spools');
}
