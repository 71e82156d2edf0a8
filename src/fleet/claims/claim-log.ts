/**
 * The fleet's claim log on JetStream (core/fleet/claim-ledger.ts): one replicated
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
import { nanos, type NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ClaimIndex, ClaimRecord } from '../../core/fleet/index.js';
import type { Clock, Logger } from '../../core/index.js';
import { createPeriodicLoop, type Service, within } from '../../runtime/index.js';
import { ClaimFollower } from './claim-follower.js';
import { claimRecordCodec } from './claim-wire-schemas.js';
import type { FleetLink } from '../link/fleet-service.js';
import { fleetStream } from '../link/fleet-stream.js';

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

interface ClaimLogDeps {
  link: FleetLink;
  index: ClaimIndex;
  clock: Clock;
  log: Logger;
}

export function createClaimLog(settings: ClaimLogSettings, deps: ClaimLogDeps): ClaimLog {
  const { link, log } = deps;
  const follower = new ClaimFollower(settings.stream, deps.index, log);
  const provision = claimLogProvisioner(settings, log);
  const check = claimLogCheck(settings, deps, follower, provision);
  const loop = createPeriodicLoop({
    name: 'fleet-claims',
    intervalMs: settings.checkMs,
    log,
    clock: deps.clock,
    run: async () => void (await check()),
  });

  return {
    name: 'fleet-claims',
    async append(record) {
      const nc = link.connection();
      if (nc === null || !link.connected()) throw new Error('the fleet cluster is not reachable');
      await provision(nc);
      const ack = await jetstream(nc).publish(
        `${settings.subjectPrefix}.${record.node}`,
        claimRecordCodec.encode(record),
      );
      if (ack.seq <= follower.appliedSeq()) return;
      // Not following yet (a check starts the consumer): start it now rather than wait a check's interval.
      if (!follower.following()) await follower.follow(nc);
      await follower.reached(ack.seq);
    },
    async start() {
      follower.resume();
      // Joined at the start: catch up with what the fleet claimed meanwhile before taking requests
      // (bounded; the rest comes while serving, and requests wait for it or go on the local check).
      if (link.connection() !== null) {
        const caughtUp = check().then(async (last) => (last === null ? undefined : follower.reached(last)));
        caughtUp.catch((error: unknown) =>
          log.warn({ err: error }, 'could not catch up with the fleet claim log yet; retrying'),
        );
        await within(
          caughtUp.catch(() => undefined),
          settings.catchUpMs,
        );
      }
      loop.start();
    },
    async stop() {
      follower.stop();
      await loop.stop();
    },
    tick: () => loop.tick(),
  };
}

/** Makes the stream when it is missing (once announced in the log); every append and check asks. */
function claimLogProvisioner(settings: ClaimLogSettings, log: Logger): (nc: NatsConnection) => Promise<void> {
  const ensureStream = fleetStream({
    name: settings.stream,
    subjectPrefix: settings.subjectPrefix,
    replicas: settings.replicas,
    limits: { max_age: nanos(settings.maxAgeMs) },
    timeoutMs: CHECK_TIMEOUT_MS,
  });
  let announced = false;
  return async (nc) => {
    const created = await ensureStream(nc);
    if (created && !announced)
      log.info({ stream: settings.stream, replicas: settings.replicas }, 'fleet claim log created');
    announced = true;
  };
}

/**
 * One check: provisions the stream, starts or replaces the consumer, prunes; answers the log's
 * last sequence (null while cut off).
 */
function claimLogCheck(
  settings: ClaimLogSettings,
  deps: ClaimLogDeps,
  follower: ClaimFollower,
  provision: (nc: NatsConnection) => Promise<void>,
): () => Promise<number | null> {
  const { link, index, clock, log } = deps;
  let prunedAt = 0;
  const follow = async (nc: NatsConnection, last: number): Promise<void> => {
    const applied = follower.appliedSeq();
    if (last < applied) {
      // The stream was made anew (an operator removed it): its sequences start again from 1.
      log.warn({ applied, last }, 'fleet claim log restarted; following it from its start');
      follower.restart();
      await follower.follow(nc);
      return;
    }
    if (!follower.following()) return follower.follow(nc);
    const lagMs = follower.lagMs(last, clock.now());
    if (lagMs === null || lagMs < settings.checkMs) return;
    log.warn({ applied, last }, 'fleet claim log consumer fell behind; starting another');
    await follower.follow(nc);
  };
  const prune = (): void => {
    if (clock.now() - prunedAt < PRUNE_EVERY_MS) return;
    prunedAt = clock.now();
    const pruned = index.prune(clock.now() - settings.maxAgeMs);
    if (pruned > 0) log.info({ pruned }, 'fleet claims pruned');
  };
  return async () => {
    const nc = link.connection();
    if (nc === null || !link.connected() || follower.stopped()) return null;
    await provision(nc);
    const jsm = await jetstreamManager(nc, { timeout: CHECK_TIMEOUT_MS });
    const last = (await jsm.streams.info(settings.stream)).state.last_seq;
    await follow(nc, last);
    prune();
    return last;
  };
}
