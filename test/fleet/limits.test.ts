/**
 * Fleet-wide limits on real peers: three `mailproxy serve` nodes on
 * a three-server NATS cluster, one smtp-server sink as everyone's relay, the
 * same tenant and account (limit_per_minute 60) created on each node. 180
 * messages, 60 per node, submitted at once: alone, each node would send its 60
 * (180 in the minute); the fleet sends at most 60 plus one lease chunk per node
 * in the window, and the rest waits, queued, for the next window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, provisionTenant, startFleet, type TestFleet } from '../helpers/fleet.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const MINUTE = 60_000;
const LIMIT = 60;
/** The lease chunk for 60 a minute over three nodes: ceil(60 / (3 * 4)) (core/fleet/budget-lease.ts chunkSize). */
const CHUNK = 5;
const PER_NODE = 60;

let fleet: TestFleet;
let sink: SmtpSink;
const keys = new Map<string, string>();

beforeAll(async () => {
  [fleet, sink] = await Promise.all([startFleet(['n1', 'n2', 'n3']), startSmtpSink()]);
  const key = await provisionTenant(fleet, 'acme', {
    host: '127.0.0.1',
    port: sink.port,
    tls_mode: 'none',
    limit_per_minute: LIMIT,
    limit_behavior: 'defer',
  });
  for (const node of fleet.nodes) keys.set(node.id, key);
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
  await sink?.stop();
});

const windowOf = (at: number): number => Math.floor(at / MINUTE) * MINUTE;
const sentIn = (start: number): number =>
  sink.messages.filter((received) => windowOf(received.receivedAt) === start).length;

/** Polls `check` until it holds (true) or the time is up (false). */
async function reached(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  if (!(await reached(check, timeoutMs))) throw new Error(`timed out waiting for ${what}`);
}

const messagesOf = async (url: string, status: string): Promise<unknown[]> => {
  const response = await api(url, 'GET', `/messages?tenant_id=acme&status=${status}&limit=500`, { token: FLEET_TOKEN });
  expect(response.status).toBe(200);
  return response.body.messages as unknown[];
};

describe('fleet-wide limits', () => {
  it('sends at most 60 + one chunk per node in a minute window of an account limited to 60/minute, loaded on all three nodes', async () => {
    // Start with at least 20 s of the window left, so its sends all land in it.
    await until(() => Date.now() % MINUTE < 40_000, 'a minute window with 20 s left', MINUTE);
    const first = windowOf(Date.now());
    const batch = (node: string) =>
      Array.from({ length: PER_NODE }, (_, index) => ({
        id: `${node}-${index}`,
        from: 'app@acme.example',
        to: 'someone@example.net',
        subject: node,
        body: 'hello',
      }));
    const posted = await Promise.all(
      fleet.nodes.map((node) =>
        api(node.url, 'POST', '/add-messages', { token: keys.get(node.id)!, body: { messages: batch(node.id) } }),
      ),
    );
    expect(posted.map((response) => response.body.queued)).toEqual([PER_NODE, PER_NODE, PER_NODE]);

    // The fleet reaches its limit for the window: every node sees the window used up and holds nothing more.
    // (Soft checks until the count at the end: without the fleet's leases, that count is what fails, 180 for 75.)
    const usedUp = await reached(async () => {
      const views = await Promise.all(
        fleet.nodes.map(
          async (node) => (await api(node.url, 'GET', '/status', { token: FLEET_TOKEN })).body.fleet.limits,
        ),
      );
      return views.every(
        (limits) =>
          limits.accounts[0]?.windows.minute?.fleet_exhausted === true &&
          limits.accounts[0]?.windows.minute?.left === 0,
      );
    }, 45_000);
    expect.soft(usedUp, 'every node sees the window used up').toBe(true);
    expect.soft(windowOf(Date.now()), 'still the first window').toBe(first);
    // max_connections 5 holds fleet-wide too: 2 + 2 + 1.
    const views = await Promise.all(
      fleet.nodes.map(
        async (node) => (await api(node.url, 'GET', '/status', { token: FLEET_TOKEN })).body.fleet.limits,
      ),
    );
    expect.soft(views.map((limits) => limits.cut_off)).toEqual([false, false, false]);
    expect.soft(views.map((limits) => limits.accounts[0]?.connections)).toEqual([2, 2, 1]);
    expect
      .soft((await api(fleet.nodes[0]!.url, 'GET', '/ready')).body.details.fleet.limits)
      .toMatchObject({ cut_off: false });

    // What was not sent waits, queued: not failed, and says why.
    const queued = await Promise.all(fleet.nodes.map((node) => messagesOf(node.url, 'queued')));
    expect.soft(queued.flat().length).toBeGreaterThanOrEqual(3 * PER_NODE - LIMIT - 3 * CHUNK);
    const waiting = queued.findIndex((list) => list.length > 0);
    if (waiting >= 0) {
      const someId = (queued[waiting]![0] as { id: string }).id;
      const detail = await api(fleet.nodes[waiting]!.url, 'GET', `/messages/${someId}?tenant_id=acme`, {
        token: FLEET_TOKEN,
      });
      expect.soft(detail.body.why.reasons.map((reason: { code: string }) => reason.code)).toContain('rate_limited');
    }

    // The first window ends; the waiting mail goes out in the next one (or, without the leases, all went out at once).
    const allSent = () => sink.messages.length === 3 * PER_NODE && Date.now() >= first + MINUTE;
    await until(() => sentIn(first + MINUTE) > 0 || allSent(), 'the next window to send', 2 * MINUTE);
    const inFirst = sentIn(first);
    console.info(
      `fleet-limits: ${inFirst} sent in the first window (bound ${LIMIT + 3 * CHUNK}), ${sentIn(first + MINUTE)} so far in the next`,
    );
    expect(inFirst).toBeGreaterThan(0);
    expect(inFirst).toBeLessThanOrEqual(LIMIT + 3 * CHUNK);
    expect(sentIn(first + MINUTE)).toBeGreaterThan(0);
    for (const node of fleet.nodes) expect(await messagesOf(node.url, 'error')).toEqual([]);
  }, 240_000);

  it('keeps sending within the lease it holds when the cluster is unreachable, then waits, and says so in /status and /ready', async () => {
    const [node] = fleet.nodes as [TestFleet['nodes'][0]];
    const key = keys.get(node.id)!;
    // 600 a minute over three nodes: chunks of ceil(600 / 12) = 50 (larger, to 100, if heartbeats lag and fewer nodes look alive).
    const account = {
      id: 'bulk',
      tenant_id: 'acme',
      host: '127.0.0.1',
      port: sink.port,
      tls_mode: 'none',
      limit_per_minute: 600,
      limit_behavior: 'defer',
    };
    expect((await api(node.url, 'POST', '/account', { token: FLEET_TOKEN, body: account })).status).toBe(201);
    const mail = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, index) => ({
        id: `${prefix}-${index}`,
        account_id: 'bulk',
        from: 'app@acme.example',
        to: 'bulk@example.net',
        subject: prefix,
        body: 'hello',
      }));
    const bulkSent = (): number =>
      sink.messages.filter((received) => received.rcptTo.includes('bulk@example.net')).length;
    const limitsOf = async (path: '/status' | '/ready') => {
      const body = (await api(node.url, 'GET', path, { token: FLEET_TOKEN })).body;
      return (path === '/status' ? body.fleet.limits : body.details.fleet.limits) as {
        cut_off: boolean;
        accounts: Array<{
          account_id: string;
          awaiting_lease: boolean;
          windows: { minute: { leased: number; used: number; left: number; window_start: number } };
        }>;
      };
    };
    const bulk = async () => (await limitsOf('/status')).accounts.find((seen) => seen.account_id === 'bulk');

    // A whole window ahead (leases end with their window): the node leases a chunk and sends 5 of it.
    await until(() => Date.now() % MINUTE < 10_000, 'a fresh minute window', MINUTE);
    const window = windowOf(Date.now());
    await api(node.url, 'POST', '/add-messages', { token: key, body: { messages: mail('before', 5) } });
    await until(() => bulkSent() === 5, 'the first 5 to be sent', 20_000);
    await until(async () => (await bulk())?.windows.minute.used === 5, 'the lease to count them', 10_000);
    const held = (await bulk())!.windows.minute;
    expect(held.leased).toBeGreaterThanOrEqual(50);
    expect(held).toMatchObject({ used: 5, left: held.leased - 5 });

    // The cluster goes away entirely: the node says it is cut off, in /status and in /ready.
    await Promise.all(fleet.cluster.servers.map((server) => server.kill()));
    await until(async () => (await limitsOf('/status')).cut_off, 'the node to say it is cut off', 20_000);
    expect((await limitsOf('/ready')).cut_off).toBe(true);

    // It sends what its lease still holds (45 with a chunk of 50), and no more; the rest waits, queued.
    await api(node.url, 'POST', '/add-messages', { token: key, body: { messages: mail('cut-off', held.left + 15) } });
    await until(() => bulkSent() === held.leased, `the ${held.left} left of the lease to be sent`, 30_000);
    await until(async () => (await bulk())?.awaiting_lease === true, 'the node to wait for a lease', 10_000);
    expect(windowOf(Date.now())).toBe(window);
    expect(bulkSent()).toBe(held.leased);
    const queued = (await messagesOf(node.url, 'queued')) as Array<{ id: string }>;
    expect(queued.filter((message) => message.id.startsWith('cut-off-'))).toHaveLength(15);
    expect(await messagesOf(node.url, 'error')).toEqual([]);

    // The cluster back: the node leases again and the rest goes out.
    for (const server of fleet.cluster.servers) server.start();
    await fleet.cluster.ready();
    await until(() => bulkSent() === held.leased + 15, 'the rest to be sent once the cluster is back', 90_000);
    await until(async () => !(await limitsOf('/status')).cut_off, 'the node to say it is connected again', 30_000);
  }, 240_000);
});
