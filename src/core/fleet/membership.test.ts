import { describe, expect, it } from 'vitest';
import { fleetView, nodeIdClaim, type NodeBeat, type NodeSighting } from './membership.js';

const beat = (node_id: string, extra: Partial<NodeBeat> = {}): NodeBeat => ({
  node_id,
  instance: `dir-${node_id}`,
  state: 'active',
  started_at: 0,
  version: '1',
  ...extra,
});
const seen = (node_id: string, seenAt: number, extra: Partial<NodeBeat> = {}): NodeSighting => ({
  beat: beat(node_id, extra),
  seenAt,
});

describe('fleetView', () => {
  it('names a node whose heartbeat is older than the timeout as missing, and a cleanly stopped one as stopped', () => {
    const view = fleetView(
      'n1',
      true,
      [seen('n3', 1_000), seen('n1', 9_500), seen('n2', 2_000, { state: 'stopped' })],
      10_000,
      5_000,
    );
    expect(view.nodes.map((node) => [node.node_id, node.liveness, node.seen_ms_ago])).toEqual([
      ['n1', 'alive', 500],
      ['n2', 'stopped', 8_000],
      ['n3', 'missing', 9_000],
    ]);
    expect(view.alive).toBe(1);
    expect(view.missing).toEqual(['n3']);
  });

  it('names a drained node as left, never missing, however long it has been silent; a draining one is still alive', () => {
    const view = fleetView(
      'n1',
      true,
      [seen('n1', 9_500), seen('n2', 1_000, { state: 'drained' }), seen('n3', 9_000, { state: 'draining' })],
      10_000,
      5_000,
    );
    expect(view.nodes.map((node) => [node.node_id, node.liveness])).toEqual([
      ['n1', 'alive'],
      ['n2', 'left'],
      ['n3', 'alive'],
    ]);
    expect(view.missing).toEqual([]);
    expect(view.alive).toBe(2);
  });

  it('reads a heartbeat exactly at the timeout as alive', () => {
    expect(fleetView('n1', true, [seen('n2', 5_000)], 10_000, 5_000).nodes[0]?.liveness).toBe('alive');
  });
});

describe('nodeIdClaim', () => {
  it('lets a node take a free id, its own id again, or the id of a node that went silent or stopped', () => {
    expect(nodeIdClaim(null, 'dir-a', 0, 5_000).ok).toBe(true);
    expect(nodeIdClaim(seen('n1', 9_000, { instance: 'dir-a' }), 'dir-a', 10_000, 5_000).ok).toBe(true);
    expect(nodeIdClaim(seen('n1', 1_000, { instance: 'dir-b' }), 'dir-a', 10_000, 5_000).ok).toBe(true);
    expect(nodeIdClaim(seen('n1', 9_000, { instance: 'dir-b', state: 'stopped' }), 'dir-a', 10_000, 5_000).ok).toBe(
      true,
    );
  });

  it('refuses an id another live data directory holds', () => {
    expect(nodeIdClaim(seen('n1', 9_000, { instance: 'dir-b' }), 'dir-a', 10_000, 5_000)).toEqual({
      ok: false,
      holder: beat('n1', { instance: 'dir-b' }),
    });
  });
});
