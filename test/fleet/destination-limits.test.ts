/**
 * Per-destination limits fleet-wide, on real peers: three `mailproxy serve` nodes on a
 * three-server NATS cluster, one smtp-server sink as everyone's relay, one account whose
 * gmail.com mail is limited to 30 a minute (the account itself unlimited). Each node is given 30
 * messages for gmail.com and 5 for example.net at once: alone, each would send its 30 (90 in the
 * minute); the fleet sends at most 30 plus one lease chunk per node to gmail.com in the window,
 * every example.net message at once, and the rest of gmail's waits, held, for the next window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, provisionTenant, startFleet, type TestFleet } from '../helpers/fleet.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const MINUTE = 60_000;
const LIMIT = 30;
/** The lease chunk for 30 a minute over three nodes: ceil(30 / (3 * 4)) (core/fleet/budget-lease.ts chunkSize). */
const CHUNK = 3;
const PER_NODE = 30;
const OTHERS_PER_NODE = 5;

let fleet: TestFleet;
let sink: SmtpSink;
let key: string;

beforeAll(async () => {
  [fleet, sink] = await Promise.all([startFleet(['d1', 'd2', 'd3']), startSmtpSink()]);
  key = await provisionTenant(fleet, 'acme', {
    host: '127.0.0.1',
    port: sink.port,
    tls_mode: 'none',
    destination_limits: [{ domains: ['gmail.com'], limit_per_minute: LIMIT }],
  });
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
  await sink?.stop();
});

const windowOf = (at: number): number => Math.floor(at / MINUTE) * MINUTE;
const toGmail = (received: { rcptTo: string[] }): boolean => received.rcptTo[0]?.endsWith('@gmail.com') === true;
const gmailIn = (start: number): number =>
  sink.messages.filter((received) => toGmail(received) && windowOf(received.receivedAt) === start).length;

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('fleet-wide destination limits', () => {
  it('sends at most 30 + one chunk per node to gmail.com in a minute window, loaded on all three nodes, and the other domains at once', async () => {
    // Start with at least 20 s of the window left, so its sends all land in it.
    await until(() => Date.now() % MINUTE < 40_000, 'a minute window with 20 s left', MINUTE);
    const first = windowOf(Date.now());
    const batch = (node: string) => [
      ...Array.from({ length: PER_NODE }, (_, index) => ({
        id: `${node}-g${index}`,
        from: 'app@acme.example',
        to: `someone${index}@gmail.com`,
        subject: node,
        body: 'hello',
      })),
      ...Array.from({ length: OTHERS_PER_NODE }, (_, index) => ({
        id: `${node}-n${index}`,
        from: 'app@acme.example',
        to: `someone${index}@example.net`,
        subject: node,
        body: 'hello',
      })),
    ];
    const posted = await Promise.all(
      fleet.nodes.map((node) =>
        api(node.url, 'POST', '/add-messages', { token: key, body: { messages: batch(node.id) } }),
      ),
    );
    expect(posted.map((response) => response.body.queued)).toEqual(Array(3).fill(PER_NODE + OTHERS_PER_NODE));

    // The other domains are not held behind gmail's limit.
    await until(
      () => sink.messages.filter((received) => !toGmail(received)).length === 3 * OTHERS_PER_NODE,
      'every example.net message',
      30_000,
    );
    // The fleet uses up gmail's window: every node sees its lease of the destination spent and the counter full.
    const destinationLeases = async () =>
      Promise.all(
        fleet.nodes.map(async (node) => {
          const limits = (await api(node.url, 'GET', '/status', { token: FLEET_TOKEN })).body.fleet.limits;
          return (limits.accounts as Array<Record<string, any>>).find((seen) => seen.destination === 'gmail.com');
        }),
      );
    await until(
      async () =>
        (await destinationLeases()).every(
          (lease) => lease?.windows.minute?.fleet_exhausted === true && lease.windows.minute.left === 0,
        ),
      "every node to see gmail's window used up",
      30_000,
    ).catch(async (error: unknown) => {
      console.info(JSON.stringify(await destinationLeases()), gmailIn(first), sink.messages.length);
      throw error;
    });
    // What waits is held for the destination, and says so.
    let held: { node: (typeof fleet.nodes)[number]; id: string } | null = null;
    for (const candidate of fleet.nodes) {
      const page = await api(candidate.url, 'GET', '/messages?tenant_id=acme&status=queued&limit=1', {
        token: FLEET_TOKEN,
      });
      const id = (page.body.messages as Array<{ id: string }>)[0]?.id;
      if (id !== undefined) held ??= { node: candidate, id };
    }
    expect(held).not.toBeNull();
    const { node, id } = held!;
    const reasonOf = async () =>
      (await api(node.url, 'GET', `/messages/${id}?tenant_id=acme`, { token: FLEET_TOKEN })).body.why.reasons[0];
    await until(async () => (await reasonOf())?.code === 'destination_limited', 'the held message to say why', 10_000);
    expect((await reasonOf()).message).toContain('"gmail.com"');

    // The window ends; gmail's held mail goes out in the next one.
    await until(
      () => windowOf(Date.now()) > first && gmailIn(first + MINUTE) > 0,
      'the next window to send',
      2 * MINUTE,
    );
    const inFirst = gmailIn(first);
    console.info(`fleet destination limits: ${inFirst} to gmail.com in the first window (bound ${LIMIT + 3 * CHUNK})`);
    expect(inFirst).toBeGreaterThanOrEqual(LIMIT - 3 * CHUNK);
    expect(inFirst).toBeLessThanOrEqual(LIMIT + 3 * CHUNK);
    expect(windowOf(Date.now())).toBe(first + MINUTE);
  }, 240_000);
});
