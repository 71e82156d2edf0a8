/**
 * Writing a fleet node's spool records: entries packed together, as many as
 * one NATS message holds, deflated (`g<life>-<n>`); a large entry's JSON in an
 * object with a record naming it (`<pk>`); the ends of finished messages
 * (`e<life>-<n>`). `life` is random per process, so that no record of an
 * earlier life is replaced by a later one's.
 */
import { randomBytes } from 'node:crypto';
import { headers, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { createAckPublisher, type AckPublisher } from '../../outbox/index.js';
import type { SpoolAccess, SpoolOwner } from './spool-access.js';
import { deflate, ENCODING, entriesRecord, packEntries } from './spool-records.js';
import { spoolWireRecordCodec } from './spool-wire-schemas.js';

/** Room left in a NATS message beside a record (headers, subject). */
const HEADROOM = 4096;
/** A record not acknowledged by then is written again by the spool's next round. */
const ACK_TIMEOUT_MS = 5000;

/** What a write of entries left on the stream: the sequence holding each pk's entry, and each record's subject by sequence. */
export interface WrittenRecords {
  seqs: Map<number, number>;
  subjects: Map<number, string>;
}

type Entries = ReadonlyArray<readonly [pk: number, json: Uint8Array]>;

/** The names of this process's group and end records: its life, then a count. */
function recordNamer(): (kind: 'g' | 'e') => string {
  const life = randomBytes(4).toString('hex');
  let written = 0;
  return (kind) => `${kind}${life}-${(written += 1).toString(36)}`;
}

/** One publisher per connection: a new connection (a reconnection elsewhere) gets a new one. */
function publisherPerConnection(): (nc: NatsConnection) => AckPublisher {
  let publisher: { nc: NatsConnection; acks: AckPublisher } | null = null;
  return (nc) => {
    if (publisher?.nc !== nc) {
      publisher?.acks.close();
      publisher = { nc, acks: createAckPublisher(nc, ACK_TIMEOUT_MS) };
    }
    return publisher.acks;
  };
}

/** A group of small entries as one record, deflated off the main thread (zlib's pool), level 1: most of the gain for little CPU. */
async function deflatedGroup(members: Entries): Promise<{ bytes: Uint8Array; header: MsgHdrs }> {
  const header = headers();
  header.set(ENCODING, 'deflate');
  return { bytes: await deflate(entriesRecord(members.map(([, json]) => json)), { level: 1 }), header };
}

export function createSpoolWrites(access: SpoolAccess) {
  const { provision, prefixOf, subjectOf, objects } = access;
  const recordName = recordNamer();
  const acks = publisherPerConnection();

  /** A large entry: its JSON in an object, then the record naming it; answers the record's sequence. */
  const putLarge = async (nc: NatsConnection, owner: SpoolOwner, pk: number, json: Uint8Array): Promise<number> => {
    const subject = subjectOf(owner, pk);
    const name = subject.slice(access.settings.subjectPrefix.length + 1);
    await objects.put(nc, subject, name, json);
    return acks(nc).publish(subject, spoolWireRecordCodec.encode({ object: name }));
  };

  /** A group of small entries as one record; answers its sequence and subject. */
  const putGroup = async (
    nc: NatsConnection,
    owner: SpoolOwner,
    members: Entries,
  ): Promise<{ seq: number; subject: string }> => {
    const subject = `${prefixOf(owner)}.${recordName('g')}`;
    const { bytes, header } = await deflatedGroup(members);
    return { seq: await acks(nc).publish(subject, bytes, header), subject };
  };

  return {
    /**
     * Writes these messages' entries (each already encoded, as SpoolRows.entriesOf gives it):
     * together, in as few records as NATS messages allow (a large one in an object of its own).
     * Answers the stream sequence holding each pk's entry, and each record's subject by sequence.
     */
    async putMany(nc: NatsConnection, owner: SpoolOwner, entries: Entries): Promise<WrittenRecords> {
      await provision(nc);
      const limit = (nc.info?.max_payload ?? 1024 * 1024) - HEADROOM;
      const seqs = new Map<number, number>();
      const subjects = new Map<number, string>();
      const small = entries.filter(([, json]) => json.length + 16 <= limit);
      const large = entries.filter(([, json]) => json.length + 16 > limit);
      const writes = large.map(([pk, json]) =>
        putLarge(nc, owner, pk, json).then((seq) => {
          seqs.set(pk, seq);
          subjects.set(seq, subjectOf(owner, pk));
        }),
      );
      for (const group of packEntries(
        small.map(([, json]) => json.length),
        limit - 16,
      )) {
        const members = group.map((position) => small[position] as readonly [number, Uint8Array]);
        writes.push(
          putGroup(nc, owner, members).then(({ seq, subject }) => {
            subjects.set(seq, subject);
            for (const [pk] of members) seqs.set(pk, seq);
          }),
        );
      }
      await Promise.all(writes);
      return { seqs, subjects };
    },
    /** Records the end of these messages (their entries sit above the node's oldest waiting one); answers its sequence. */
    async putEnded(nc: NatsConnection, owner: SpoolOwner, pks: readonly number[]): Promise<number> {
      await provision(nc);
      return acks(nc).publish(
        `${prefixOf(owner)}.${recordName('e')}`,
        spoolWireRecordCodec.encode({ ended: [...pks] }),
      );
    },
  };
}
