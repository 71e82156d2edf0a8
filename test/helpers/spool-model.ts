/**
 * An in-memory model of what a fleet node's replicated spool works against,
 * for the model test beside it (src/fleet/spool/replicated-spool.test.ts): the
 * node's queue as the spool reads it, the cluster's round trips answered when
 * the test says (in any order), and the spool's stream with stream-wide
 * sequences, records that land before their acknowledgement, acknowledgements
 * and records that can be lost, a purge below a sequence, and a record
 * erased by its sequence.
 */
import { replayPlan, type SpoolRecordIndex, type SpoolRows } from '../../src/core/fleet/cluster-spool.js';
import type { SpoolWrites } from '../../src/fleet/spool/replicated-spool.js';
import type { ErasableRecord } from '../../src/fleet/spool/spool-stream.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A message of the node's queue: waiting or not, and its content's version (an update, a resend). */
export interface Row {
  waiting: boolean;
  version: number;
}

/** The node's SQLite queue, as the spool reads it: each message waiting or not, its content's version. */
export function modelRows(rows: Map<number, Row>): SpoolRows {
  const waitingPks = () => [...rows].flatMap(([pk, row]) => (row.waiting ? [pk] : []));
  return {
    waitingPksOf: () => [],
    waitingOf: (pks) => new Set(pks.filter((pk) => rows.get(pk)?.waiting === true)),
    entriesOf: (pks) =>
      new Map(
        pks.map((pk) => {
          const row = rows.get(pk);
          return [pk, row?.waiting === true ? encoder.encode(JSON.stringify({ pk, version: row.version })) : null];
        }),
      ),
    waitingPks: (after, limit) =>
      waitingPks()
        .filter((pk) => pk > after)
        .sort((a, b) => a - b)
        .slice(0, limit),
    waitingIds: () => [],
    surrender: () => 0,
  };
}

interface ModelRecord {
  seq: number;
  entries?: Array<{ pk: number; version: number }>;
  ended?: number[];
}

/** The cluster's round trips under way, each answered when the model says (in any order). */
export function modelNetwork() {
  const waiting: Array<() => void> = [];
  /** A macrotask: the spool's flushes after a commit (setImmediate) and every promise before them run. */
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    trip: () => new Promise<void>((resolve) => waiting.push(resolve)),
    /** Answers one round trip under way (the pick-th, modulo), then lets the node react. */
    async deliver(pick: number): Promise<void> {
      if (waiting.length > 0) (waiting.splice(pick % waiting.length, 1)[0] as () => void)();
      await turn();
    },
    /** Answers every round trip, oldest first, until none is left (or `until` settles) and the node is idle. */
    async drain(until?: Promise<unknown>): Promise<void> {
      let done = until === undefined;
      void until?.finally(() => (done = true));
      for (let round = 0; round < 100_000; round += 1) {
        await turn();
        if (waiting.length === 0) {
          await turn();
          if (waiting.length === 0 && done) return;
          if (waiting.length === 0) throw new Error('waiting on something no round trip will answer');
        }
        (waiting.shift() as () => void)();
      }
      throw new Error('the spool never went idle');
    },
  };
}

const subjectOf = (seq: number): string => `spool.n1.i1.g${seq}`;

/** A record as an erasure reads it. */
const erasable = (record: ModelRecord): ErasableRecord => ({
  seq: record.seq,
  subject: subjectOf(record.seq),
  pks: (record.entries ?? []).map((entry) => entry.pk),
  objects: [],
});

/** The cluster's stream: this node's records, and the sequence every writer shares. */
export function modelStream(network: ReturnType<typeof modelNetwork>) {
  const records: ModelRecord[] = [];
  const state = { seq: 0, loseNextAck: false };
  const land = (record: Omit<ModelRecord, 'seq'>): number => {
    state.seq += 1;
    records.push({ ...record, seq: state.seq });
    return state.seq;
  };
  const acknowledge = async (seq: number): Promise<number> => {
    await network.trip();
    if (state.loseNextAck) {
      state.loseNextAck = false;
      throw new Error('TIMEOUT');
    }
    return seq;
  };
  /**
   * Writes made for one life of the node. Killed, a life asks nothing more of the cluster; what
   * it had sent may still land.
   */
  const writes = (life: { alive: boolean }): SpoolWrites => {
    const trip = async (label: string): Promise<void> => {
      if (!life.alive) throw new Error('killed');
      await network.trip();
      void label;
    };
    return {
      async putMany(_nc, _owner, entries) {
        await trip('publish');
        const decoded = entries.map(([, json]) => JSON.parse(decoder.decode(json)) as { pk: number; version: number });
        const seq = await acknowledge(land({ entries: decoded }));
        return { seqs: new Map(entries.map(([pk]) => [pk, seq])), subjects: new Map([[seq, subjectOf(seq)]]) };
      },
      async putEnded(_nc, _owner, pks) {
        await trip('publish-ended');
        return acknowledge(land({ ended: [...pks] }));
      },
      async removeBelow(_nc, _owner, below) {
        await trip('purge');
        for (let index = records.length - 1; index >= 0; index -= 1)
          if ((records[index] as ModelRecord).seq < below) records.splice(index, 1);
      },
      holdsObject: () => false,
      release: async () => undefined,
      pks: async () => {
        await trip('info');
        return [];
      },
      subjects: async () => {
        await trip('info');
        return records.map((record) => subjectOf(record.seq));
      },
      lastSeq: async () => {
        await trip('info');
        return state.seq;
      },
      removeStale: async () => undefined,
      async recordAt(_nc, _owner, seq) {
        await trip('get');
        const record = records.find((candidate) => candidate.seq === seq);
        return record === undefined ? null : erasable(record);
      },
      async recordsHolding(_nc, _owner, pks) {
        await trip('info');
        return records.filter((record) => record.entries?.some((entry) => pks.includes(entry.pk))).map(erasable);
      },
      async eraseRecord(_nc, record) {
        await trip('delete');
        const at = records.findIndex((candidate) => candidate.seq === record.seq);
        if (at >= 0) records.splice(at, 1);
      },
    };
  };
  /** Every version of the message's entry the stream still holds, in any record. */
  const versionsOf = (pk: number): number[] =>
    records.flatMap((record) => (record.entries ?? []).flatMap((entry) => (entry.pk === pk ? [entry.version] : [])));
  /** What a survivor would replay: each message's latest entry, unless its end was recorded after it. */
  const replayable = (): Map<number, number> => {
    const indexes: SpoolRecordIndex[] = records.map((record) =>
      record.entries === undefined
        ? { seq: record.seq, ended: record.ended ?? [] }
        : { seq: record.seq, pks: record.entries.map((entry) => entry.pk) },
    );
    const plan = replayPlan(indexes);
    const versions = new Map<number, number>();
    for (const [pk, seq] of plan) {
      const entry = records.find((record) => record.seq === seq)?.entries?.find((candidate) => candidate.pk === pk);
      if (entry !== undefined) versions.set(pk, entry.version);
    }
    return versions;
  };
  /** A record the cluster lost (or another node removed): what the spool's check must notice. */
  const lose = (pick: number): void => void (records.length > 0 && records.splice(pick % records.length, 1));
  return { state, writes, replayable, lose, versionsOf };
}
