/**
 * A configuration change on a fleet node that reaches its cluster is not
 * refused because the shared configuration bucket is, for a moment, not
 * answering (its stream has no leader: just after the fleet starts, or while
 * JetStream elects one): the write waits for it, bounded, on real peers (a
 * three-server NATS cluster, one `mailproxy serve`). Cut off from the cluster,
 * a change is still refused at once (test/fleet/shared-config.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, startFleet, untilFleet, type TestFleet } from '../helpers/fleet.js';
import { api } from '../helpers/test-daemon.js';

let fleet: TestFleet;

beforeAll(async () => {
  fleet = await startFleet(['n1']);
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
});

describe('a configuration change while the bucket has no leader', () => {
  it('waits for the bucket to answer again instead of refusing with 503', async () => {
    const [first] = fleet.nodes;
    const admin = (method: string, path: string, body?: unknown) =>
      api(first!.url, method, path, { token: FLEET_TOKEN, body });
    expect((await admin('POST', '/tenant', { id: 'before' })).status).toBe(201);
    // Two of three servers gone: no stream of the cluster has a quorum, while the node still reaches the third.
    const [, second, third] = fleet.cluster.servers;
    await Promise.all([second!.kill(), third!.kill()]);
    await untilFleet(first!.url, (seen) => seen.connected, 'n1 to reach the remaining server');
    const asked = Date.now();
    const change = admin('POST', '/tenant', { id: 'during' });
    // The servers come back while the change waits.
    second!.start();
    third!.start();
    const answered = await change;
    expect(answered.status, answered.text).toBe(201);
    console.info(JSON.stringify({ answeredAfterMs: Date.now() - asked }));
    expect((await admin('GET', '/tenant/during')).status).toBe(200);
  }, 120_000);
});
