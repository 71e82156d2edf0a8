/**
 * The fleet's claim log on JetStream (core/claim-ledger.ts): one replicated
 * stream that every node appends its claim records to and every node applies,
 * in the stream's order, to its own index. A request's claims cost one
 * replicated write however many ids it carries (a KV key each cost one write
 * per id: fleet intake ran at half the rate of the mirror alone).
 *
 * An append resolves once this node's index has applied it, so the answer
 * about each key then takes every earlier record of every node into account.
 * The applier is an ordered consumer resumed from the index's last sequence; a
 * check every `checkMs` replaces one that stayed behind the stream (a consumer
 * can go quiet for good when the server holding it dies) and prunes old claims.
 */
import { nanos, type ConsumerMessages, type JsMsg, type NatsConnection } from 'nats';
import { claimRecordOf, type ClaimIndex, type ClaimRecord } from '../core/claim-ledger.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { createPeriodicLoop } from '../runtime/periodic-loop.js';
import type { Service } from '../runtime/service.js';
import { within } from '../runtime/within.js';
import type { FleetLink } from './fleet-service.js';
import { fleetStream } from './fleet-stream.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** A check's requests give up after this long; the next check asks again. */
const CHECK_TIMEOUT_MS = 1000;
const PRUNE_EVERY_MS = 10 * 60_000;

export interface ClaimLogSettings {
  /** The stream's name; its subjects are `<subjectPrefix>.<node>`, outside `mailproxy.>`, which the event stream captures. */
  stream: string;
  subjectPrefix: string;
  replicas: number;
  /** How long claims are kept (the stream's max_age and the index's pruning): as long as messages are. */
  maxAgeMs: number;
  checkMs: number;
  /** How long a start waits to catch up with the log before it goes on (and catches up meanwhile). */
  catchUpMs: number;
}

export interface ClaimLog extends Service {
  /** Appends the record; resolves once this node's index has applied it. Rejects when the cluster does not take it. */
  append(record: ClaimRecord): Promise<void>;
  /** One check now (tests; the loop checks on its own). */
  tick(): Promise<void>;
}

export function createClaimLog(settings: ClaimLogSettings, deps: { link: FleetLink; index: ClaimIndex; clock: Clock; log: Logger }): ClaimLog {
  const { link, index, clock, log } = deps;
  let applied = 0;
  let messages: ConsumerMessages | null = null;
  /** A consumer being made: concurrent appends and checks wait for the one, rather than each make another. */
  let starting: Promise<void> | null = null;
  /** Which consumer is current: deliveries of a replaced one are dropped (the new one delivers them again). */
  let serial = 0;
  let behindSince: number | null = null;
  let prunedAt = 0;
  let stopped = false;
  const waiters: Array<{ seq: number; resolve: () => void }> = [];
  /** Entries delivered and not yet applied: applied together at the next turn of the event loop, one transaction for a burst. */
  let arrived: JsMsg[] = [];

  const ensureStream = fleetStream({
    name: settings.stream,
    subjectPrefix: settings.subjectPrefix,
    replicas: settings.replicas,
    limits: { max_age: nanos(settings.maxAgeMs) },
    timeoutMs: CHECK_TIMEOUT_MS,
  });
  let announced = false;
  const provision = async (nc: NatsConnection): Promise<void> => {
    const created = await ensureStream(nc);
    if (created && !announced) log.info({ stream: settings.stream, replicas: settings.replicas }, 'fleet claim log created');
    announced = true;
  };

  const release = (): void => {
    for (let at = waiters.length - 1; at >= 0; at -= 1) {
      const waiter = waiters[at] as { seq: number; resolve: () => void };
      if (waiter.seq > applied) continue;
      waiters.splice(at, 1);
      waiter.resolve();
    }
  };

  const flush = (): void => {
    const batch = arrived;
    arrived = [];
    const fresh = batch.filter((message) => message.seq > applied);
    const last = fresh.at(-1);
    if (last === undefined) return;
    const records: ClaimRecord[] = [];
    for (const message of fresh) {
      const record = parse(message);
      if (record === null) log.warn({ seq: message.seq, subject: message.subject }, 'fleet claim log entry skipped: not a claim record');
      else records.push(record);
    }
    try {
      index.apply(last.seq, records);
    } catch (error) {
      // The store cannot write now: the consumer is replaced from the last applied entry by the next check.
      log.warn({ err: error }, 'could not apply fleet claims; resuming from the last applied');
      closeConsumer();
      return;
    }
    applied = last.seq;
    release();
  };

  const closeConsumer = (): void => {
    const current = messages;
    messages = null;
    serial += 1;
    arrived = [];
    if (current !== null) void current.close().catch(() => undefined);
  };

  const startConsumer = async (nc: NatsConnection): Promise<void> => {
    closeConsumer();
    serial += 1;
    const mine = serial;
    const consumer = await nc.jetstream().consumers.get(settings.stream, { opt_start_seq: applied + 1 });
    const current = await consumer.consume({
      max_messages: 512,
      callback: (message) => {
        if (serial !== mine) return;
        if (arrived.length === 0) setImmediate(flush);
        arrived.push(message);
      },
    });
    if (serial !== mine || stopped) return void current.close().catch(() => undefined);
    messages = current;
    behindSince = null;
    void current.closed().then(() => {
      if (messages === current) messages = null;
    });
  };

  const follow = (nc: NatsConnection): Promise<void> => {
    starting ??= startConsumer(nc).finally(() => (starting = null));
    return starting;
  };

  /** Provisions the stream, starts or replaces the consumer, prunes; answers the log's last sequence (null while cut off). */
  const check = async (): Promise<number | null> => {
    const nc = link.connection();
    if (nc === null || !link.connected() || stopped) return null;
    await provision(nc);
    const jsm = await nc.jetstreamManager({ timeout: CHECK_TIMEOUT_MS });
    const last = (await jsm.streams.info(settings.stream)).state.last_seq;
    if (last < applied) {
      // The stream was made anew (an operator removed it): its sequences start again from 1.
      log.warn({ applied, last }, 'fleet claim log restarted; following it from its start');
      applied = 0;
      await follow(nc);
    } else if (messages === null) await follow(nc);
    else if (last > applied) {
      behindSince ??= clock.now();
      if (clock.now() - behindSince >= settings.checkMs) {
        log.warn({ applied, last }, 'fleet claim log consumer fell behind; starting another');
        await follow(nc);
      }
    } else behindSince = null;
    if (clock.now() - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = clock.now();
      const pruned = index.prune(clock.now() - settings.maxAgeMs);
      if (pruned > 0) log.info({ pruned }, 'fleet claims pruned');
    }
    return last;
  };

  const reached = (seq: number): Promise<void> => (seq <= applied ? Promise.resolve() : new Promise((resolve) => waiters.push({ seq, resolve })));

  const loop = createPeriodicLoop({ name: 'fleet-claims', intervalMs: settings.checkMs, log, clock, run: async () => void (await check()) });

  return {
    name: 'fleet-claims',
    async append(record) {
      const nc = link.connection();
      if (nc === null || !link.connected()) throw new Error('the fleet cluster is not reachable');
      await provision(nc);
      const ack = await nc.jetstream().publish(`${settings.subjectPrefix}.${record.node}`, encoder.encode(JSON.stringify(record)));
      if (ack.seq <= applied) return;
      // Not following yet (a check starts the consumer): start it now rather than wait a check's interval.
      if (messages === null) await follow(nc);
      await reached(ack.seq);
    },
    async start() {
      applied = index.appliedSeq();
      // Joined at the start: catch up with what the fleet claimed meanwhile before taking requests
      // (bounded; the rest comes while serving, and requests wait for it or go on the local check).
      if (link.connection() !== null) {
        const caughtUp = check().then(async (last) => (last === null ? undefined : reached(last)));
        caughtUp.catch((error: unknown) => log.warn({ err: error }, 'could not catch up with the fleet claim log yet; retrying'));
        await within(
          caughtUp.catch(() => undefined),
          settings.catchUpMs,
        );
      }
      loop.start();
    },
    async stop() {
      stopped = true;
      await loop.stop();
      closeConsumer();
    },
    tick: () => loop.tick(),
  };
}

function parse(message: JsMsg): ClaimRecord | null {
  try {
    return claimRecordOf(JSON.parse(decoder.decode(message.data)));
  } catch {
    return null;
  }
}
