/**
 * The replicated spool keeps an entry for every message a fleet node holds
 * waiting, on real peers (a three-server NATS cluster, three `mailproxy serve`
 * processes, a scripted SMTP sink). A young node takes scheduled, deferred,
 * suspended and immediate mail in its first seconds, while the fleet is under
 * load; the stream must then hold, for each message still waiting there, an
 * entry a survivor would replay. Killed with its disk, the node loses none of
 * the mail it acknowledged: the others deliver all of it. Should the cluster
 * lose the node's records meanwhile (a defect of its own, or of ours), the
 * node's periodic check finds every waiting message without an entry and
 * writes it again, and says so in /status and the metrics.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayPlan } from '../../src/core/fleet/cluster-spool.js';
import { createSpoolStream } from '../../src/fleet/spool/spool-stream.js';
import {
  FLEET_TOKEN,
  provisionTenant,
  startFleet,
  untilFleet,
  type FleetTestNode,
  type TestFleet,
  untilOrExplain,
} from '../helpers/fleet.js';
import { startFleetLoad, type FleetLoadTarget } from '../helpers/fleet-load.js';
import { copiesById } from '../helpers/outage-checks.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const TENANT = 'acme';
const SPOOL_STREAM = 'MAILPROXY_FLEET_SPOOL';
const SPOOL_SUBJECTS = 'mailproxy_fleet_spool';
const ADOPT_AFTER_SECONDS = '8';

let fleet: TestFleet;
let sink: SmtpSink;
let key: string;
/** While true, the sink answers 451 to every `defer-*` recipient: those messages wait as deferred. */
let greylisting = true;

const admin = (url: string, method: string, path: string, body?: unknown) =>
  api(url, method, path, { token: FLEET_TOKEN, body });
const urlOf = (id: string): string => fleet.nodes.find((node) => node.id === id)?.url as string;

const until = (check: () => Promise<boolean> | boolean, what: string, timeoutMs: number) =>
  untilOrExplain(fleet, check, what, timeoutMs);

/** The client ids a survivor would replay from a node's spool now: each waiting message's latest entry, less those ended. */
async function replayableIds(node: FleetTestNode): Promise<Set<string>> {
  const { instance } = JSON.parse(readFileSync(join(node.cwd, 'data', 'fleet-node.json'), 'utf8')) as {
    instance: string;
  };
  const owner = { node: node.id, instance };
  const stream = createSpoolStream({ stream: SPOOL_STREAM, subjectPrefix: SPOOL_SUBJECTS, replicas: 3 });
  const nc = await connect({ servers: fleet.cluster.urls.split(',') });
  try {
    const indexes = await stream.indexes(nc, owner);
    const plan = replayPlan(indexes.map(({ index }) => index));
    const ids = new Set<string>();
    for (const { subject, index } of indexes) {
      if (!('pks' in index)) continue;
      const held = await stream.read(nc, subject);
      if (held === null || !('entries' in held.record)) continue;
      for (const entry of held.record.entries) if (plan.get(entry.origin_pk) === index.seq) ids.add(entry.id);
    }
    return ids;
  } finally {
    await nc.close();
  }
}

/** The client ids a node holds waiting (queued, deferred, sending, suspended), as the fleet's one view lists them. */
async function waitingIds(node: FleetTestNode): Promise<string[]> {
  const ids: string[] = [];
  for (const status of ['queued', 'deferred', 'sending', 'suspended']) {
    let cursor: string | undefined;
    do {
      const query = `/messages?tenant_id=${TENANT}&status=${status}&limit=500${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = await admin(node.url, 'GET', query);
      expect(page.status, page.text).toBe(200);
      for (const message of page.body.messages as Array<{ id: string; node_id?: string }>)
        if (message.node_id === node.id) ids.push(message.id);
      cursor = page.body.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }
  return ids;
}

beforeAll(async () => {
  sink = await startSmtpSink({
    answerDelayMs: 20,
    onRcpt: (address) =>
      greylisting && address.startsWith('defer-') ? { code: 451, message: '4.7.1 greylisted, try again later' } : null,
  });
  // n2 joins later, so that it takes its first mail within its first seconds.
  fleet = await startFleet(['n1', 'n3'], {
    MAILPROXY_FLEET_ADOPT_AFTER_SECONDS: ADOPT_AFTER_SECONDS,
    MAILPROXY_FLEET_SPOOL_CHECK_SECONDS: '1',
  });
  key = await provisionTenant(fleet, TENANT, { host: '127.0.0.1', port: sink.port, tls_mode: 'none' });
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
  await sink?.stop();
});

describe('a young node under load', () => {
  it('keeps an entry on the cluster for every message it holds waiting, and loses none with its disk', async () => {
    const load = startFleetLoad(
      fleet.nodes.map((node): FleetLoadTarget => ({ id: node.id, url: node.url, smtpPort: node.smtpPort, key })),
      TENANT,
      { smtpPauseMs: 40, httpBatch: 10, httpPauseMs: 40 },
    );
    // The batch is suspended fleet-wide before n2 starts: its mail waits suspended there.
    expect(
      (await admin(urlOf('n1'), 'POST', '/commands/suspend', { tenant_id: TENANT, batch_code: 'held' })).status,
    ).toBe(200);
    const n2 = await fleet.startNode('n2');
    const posted: string[] = [];
    const post = async (messages: Array<Record<string, unknown>>) => {
      const response = await api(n2.url, 'POST', '/add-messages', { token: key, body: { messages } });
      expect(response.status, response.text).toBe(200);
      expect(response.body.rejected).toEqual([]);
      for (const message of messages) posted.push(String(message.id));
    };
    const mail = (id: string, extra: Record<string, unknown> = {}) => ({
      id,
      from: 'app@acme.example',
      to: `${id}@example.net`,
      subject: id,
      body: id,
      ...extra,
    });
    // Within n2's first seconds: as soon as it serves the tenant's account; its own load starts then too.
    await until(
      async () => (await admin(n2.url, 'GET', `/account/main?tenant_id=${TENANT}`)).status === 200,
      'n2 to serve the account',
      30_000,
    );
    const own = startFleetLoad([{ id: n2.id, url: n2.url, smtpPort: n2.smtpPort, key }], TENANT, {
      smtpPauseMs: 40,
      httpBatch: 10,
      httpPauseMs: 40,
    });
    const takenByN2 = () => own.ledger.acknowledged.get('n2')?.size ?? 0;
    const scheduledAt = Math.round(Date.now() / 1000) + 25;
    for (let round = 0; round < 6; round += 1) {
      await post([
        ...Array.from({ length: 4 }, (_, index) =>
          mail(`sched-${round}-${index}`, { deferred_ts: scheduledAt + index }),
        ),
        ...Array.from({ length: 3 }, (_, index) => mail(`defer-${round}-${index}`)),
        ...Array.from({ length: 3 }, (_, index) => mail(`held-${round}-${index}`, { batch_code: 'held' })),
        ...Array.from({ length: 10 }, (_, index) => mail(`now-${round}-${index}`, { priority: 0 })),
      ]);
      // Interleaved with the load's own submissions to n2.
      const taken = takenByN2();
      await until(() => takenByN2() >= taken + 10, 'n2 to take more of the load', 30_000);
    }
    const posts = Date.now();
    // Ordinary load through the fleet meanwhile: n2 sends its immediate mail and much of the load's, and purges their entries.
    await until(
      async () => {
        const sent = copiesById(sink.messages);
        const { checked } = (await admin(n2.url, 'GET', '/status')).body.fleet.spool;
        return (
          posted.filter((id) => id.startsWith('now-')).every((id) => sent.has(id)) &&
          takenByN2() >= 200 &&
          Date.parse(checked?.at ?? '') > posts
        );
      },
      'n2 to send its immediate mail, take 200 of the load, and check its spool',
      60_000,
    );

    // Every message waiting on n2 has an entry a survivor would replay.
    const uncoveredOn = async (node: FleetTestNode) => {
      const waiting = await waitingIds(node);
      const replayable = await replayableIds(node);
      // Waiting still once the stream was read: one sent meanwhile has rightly lost its entry.
      const still = new Set(await waitingIds(node));
      return { waiting, uncovered: waiting.filter((id) => still.has(id) && !replayable.has(id)) };
    };
    const before = await uncoveredOn(n2);
    expect(before.waiting.filter((id) => /^(sched|defer|held)-/.test(id)).length).toBeGreaterThanOrEqual(54);
    expect(before.uncovered, 'waiting on n2 without a spool entry').toEqual([]);

    // The cluster loses every record n2 wrote: its check finds the waiting messages without an entry and writes them again.
    const { instance } = JSON.parse(readFileSync(join(n2.cwd, 'data', 'fleet-node.json'), 'utf8')) as {
      instance: string;
    };
    const nc = await connect({ servers: fleet.cluster.urls.split(',') });
    try {
      await (await jetstreamManager(nc)).streams.purge(SPOOL_STREAM, { filter: `${SPOOL_SUBJECTS}.n2.${instance}.>` });
    } finally {
      await nc.close();
    }
    const repairedOn = async () => (await admin(n2.url, 'GET', '/status')).body.fleet.spool.repaired as number;
    await until(async () => (await repairedOn()) >= 54, 'n2 to write its waiting messages again', 30_000);
    const after = await uncoveredOn(n2);
    expect(after.uncovered, 'waiting on n2 without a spool entry after the check').toEqual([]);
    // The check after the repair finds an entry for every waiting message.
    await until(
      async () => {
        const { checked } = (await admin(n2.url, 'GET', '/status')).body.fleet.spool;
        return checked.waiting_messages >= 54 && checked.entries === checked.waiting_messages;
      },
      'a check finding every waiting message held',
      30_000,
    );
    const spool = (await admin(n2.url, 'GET', '/status')).body.fleet.spool;
    const metrics = await api(n2.url, 'GET', '/metrics', { token: FLEET_TOKEN });
    expect(Number(/^mailproxy_fleet_spool_repaired_total (\d+)/m.exec(metrics.text)?.[1])).toBe(spool.repaired);
    expect(
      n2.daemon.entries.some(
        (entry) => entry.msg === 'waiting messages without a replicated spool entry: written again',
      ),
    ).toBe(true);
    console.info(JSON.stringify({ waiting: after.waiting.length, spool }));

    // n2 is lost with its disk: the others deliver everything it acknowledged.
    n2.daemon.child.kill('SIGKILL');
    await n2.daemon.exited;
    rmSync(n2.cwd, { recursive: true, force: true });
    await Promise.all([load.stop(), own.stop()]);
    greylisting = false;
    expect(
      (await admin(urlOf('n1'), 'POST', '/commands/activate', { tenant_id: TENANT, batch_code: 'held' })).status,
    ).toBe(200);
    const acknowledged = [
      ...posted,
      ...[load, own].flatMap((each) =>
        [...each.ledger.acknowledged.values()].flatMap((perNode) => [...perNode.keys()]),
      ),
    ];
    const undelivered = () => {
      const seen = copiesById(sink.messages);
      return acknowledged.filter((id) => !seen.has(id));
    };
    await until(() => undelivered().length === 0, 'every acknowledged message at the sink', 120_000).catch(
      (error: unknown) => {
        console.error('undelivered', undelivered().length, undelivered().slice(0, 30));
        throw error;
      },
    );
    await untilFleet(urlOf('n1'), (seen) => seen.alive === 2, 'n1 to see two live nodes');
  }, 300_000);
});
