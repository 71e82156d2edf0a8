/**
 * Erasure in fleet mode on real peers (a three-server NATS cluster, `mailproxy
 * serve` processes sharing one secret key): the shared configuration bucket
 * keeps nothing of an erased suppression. Added on one node and erased through
 * another, it leaves neither a key nor any history in the bucket (its value is
 * the address sealed with the fleet's shared secret: only the purge marker may
 * stay); a node that was down during the erasure drops its own copy when it is
 * back and offers nothing back, nor does a node after a restart; keys from
 * before digests (the address in clear) go at a node's start.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  provisionTenant,
  startFleet,
  untilFleet,
  untilOrExplain,
  fleetAdmin,
  withClusterConnection,
  type TestFleet,
} from '../helpers/fleet.js';

const TENANT = 'acme';
const CONFIG_BUCKET = 'mailproxy_fleet_config';

let fleet: TestFleet;

const admin = fleetAdmin;
const nodeOf = (id: string) => fleet.nodes.find((node) => node.id === id)!;
const until = (check: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000) =>
  untilOrExplain(fleet, check, what, timeoutMs);

const withCluster = <T>(use: (nc: NatsConnection) => Promise<T>): Promise<T> => withClusterConnection(fleet, use);

beforeAll(async () => {
  fleet = await startFleet(['n1', 'n2', 'n3']);
  // The account is never used: no mail is sent here.
  await provisionTenant(fleet, TENANT, { host: '127.0.0.1', port: 9, tls_mode: 'none' });
}, 120_000);

afterAll(async () => {
  await fleet?.destroy();
});

/** The bucket's live suppression keys, and every message its stream still holds for `name`. */
async function bucketOf(
  name: string,
): Promise<{ keys: string[]; history: Array<{ operation: string; value: string }> }> {
  return withCluster(async (nc) => {
    const kv = await new Kvm(nc).open(CONFIG_BUCKET);
    const keys: string[] = [];
    for await (const found of await kv.keys('suppression.>')) keys.push(found);
    const history: Array<{ operation: string; value: string }> = [];
    for await (const entry of await kv.history({ key: name }))
      history.push({ operation: entry.operation, value: Buffer.from(entry.value).toString('latin1') });
    return { keys, history };
  });
}

describe('the shared configuration bucket', () => {
  it('keeps no entry of an erased suppression: not after a restart, not from a node that missed the erasure', async () => {
    const SUE = 'sue.private@erase.example';
    const LEGACY = 'old.private@erase.example';
    const n2 = nodeOf('n2');
    const added = await admin(nodeOf('n1').url, 'POST', '/suppression', {
      tenant_id: TENANT,
      address: SUE,
      reason: 'asked to be removed',
    });
    expect(added.status, added.text).toBe(201);
    const name = `suppression.${TENANT}.${added.body.suppression.digest as string}`;
    const listed = (id: string, address: string) =>
      admin(nodeOf(id).url, 'GET', `/suppressions?tenant_id=${TENANT}&address=${encodeURIComponent(address)}`).then(
        (page) => (page.body.suppressions as unknown[]).length,
      );
    for (const id of ['n2', 'n3']) await until(async () => (await listed(id, SUE)) === 1, `${id} to hold Sue’s entry`);
    expect((await bucketOf(name)).history.map((entry) => entry.operation)).toEqual(['PUT']);
    // A key as a version before digests wrote it: the address itself.
    const legacyName = `suppression.${TENANT}.=${Buffer.from(LEGACY).toString('hex')}`;
    await withCluster(async (nc) => {
      const kv = await new Kvm(nc).open(CONFIG_BUCKET);
      const legacy = { key: { kind: 'suppression', tenantId: TENANT, address: LEGACY }, rows: [], origin: 'n0' };
      await kv.put(legacyName, JSON.stringify({ ...legacy, changes: [] }));
    });

    // n2 is down while n3 erases Sue: n2 keeps its copy until it is back.
    n2.daemon.child.kill('SIGTERM');
    expect((await n2.daemon.exited).code).toBe(0);
    const erased = await admin(nodeOf('n3').url, 'POST', '/commands/erase', { tenant_id: TENANT, address: SUE });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toMatchObject({ shared_suppressions: 1 });
    const gone = async () => {
      const { keys, history } = await bucketOf(name);
      expect(keys).not.toContain(name);
      // No value left, only the marker that tells the nodes: the sealed address is nowhere in the stream.
      expect(history.map((entry) => entry.operation)).toEqual(['PURGE']);
      expect(history.every((entry) => entry.value === '')).toBe(true);
    };
    await gone();
    expect(await listed('n1', SUE)).toBe(0);

    // Back on its disk, n2 drops its copy (and does not offer it back); its start removes the key from before digests.
    await fleet.startNode('n2', { cwd: n2.cwd });
    await until(async () => (await listed('n2', SUE)) === 0, 'n2 to drop Sue’s entry');
    await until(
      async () => (await bucketOf(legacyName)).history.every((entry) => entry.operation !== 'PUT'),
      'n2’s start to remove the key from before digests',
    );
    await gone();
    // Restarted, a node offers nothing back either.
    const n1 = nodeOf('n1');
    n1.daemon.child.kill('SIGTERM');
    expect((await n1.daemon.exited).code).toBe(0);
    const again = await fleet.startNode('n1', { cwd: n1.cwd });
    await untilFleet(again.url, (seen) => seen.alive === 3, 'n1 to see three live nodes');
    await gone();
    for (const id of ['n1', 'n2', 'n3']) expect(await listed(id, SUE)).toBe(0);
  }, 240_000);
});
