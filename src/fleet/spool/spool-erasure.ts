/**
 * An erased message's entries taken off the cluster at once and for good,
 * rather than left for the watermark: every record holding one of its entries
 * (its latest, earlier ones) is overwritten on the servers (a secure delete,
 * spool-stream.ts), once the entries of waiting messages that the record also
 * holds are written again higher up (as a prune does for long waiters); a large
 * entry's object goes with its record. A purge would not do: the file store
 * keeps a purged message's bytes, and the wrapped keys in them open with the
 * fleet's shared secret.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { SpoolLedger } from '../../core/fleet/index.js';
import type { Logger } from '../../core/index.js';
import type { SpoolChains } from './spool-chains.js';
import type { ErasableRecord, SpoolOwner, SpoolStream } from './spool-stream.js';
import type { SpoolWriter } from './spool-writer.js';

export interface SpoolErasureDeps {
  ledger: Pick<SpoolLedger, 'recordsOf' | 'heldAt' | 'holdForErasure' | 'erased'>;
  chains: Pick<SpoolChains, 'idle' | 'pending'>;
  stream: Pick<SpoolStream, 'recordAt' | 'recordsHolding' | 'eraseRecord'>;
  writer: Pick<SpoolWriter, 'syncFromStore'>;
  owner: () => SpoolOwner;
  /** The cluster's connection; throws when it is not reachable. */
  reachable: () => NatsConnection;
  /** Acts on the store's events noted so far: an erased message's end is under way before its records are looked for. */
  flush: () => void;
  log: Logger;
}

export interface SpoolErasure {
  /** The message was erased (its `message.erased` event, after the commit): its records go. */
  erased(pk: number): void;
  /** Erasures not done yet (the cluster away, a write again that failed), tried again now. */
  retry(): Promise<void>;
  /** Erased messages whose records are not all gone yet. */
  pending(): number;
}

export function createSpoolErasure(deps: SpoolErasureDeps): SpoolErasure {
  const { ledger, chains, stream, writer, log } = deps;
  const due = new Set<number>();
  let running: Promise<void> | null = null;

  /** The records holding these messages' entries: from the ledger, or read off the stream when it cannot tell. */
  const recordsOf = async (nc: NatsConnection, pks: readonly number[]): Promise<ErasableRecord[]> => {
    const { seqs, sure } = ledger.recordsOf(pks);
    ledger.holdForErasure(seqs);
    if (!sure) {
      const found = await stream.recordsHolding(nc, deps.owner(), pks);
      ledger.holdForErasure(found.map((record) => record.seq));
      return found;
    }
    const records: ErasableRecord[] = [];
    for (const seq of seqs) {
      const record = await stream.recordAt(nc, deps.owner(), seq);
      if (record === null) ledger.erased(seq);
      else records.push(record);
    }
    return records;
  };

  /**
   * The record's other entries first: each message whose latest entry it is (or of which none is
   * known) is written again as the store holds it now, or let go if it no longer waits. Only once
   * none of them depends on the record does it go.
   */
  const eraseRecord = async (nc: NatsConnection, record: ErasableRecord): Promise<void> => {
    const inRecord = (pk: number): boolean => ledger.heldAt(pk) === record.seq;
    const live = record.pks.filter((pk) => inRecord(pk) || ledger.heldAt(pk) === undefined);
    if (live.length > 0) await writer.syncFromStore(live);
    const stranded = live.filter((pk) => inRecord(pk) || chains.pending.has(pk));
    if (stranded.length > 0) throw new Error(`${stranded.length} waiting messages' entries could not be written again`);
    await stream.eraseRecord(nc, record);
    ledger.erased(record.seq);
  };

  const eraseNow = async (pks: number[]): Promise<void> => {
    deps.flush();
    // Each message's writes under way land first: none lands after its records are gone.
    await chains.idle(pks);
    const nc = deps.reachable();
    const records = await recordsOf(nc, pks);
    for (const record of records) await eraseRecord(nc, record);
    log.info({ messages: pks.length, records: records.length }, 'erased messages’ spool entries overwritten');
  };

  const drain = async (): Promise<void> => {
    while (due.size > 0) {
      const pks = [...due];
      await eraseNow(pks);
      for (const pk of pks) due.delete(pk);
    }
  };

  const run = (): Promise<void> => {
    running ??= drain()
      .catch((error: unknown) =>
        log.warn({ err: error, erased: due.size }, 'could not erase spool entries yet; retrying'),
      )
      .finally(() => (running = null));
    return running;
  };

  return {
    erased(pk) {
      due.add(pk);
      // After the commit's other events are acted on (the end of the message among them).
      setImmediate(() => void run());
    },
    retry: () => (due.size === 0 ? Promise.resolve() : run()),
    pending: () => due.size,
  };
}
