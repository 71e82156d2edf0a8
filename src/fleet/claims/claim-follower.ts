/**
 * This node's reader of the claim log: an ordered consumer resumed from the index's last applied
 * sequence, whose deliveries are applied to the index in bursts (one transaction each), and the
 * appends waiting until the index has reached their sequence. A consumer can be replaced at any
 * time (fallen behind, the store failing to apply); deliveries of a replaced one are dropped, and
 * the new one delivers them again from the last applied.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { ClaimIndex, ClaimRecord } from '../../core/fleet/index.js';
import type { Logger } from '../../core/index.js';
import { claimRecordCodec } from './claim-wire-schemas.js';

interface Waiter {
  seq: number;
  resolve: () => void;
}

export class ClaimFollower {
  private applied = 0;
  private messages: ConsumerMessages | null = null;
  /** A consumer being made: concurrent appends and checks wait for the one, rather than each make another. */
  private starting: Promise<void> | null = null;
  /** Which consumer is current: deliveries of a replaced one are dropped. */
  private serial = 0;
  private halted = false;
  /** Since when the current consumer has stayed behind the stream's last entry; null while it keeps up. */
  private behindSince: number | null = null;
  private readonly waiters: Waiter[] = [];
  /** Entries delivered and not yet applied: applied together at the next turn of the event loop, one transaction for a burst. */
  private arrived: JsMsg[] = [];

  constructor(
    private readonly stream: string,
    private readonly index: ClaimIndex,
    private readonly log: Logger,
  ) {}

  /** The log sequence of the last entry applied. */
  appliedSeq(): number {
    return this.applied;
  }

  /** Whether a consumer delivers now. */
  following(): boolean {
    return this.messages !== null;
  }

  /** Where the index left off: the next consumer starts after it. */
  resume(): void {
    this.applied = this.index.appliedSeq();
  }

  /** The stream was made anew (its sequences start again from 1): follow it from its start. */
  restart(): void {
    this.applied = 0;
  }

  /** How long the current consumer has stayed behind the stream's `last` entry; null when it is not behind. */
  lagMs(last: number, now: number): number | null {
    if (last <= this.applied) {
      this.behindSince = null;
      return null;
    }
    this.behindSince ??= now;
    return now - this.behindSince;
  }

  /** Starts a consumer after the last applied entry, replacing the current one. */
  follow(nc: NatsConnection): Promise<void> {
    this.starting ??= this.startConsumer(nc).finally(() => (this.starting = null));
    return this.starting;
  }

  /** Resolves once the index has applied the entry at `seq`. */
  reached(seq: number): Promise<void> {
    return seq <= this.applied ? Promise.resolve() : new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  stopped(): boolean {
    return this.halted;
  }

  /** Closes the consumer; a consumer still being made is closed as it comes. */
  stop(): void {
    this.halted = true;
    this.closeConsumer();
  }

  private async startConsumer(nc: NatsConnection): Promise<void> {
    this.closeConsumer();
    this.serial += 1;
    const mine = this.serial;
    const consumer = await jetstream(nc).consumers.get(this.stream, { opt_start_seq: this.applied + 1 });
    const current = await consumer.consume({
      max_messages: 512,
      callback: (message) => {
        if (this.serial !== mine) return;
        if (this.arrived.length === 0) setImmediate(() => this.flush());
        this.arrived.push(message);
      },
    });
    if (this.serial !== mine || this.halted) return void current.close().catch(() => undefined);
    this.messages = current;
    this.behindSince = null;
    void current.closed().then(() => {
      if (this.messages === current) this.messages = null;
    });
  }

  private closeConsumer(): void {
    const current = this.messages;
    this.messages = null;
    this.serial += 1;
    this.arrived = [];
    if (current !== null) void current.close().catch(() => undefined);
  }

  private flush(): void {
    const batch = this.arrived;
    this.arrived = [];
    const fresh = batch.filter((message) => message.seq > this.applied);
    const last = fresh.at(-1);
    if (last === undefined) return;
    try {
      this.index.apply(last.seq, this.recordsOf(fresh));
    } catch (error) {
      // The store cannot write now: the consumer is replaced from the last applied entry by the next check.
      this.log.warn({ err: error }, 'could not apply fleet claims; resuming from the last applied');
      this.closeConsumer();
      return;
    }
    this.applied = last.seq;
    this.release();
  }

  /** The records the entries carry; an entry that is not one this version can apply is skipped, and counts as applied. */
  private recordsOf(entries: readonly JsMsg[]): ClaimRecord[] {
    const records: ClaimRecord[] = [];
    for (const message of entries) {
      const read = claimRecordCodec.read(message.data);
      if (read.ok) records.push(read.value);
      else
        this.log.warn(
          { seq: message.seq, subject: message.subject, code: read.error.code },
          'fleet claim log entry skipped: not a claim record',
        );
    }
    return records;
  }

  private release(): void {
    for (let at = this.waiters.length - 1; at >= 0; at -= 1) {
      const waiter = this.waiters[at] as Waiter;
      if (waiter.seq > this.applied) continue;
      this.waiters.splice(at, 1);
      waiter.resolve();
    }
  }
}
