/**
 * Issue 24: one nats server of three SIGKILLed during load. Three nodes take
 * SMTP and HTTP submissions at once while the server leading the events stream
 * is killed: intake never stands still (it commits to SQLite; the mirror
 * follows), every acknowledged message reaches the relay and is final on its
 * node, and the stream ends up holding every event of every node exactly once.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, provisionTenant, startFleet, type TestFleet } from '../helpers/fleet.js';
import { longestPause, perSecond, startFleetLoad, type FleetLoadTarget } from '../helpers/fleet-load.js';
import { copiesById } from '../helpers/outage-checks.js';
import { api } from '../helpers/test-daemon.js';
import { readStream } from '../peers/nats-server.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { eventually } from '../helpers/eventually.js';

const STREAM = 'MAILPROXY';
const TENANT = 'acme';
/** Intake commits locally: no node may stand still this long, whatever JetStream does meanwhile. */
const MAX_INTAKE_PAUSE_MS = 5000;

let fleet: TestFleet;
let sink: SmtpSink;
let watcher: NatsConnection;

beforeAll(async () => {
  sink = await startSmtpSink();
  fleet = await startFleet(['n1', 'n2', 'n3']);
  watcher = await connect({ servers: fleet.cluster.servers.map((server) => server.url) });
}, 90_000);

afterAll(async () => {
  await watcher?.close();
  await fleet?.destroy();
  await sink?.stop();
});

/** The events stream's leader, or null while it has none (an election) or cannot be asked. */
async function streamLeader(): Promise<string | null> {
  try {
    const jsm = await jetstreamManager(watcher, { timeout: 2000 });
    return (await jsm.streams.info(STREAM)).cluster?.leader ?? null;
  } catch {
    return null;
  }
}

/** Each check asks the nodes over HTTP: every 100 ms. */
const until = (check: () => Promise<boolean> | boolean, what: string, timeoutMs: number): Promise<void> =>
  eventually(check, what, timeoutMs, 100);

/** The same tenant and account on every node, each through its own API (each node gives its own key). */
async function provision(): Promise<FleetLoadTarget[]> {
  const key = await provisionTenant(fleet, TENANT, { host: '127.0.0.1', port: sink.port, tls_mode: 'none' });
  return fleet.nodes.map((node) => ({ id: node.id, url: node.url, smtpPort: node.smtpPort, key }));
}

/** How often each warning or error was logged, for the report: what the nodes went through. */
function warningCounts(entries: ReadonlyArray<Record<string, any>>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of entries) {
    if (entry.level !== 'warn' && entry.level !== 'error') continue;
    const key = `${String(entry.loop ?? entry.component ?? '')}: ${String(entry.msg)}${entry.err === undefined ? '' : ` (${String(entry.err.message)})`}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

const acknowledgedCount = (acknowledged: Map<string, Map<string, number>>): number =>
  [...acknowledged.values()].reduce((sum, ids) => sum + ids.size, 0);

describe('one nats server of three SIGKILLed during load', () => {
  it('nothing stops, nothing acknowledged is lost, no event is duplicated in the stream', async () => {
    const targets = await provision();
    const startedAt = Date.now();
    const load = startFleetLoad(targets, TENANT);
    const { acknowledged, refusals } = load.ledger;

    // The kill lands once every node is busy and the stream has events to lose.
    await until(
      () => [...acknowledged.values()].every((ids) => ids.size >= 20),
      'every node to acknowledge 20 messages',
      30_000,
    );
    const leader = await streamLeader();
    const victim = fleet.cluster.servers.find((server) => server.name === leader);
    expect(victim, `the leader of ${STREAM} (${String(leader)}) is one of ours`).toBeDefined();
    const killedAt = Date.now();
    await victim!.kill();

    // The load runs through the whole failover: until the stream has a new leader, and a while past it.
    await until(
      async () => {
        const now = await streamLeader();
        return now !== null && now !== leader;
      },
      'a new leader of the stream',
      60_000,
    );
    const electedAt = Date.now();
    const atElection = acknowledgedCount(acknowledged);
    await until(
      () => acknowledgedCount(acknowledged) >= atElection + 60,
      '60 more acknowledgements after the election',
      30_000,
    );
    await load.stop();
    const stoppedAt = Date.now();

    const pauses = Object.fromEntries(
      targets.map((target) => [target.id, longestPause(acknowledged.get(target.id)!.values(), startedAt, stoppedAt)]),
    );
    console.info(
      JSON.stringify({
        killed: leader,
        killAtMs: killedAt - startedAt,
        electionMs: electedAt - killedAt,
        acknowledged: acknowledgedCount(acknowledged),
        perSecond: Object.fromEntries(
          targets.map((target) => [target.id, perSecond(acknowledged.get(target.id)!.values(), startedAt)]),
        ),
        longestPauseMs: pauses,
        refusals,
        warnings: Object.fromEntries(fleet.nodes.map((node) => [node.id, warningCounts(node.daemon.entries)])),
      }),
    );
    // Nothing stops: no refusal, no /ready other than 200, no node standing still.
    expect(refusals).toEqual([]);
    for (const [node, pause] of Object.entries(pauses))
      expect(pause, `${node}'s longest pause between acknowledgements`).toBeLessThan(MAX_INTAKE_PAUSE_MS);

    // Nothing acknowledged is lost: each at the relay once, and sent on its node.
    const ids = [...acknowledged.values()].flatMap((perNode) => [...perNode.keys()]);
    await sink.waitForMessages(ids.length, 60_000);
    const copies = copiesById(sink.messages);
    expect(
      ids.filter((id) => copies.get(id) !== 1),
      'acknowledged ids not relayed exactly once',
    ).toEqual([]);
    expect(copies.size).toBe(ids.length);
    const outboxIds: string[] = [];
    for (const node of fleet.nodes) {
      const db = new Database(join(node.cwd, 'data', 'mailproxy.db'), { readonly: true });
      try {
        const states = db.prepare<[], { id: string; state: string }>(`SELECT id, state FROM messages`).all();
        await until(
          () => db.prepare(`SELECT count(*) FROM messages WHERE state <> 'sent'`).pluck().get() === 0,
          `${node.id}'s messages to be sent`,
          30_000,
        );
        expect(states.map((row) => row.id).sort()).toEqual([...acknowledged.get(node.id)!.keys()].sort());
        // The outbox is drained: the mirror has no lag once JetStream answers again.
        await until(
          async () => (await api(node.url, 'GET', '/status', { token: FLEET_TOKEN })).body.mirror.backlog === 0,
          `${node.id}'s mirror backlog to drain`,
          90_000,
        ).catch(async (error: unknown) => {
          const mirror = (await api(node.url, 'GET', '/status', { token: FLEET_TOKEN })).body.mirror;
          const warnings = node.daemon.entries.filter((entry) => entry.level !== 'info' && entry.level !== 'debug');
          throw new Error(`${(error as Error).message}: ${JSON.stringify({ mirror, warnings })}`);
        });
        outboxIds.push(...(db.prepare(`SELECT id FROM outbox`).pluck().all() as string[]));
      } finally {
        db.close();
      }
    }

    // No event twice in the stream (by Nats-Msg-Id and by event_id), and every node's every event there.
    const survivor = fleet.cluster.servers.find((server) => server.pid !== null)!;
    const stored = await readStream(survivor.url, STREAM);
    const count = (keys: Array<string | undefined>) => {
      const seen = new Map<string, number>();
      for (const key of keys) seen.set(String(key), (seen.get(String(key)) ?? 0) + 1);
      return seen;
    };
    const byMsgId = count(stored.map((event) => event.msgId));
    expect(
      [...byMsgId].filter(([, n]) => n > 1),
      'Nats-Msg-Id stored more than once',
    ).toEqual([]);
    expect(
      [...count(stored.map((event) => event.body.event_id as string))].filter(([, n]) => n > 1),
      'event_id stored more than once',
    ).toEqual([]);
    expect(
      outboxIds.filter((id) => !byMsgId.has(id)),
      'events never published',
    ).toEqual([]);
    expect(stored).toHaveLength(outboxIds.length);
    const sent = new Set(
      stored
        .filter((event) => event.body.event_type === 'message.sent')
        .map((event) => event.body.message_id as string),
    );
    expect(
      ids.filter((id) => !sent.has(id)),
      'acknowledged messages without message.sent on the stream',
    ).toEqual([]);
  }, 240_000);
});
