/**
 * Which fleet node a data directory is: `fleet-node.json`, written the first
 * time the directory runs in fleet mode. Its queue holds that node's mail, so
 * the directory keeps its node id for life: started under another id it
 * refuses, rather than mixing two nodes' mail under one name. The random
 * `instance` tells this directory from another one claiming the same id.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeIdentityCodec, type NodeIdentity } from './link-wire-schemas.js';

export const IDENTITY_FILE = 'fleet-node.json';
const NEWLINE = Buffer.from('\n');

export type { NodeIdentity } from './link-wire-schemas.js';

/** The data directory belongs to another node id (`code` is stable; the message says what to do). */
export class NodeIdMismatch extends Error {
  readonly code = 'FLEET_NODE_ID_MISMATCH';

  constructor(
    readonly configured: string,
    readonly recorded: string,
  ) {
    super(
      `this data directory is fleet node "${recorded}", not "${configured}": set fleet.node_id = "${recorded}", or give node "${configured}" its own data_dir`,
    );
    this.name = 'NodeIdMismatch';
  }
}

export function loadNodeIdentity(dataDir: string, nodeId: string): NodeIdentity {
  const file = join(dataDir, IDENTITY_FILE);
  if (existsSync(file)) {
    const recorded = nodeIdentityCodec.decode(readFileSync(file));
    if (recorded.node_id !== nodeId) throw new NodeIdMismatch(nodeId, recorded.node_id);
    return recorded;
  }
  const identity = { node_id: nodeId, instance: randomUUID() };
  // Written whole or not at all: a crash mid-write must not leave a directory without its identity.
  writeFileSync(`${file}.tmp`, Buffer.concat([nodeIdentityCodec.encode(identity), NEWLINE]), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  return identity;
}
