/**
 * The replicated spool's writes, each in its messages' chains: entries
 * written together (the ledger learns the sequences the cluster answered),
 * a finished message's entry let go, each message synced with what the store
 * holds now, and the ends of finished messages recorded.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { SpoolRows, SpoolLedger } from '../../core/fleet/index.js';
import type { SpoolChains } from './spool-chains.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';

export interface SpoolWriterDeps {
  ledger: SpoolLedger;
  chains: SpoolChains;
  stream: Pick<SpoolStream, 'putMany' | 'putEnded' | 'holdsObject'>;
  rows: Pick<SpoolRows, 'entriesOf'>;
  owner: () => SpoolOwner;
  /** The cluster's connection; throws when it is not reachable. */
  reachable: () => NatsConnection;
  /** A message finished: its entry goes with the next prune. */
  finished: () => void;
}

export interface SpoolWriter {
  /** Writes these messages' entries together (as few records as NATS messages allow). */
  write(entries: ReadonlyArray<readonly [number, Uint8Array]>): Promise<void>;
  /** The message finished: its entry is let go (purged or its end recorded with the next prune). */
  finish(pk: number): Promise<void>;
  /** Each message as the store holds it now: written, or let go when it no longer waits. */
  syncFromStore(pks: readonly number[]): Promise<unknown>;
  /** Records the end of finished messages whose entries stay above the watermark; each after its own writes. */
  recordEnds(pks: readonly number[]): Promise<void>;
  /** Whether a write failed since the last call, after it may have reached the cluster (cleared by the call). */
  takeUnsure(): boolean;
}

export function createSpoolWriter(deps: SpoolWriterDeps): SpoolWriter {
  const { ledger, chains, stream, owner, reachable } = deps;
  const { chain } = chains;
  let unsure = false;

  const write = (entries: ReadonlyArray<readonly [number, Uint8Array]>): Promise<void> =>
    chain(
      entries.map(([pk]) => pk),
      async () => {
        const nc = reachable();
        const write = ledger.begin();
        try {
          const { seqs, subjects } = await stream.putMany(nc, owner(), entries);
          ledger.written(seqs, subjects);
        } catch (error) {
          // It may have landed all the same: a record the ledger never learns of, purged once the stream's sequence is read.
          unsure = true;
          ledger.failed(entries.map(([pk]) => pk));
          throw error;
        } finally {
          ledger.end(write);
        }
      },
    );

  const finish = (pk: number): Promise<void> =>
    chain([pk], async () => {
      ledger.finished(pk, stream.holdsObject(owner(), pk));
      chains.release(pk);
      deps.finished();
    });

  return {
    write,
    finish,
    syncFromStore(pks) {
      const entries = deps.rows.entriesOf(pks);
      const writes = [...entries].flatMap(([pk, entry]) => (entry === null ? [] : [[pk, entry] as const]));
      const finishes = [...entries].flatMap(([pk, entry]) => (entry === null ? [finish(pk)] : []));
      return Promise.allSettled([...finishes, ...(writes.length > 0 ? [write(writes)] : [])]);
    },
    recordEnds: (pks) =>
      chain(
        pks,
        async () => {
          const still = ledger.unrecorded(pks);
          if (still.length === 0) return;
          ledger.endsWritten(still, await stream.putEnded(reachable(), owner(), still));
        },
        false,
      ),
    takeUnsure() {
      const was = unsure;
      unsure = false;
      return was;
    },
  };
}
