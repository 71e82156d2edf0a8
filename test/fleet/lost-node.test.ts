/**
 * Issue 25 on real peers (a three-server NATS cluster, three `mailproxy serve`
 * processes, one slow SMTP sink): a node SIGKILLed under load with its data
 * directory deleted loses none of the mail it acknowledged: a survivor adopts
 * its replicated spool and sends what it had not finished. A node that comes
 * back on its old disk after its spool was adopted sends none of it again.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FLEET_TOKEN,
  provisionTenant,
  startFleet,
  untilFleet,
  type TestFleet,
  untilOrExplain,
} from '../helpers/fleet.js';
import { startFleetLoad, type FleetLoadTarget } from '../helpers/fleet-load.js';
import { copiesById } from '../helpers/outage-checks.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const TENANT = 'acme';
const SPOOL_STREAM = 'MAILPROXY_FLEET_SPOOL';
/**
 * A node silent this long is adopted (the tests' heartbeats are fast; at least node_timeout_seconds). Well above
 * the heartbeat stalls of a loaded test run: a live node adopted meanwhile sends what it kept twice (README), which
 * the first test would count against the lost node's duplicates.
 */
const ADOPT_AFTER_SECONDS = '8';

let fleet: TestFleet;
let sink: SmtpSink;
let key: string;

const admin = (url: string, method: string, path: string, body?: unknown) =>
  api(url, method, path, { token: FLEET_TOKEN, body });
const urlOf = (id: string): string => fleet.nodes.find((node) => node.id === id)?.url as string;
const waitingOn = async (url: string): Promise<number> =>
  (await admin(url, 'GET', '/status')).body.queue.waiting as number;

const until = (check: () => Promise<boolean> | boolean, what: string, timeoutMs: number) =>
  untilOrExplain(fleet, check, what, timeoutMs);

const mailIdOf = (raw: Buffer): string | undefined =>
  /^X-Genro-Mail-ID: (.+)$/m.exec(raw.toString('utf8'))?.[1]?.trim();

/** How many entries the replicated spool holds, all nodes together. */
async function spoolEntries(): Promise<number> {
  const nc = await connect({ servers: fleet.cluster.urls.split(',') });
  try {
    return (await (await jetstreamManager(nc)).streams.info(SPOOL_STREAM)).state.messages;
  } finally {
    await nc.close();
  }
}

/** The adoptions of `node`'s spool that the survivors logged, oldest first, with how many messages each took. */
const adoptionsOf = (node: string) =>
  fleet.nodes
    .filter((survivor) => survivor.id !== node)
    .flatMap((survivor) =>
      survivor.daemon.entries.filter((entry) => entry.msg === 'lost node’s spool adopted' && entry.node === node),
    )
    .sort((a, b) => Date.parse(String(a.time)) - Date.parse(String(b.time)))
    .map((entry) => ({ adopted: entry.adopted as number, instance: entry.instance as string }));

beforeAll(async () => {
  // Each send takes a while, so that a node under load has mail waiting when it is killed.
  sink = await startSmtpSink({ answerDelayMs: 60 });
  fleet = await startFleet(['n1', 'n2', 'n3'], { MAILPROXY_FLEET_ADOPT_AFTER_SECONDS: ADOPT_AFTER_SECONDS });
  key = await provisionTenant(fleet, TENANT, { host: '127.0.0.1', port: sink.port, tls_mode: 'none' });
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
  await sink?.stop();
});

describe('a node lost with its disk', () => {
  it('delivers every message the lost node acknowledged through a survivor; duplicates only of sends in flight at the kill', async () => {
    const targets: FleetLoadTarget[] = fleet.nodes.map((node) => ({
      id: node.id,
      url: node.url,
      smtpPort: node.smtpPort,
      key,
    }));
    const load = startFleetLoad(targets, TENANT, { smtpPauseMs: 50, httpBatch: 5, httpPauseMs: 100 });
    const { acknowledged } = load.ledger;
    const n2 = fleet.nodes.find((node) => node.id === 'n2')!;
    // The kill lands once n2 has taken more than it could send yet: 30 waiting, as it goes on sending
    // between this look and the kill (a CI run saw 20 become 19), for at least 20 to adopt.
    await until(
      async () => (acknowledged.get('n2')?.size ?? 0) >= 100 && (await waitingOn(n2.url)) >= 30,
      'n2 to acknowledge 100 and hold 30 waiting',
      60_000,
    );
    const killedAt = Date.now();
    n2.daemon.child.kill('SIGKILL');
    await n2.daemon.exited;
    rmSync(n2.cwd, { recursive: true, force: true });
    const lostAcks = new Map(acknowledged.get('n2'));

    // n1 and n3 go on taking mail until the adoption is done.
    await until(() => adoptionsOf('n2').length > 0, 'a survivor to adopt n2’s spool', 60_000);
    await load.stop();

    const ids = [...acknowledged.values()].flatMap((perNode) => [...perNode.keys()]);
    const undelivered = () => {
      const seen = copiesById(sink.messages);
      return ids.filter((id) => !seen.has(id));
    };
    await until(() => undelivered().length === 0, 'every acknowledged message at the sink', 90_000).catch(
      (error: unknown) => {
        console.error('undelivered', undelivered().length, undelivered().slice(0, 20));
        throw error;
      },
    );
    const copies = copiesById(sink.messages);
    // Sent twice: only what n2 was sending as it died (the sink had it, n2 had not recorded it as sent).
    const twice = ids.filter((id) => (copies.get(id) ?? 0) > 1);
    const firstSeen = (id: string) =>
      Math.min(...sink.messages.filter((message) => mailIdOf(message.raw) === id).map((message) => message.receivedAt));
    const adoptions = adoptionsOf('n2');
    console.info(
      JSON.stringify({ lostAcknowledged: lostAcks.size, adoptions, sentTwice: twice.length, acknowledged: ids.length }),
    );
    expect(adoptions.reduce((sum, adoption) => sum + adoption.adopted, 0)).toBeGreaterThanOrEqual(20);
    expect(
      ids.filter((id) => !copies.has(id)),
      'acknowledged and never delivered',
    ).toEqual([]);
    expect(
      twice.filter((id) => !lostAcks.has(id)),
      'sent twice but not n2’s',
    ).toEqual([]);
    expect(
      twice.filter((id) => firstSeen(id) < killedAt - 1000 || firstSeen(id) > killedAt + 500),
      'sent twice, first copy not in flight at the kill',
    ).toEqual([]);
    // Nothing left waiting on the survivors, and nothing left in the spool: a finished message's entry goes.
    for (const id of ['n1', 'n3'])
      await until(async () => (await waitingOn(urlOf(id))) === 0, `${id} to have nothing waiting`, 60_000);
    await until(async () => (await spoolEntries()) === 0, 'the spool stream to hold no entry', 30_000);
    // /status says so: what the survivors adopted, nothing left for the cluster to take.
    const spools = await Promise.all(
      ['n1', 'n3'].map(async (id) => (await admin(urlOf(id), 'GET', '/status')).body.fleet.spool),
    );
    expect(spools.reduce((sum, spool) => sum + spool.adopted, 0)).toBe(
      adoptions.reduce((sum, adoption) => sum + adoption.adopted, 0),
    );
    for (const spool of spools) expect(spool.pending_entries).toBe(0);
    // An adopted message's timeline says where it came from.
    const adoptedId = [...lostAcks.keys()].find((id) => (copies.get(id) ?? 0) === 1 && firstSeen(id) > killedAt + 500);
    expect(adoptedId, 'a message of n2 sent after the kill').toBeDefined();
    const found = await admin(urlOf('n1'), 'GET', `/messages/${adoptedId}?tenant_id=${TENANT}`);
    expect(['n1', 'n3']).toContain(found.body.node_id);
    expect(found.body.events.map((event: { event_type: string }) => event.event_type)).toContain('adopted');
  }, 240_000);

  it('sends nothing twice when the node comes back on its old disk after its spool was adopted', async () => {
    // A fresh n2 (a new disk): its mail is held by the shared suspension, so nothing is in flight at the kill.
    const n2 = await fleet.startNode('n2');
    await untilFleet(n2.url, (seen) => seen.alive === 3, 'n2 to see three live nodes');
    expect((await admin(urlOf('n1'), 'POST', '/commands/suspend', { tenant_id: TENANT })).status).toBe(200);
    const ids = Array.from({ length: 20 }, (_, index) => `back-${index}`);
    const posted = await api(n2.url, 'POST', '/add-messages', {
      token: key,
      body: {
        messages: ids.map((id) => ({
          id,
          from: 'app@acme.example',
          to: `${id}@example.net`,
          subject: id,
          body: 'held',
        })),
      },
    });
    expect(posted.body).toMatchObject({ queued: ids.length, rejected: [] });
    const session = await openSubmission(n2.smtpPort);
    try {
      await session.login(TENANT, key);
      // The last one is larger than a NATS message: its entry keeps the bytes in the spool's object store.
      for (const [id, lines] of [
        ['back-smtp-1', 1],
        ['back-smtp-2', 1],
        ['back-smtp-large', 20_000],
      ] as const) {
        ids.push(id);
        const body = Array.from({ length: lines }, (_, line) => `line ${line} ${'x'.repeat(70)}`).join('\r\n');
        await session.send(
          { from: 'app@acme.example', to: [`${id}@example.net`] },
          `From: app@acme.example\r\nTo: ${id}@example.net\r\nSubject: ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\n${body}\r\n`,
        );
      }
    } finally {
      session.close();
    }
    const { instance } = JSON.parse(readFileSync(join(n2.cwd, 'data', 'fleet-node.json'), 'utf8')) as {
      instance: string;
    };
    n2.daemon.child.kill('SIGKILL');
    await n2.daemon.exited;
    const adoptionOfThisDisk = () => adoptionsOf('n2').find((adoption) => adoption.instance === instance);
    await until(() => adoptionOfThisDisk() !== undefined, 'a survivor to adopt n2’s spool', 60_000);
    expect(adoptionOfThisDisk()?.adopted).toBe(ids.length);

    // Back on its old disk, while the tenant is still suspended: it gives up what was adopted.
    const back = await fleet.startNode('n2', { cwd: n2.cwd });
    await back.daemon.waitForLog(
      (entry) => entry.msg === 'this node’s mail was adopted while it was away: adopted messages given up',
    );
    expect((await admin(urlOf('n1'), 'POST', '/commands/activate', { tenant_id: TENANT })).status).toBe(200);
    for (const id of ['n1', 'n2', 'n3'])
      await until(async () => (await waitingOn(urlOf(id))) === 0, `${id} to have nothing waiting`, 60_000);
    const copies = copiesById(sink.messages);
    expect(
      ids.filter((id) => copies.get(id) !== 1),
      'not delivered exactly once',
    ).toEqual([]);
    // n2's own timeline says where each went.
    const moved = await admin(back.url, 'GET', `/messages/${ids[0]}?tenant_id=${TENANT}`);
    expect(['n1', 'n3']).toContain(moved.body.node_id);
  }, 240_000);

  it('does not send again what the lost node finished while an older message of it waited', async () => {
    // n2 (back on its old disk) holds a message scheduled for later: its entry stays the oldest one n2 needs.
    const n2 = fleet.nodes.find((node) => node.id === 'n2')!;
    const later = Math.round(Date.now() / 1000) + 3600;
    const held = await api(n2.url, 'POST', '/add-messages', {
      token: key,
      body: {
        messages: [
          {
            id: 'later-1',
            from: 'app@acme.example',
            to: 'later@example.net',
            subject: 'later',
            body: 'later',
            deferred_ts: later,
          },
        ],
      },
    });
    expect(held.body).toMatchObject({ queued: 1, rejected: [] });
    // Then mail that n2 sends at once: each finished entry sits above the waiting one, so it cannot simply be purged.
    const ids = Array.from({ length: 30 }, (_, index) => `done-${index}`);
    for (let at = 0; at < ids.length; at += 10) {
      const posted = await api(n2.url, 'POST', '/add-messages', {
        token: key,
        body: {
          messages: ids
            .slice(at, at + 10)
            .map((id) => ({ id, from: 'app@acme.example', to: `${id}@example.net`, subject: id, body: 'now' })),
        },
      });
      expect(posted.body).toMatchObject({ queued: 10, rejected: [] });
    }
    await until(async () => (await waitingOn(n2.url)) === 1, 'n2 to have sent all but the scheduled message', 60_000);
    // The cluster knows those ends: nothing a survivor would send again.
    await until(
      async () => (await admin(n2.url, 'GET', '/status')).body.fleet.spool.unrecorded_ends === 0,
      'n2’s ends recorded',
      10_000,
    );
    // This disk's spool was adopted once already (the test before): the adoption awaited is the next one.
    const earlier = adoptionsOf('n2').length;
    n2.daemon.child.kill('SIGKILL');
    await n2.daemon.exited;
    rmSync(n2.cwd, { recursive: true, force: true });
    const adoption = () => adoptionsOf('n2')[earlier];
    await until(() => adoption() !== undefined, 'a survivor to adopt n2’s spool', 60_000);
    // Only the scheduled message was adopted, and it keeps its time.
    expect(adoption()?.adopted).toBe(1);
    const found = await admin(urlOf('n1'), 'GET', `/messages/later-1?tenant_id=${TENANT}`);
    expect(['n1', 'n3']).toContain(found.body.node_id);
    expect(found.body.message.state).toBe('deferred');
    const copies = copiesById(sink.messages);
    expect(
      ids.filter((id) => copies.get(id) !== 1),
      'not delivered exactly once',
    ).toEqual([]);
    // Not left waiting for the tests after.
    expect(
      (await admin(urlOf('n1'), 'POST', '/commands/delete-messages', { tenant_id: TENANT, ids: ['later-1'] })).status,
    ).toBe(200);
    for (const id of ['n1', 'n3'])
      await until(async () => (await waitingOn(urlOf(id))) === 0, `${id} to have nothing waiting`, 30_000);
  }, 240_000);

  it('gives up what was adopted while it was paused longer than adopt_after_seconds, and is adopted again once lost for real', async () => {
    // A fresh n2 whose mail is held by the shared suspension: nothing is in flight while it is paused.
    const n2 = await fleet.startNode('n2');
    await untilFleet(n2.url, (seen) => seen.alive === 3, 'n2 to see three live nodes');
    expect((await admin(urlOf('n1'), 'POST', '/commands/suspend', { tenant_id: TENANT })).status).toBe(200);
    const post = async (ids: string[]) => {
      const posted = await api(n2.url, 'POST', '/add-messages', {
        token: key,
        body: {
          messages: ids.map((id) => ({
            id,
            from: 'app@acme.example',
            to: `${id}@example.net`,
            subject: id,
            body: 'paused',
          })),
        },
      });
      expect(posted.body).toMatchObject({ queued: ids.length, rejected: [] });
    };
    const before = Array.from({ length: 10 }, (_, index) => `paused-${index}`);
    await post(before);
    // Frozen (a VM paused, a stalled process): its heartbeat stops, and a survivor adopts its spool although it is not lost.
    const earlier = adoptionsOf('n2').length;
    n2.daemon.child.kill('SIGSTOP');
    await until(() => adoptionsOf('n2').length > earlier, 'a survivor to adopt the paused n2’s spool', 60_000);
    expect(adoptionsOf('n2')[earlier]?.adopted).toBe(before.length);
    n2.daemon.child.kill('SIGCONT');
    const gaveUp = () =>
      n2.daemon.entries.find(
        (entry) => entry.msg === 'this node’s mail was adopted while it was away: adopted messages given up',
      );
    await until(() => gaveUp() !== undefined, 'n2 to give up what was adopted', 30_000);
    expect(gaveUp()?.surrendered).toBe(before.length);
    // Mail it takes afterwards is its own, and adopted should it be lost now with its disk.
    const after = Array.from({ length: 5 }, (_, index) => `resumed-${index}`);
    await post(after);
    // The ends of what it gave up are on the cluster (else a survivor would take those again: the last ~100 ms' window).
    await until(
      async () => (await admin(n2.url, 'GET', '/status')).body.fleet.spool.unrecorded_ends === 0,
      'n2’s ends recorded',
      10_000,
    );
    n2.daemon.child.kill('SIGKILL');
    await n2.daemon.exited;
    rmSync(n2.cwd, { recursive: true, force: true });
    await until(() => adoptionsOf('n2').length > earlier + 1, 'a survivor to adopt n2’s spool again', 60_000);
    expect(adoptionsOf('n2')[earlier + 1]?.adopted).toBe(after.length);
    expect((await admin(urlOf('n1'), 'POST', '/commands/activate', { tenant_id: TENANT })).status).toBe(200);
    for (const id of ['n1', 'n3'])
      await until(async () => (await waitingOn(urlOf(id))) === 0, `${id} to have nothing waiting`, 60_000);
    const copies = copiesById(sink.messages);
    expect(
      [...before, ...after].filter((id) => copies.get(id) !== 1),
      'not delivered exactly once',
    ).toEqual([]);
  }, 240_000);
});
