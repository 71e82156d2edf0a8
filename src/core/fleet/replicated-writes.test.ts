import { describe, expect, it } from 'vitest';
import { AppError } from '../app-error.js';
import type { ChangeRecord } from '../events/change-record.js';
import { createChangeTap } from './change-tap.js';
import {
  configKeyName,
  configKeyOf,
  type ConfigBucket,
  type ConfigEntry,
  type ConfigKey,
  type ConfigRows,
  type ConfigValue,
  suppressionKeys,
} from './config-replica.js';
import { conflict, createReplicatedWrites, replicateMethods, unavailable } from './replicated-writes.js';

type Rows = Record<string, unknown>[];

/** This node's store, as a map of key name -> rows, with the revisions applied. */
function fakeRows() {
  let objects = new Map<string, Rows>();
  const revisions = new Map<string, number>();
  const applied: ConfigEntry[] = [];
  const rows: ConfigRows = {
    dryRun(fn) {
      const before = new Map(objects);
      try {
        return fn();
      } finally {
        objects = before;
      }
    },
    read: (key) => objects.get(configKeyName(key)) ?? null,
    appliedRevision: (key) => revisions.get(configKeyName(key)) ?? null,
    lastRevision: () => Math.max(0, ...revisions.values()),
    apply(entry) {
      const name = configKeyName(entry.key);
      if ((revisions.get(name) ?? 0) >= entry.revision) return false;
      if (entry.value.rows === null) objects.delete(name);
      else objects.set(name, entry.value.rows);
      revisions.set(name, entry.revision);
      applied.push(entry);
      return true;
    },
  };
  return {
    rows,
    applied,
    put: (key: ConfigKey, value: Rows) => objects.set(configKeyName(key), value),
    get: (key: ConfigKey) => objects.get(configKeyName(key)),
  };
}

/** The bucket: one revision counter, compare-and-set as JetStream does it. */
function fakeBucket(options: { failWith?: AppError } = {}) {
  let revision = 0;
  const latest = new Map<string, number>();
  const writes: Array<{ key: string; value: ConfigValue; expected: number | null }> = [];
  const bucket: ConfigBucket = {
    async write(key, value, expected) {
      if (options.failWith !== undefined) throw options.failWith;
      const name = configKeyName(key);
      if ((latest.get(name) ?? null) !== expected) throw conflict(key);
      writes.push({ key: name, value, expected });
      revision += 1;
      latest.set(name, revision);
      return revision;
    },
  };
  return { bucket, writes, bumpElsewhere: (key: ConfigKey) => latest.set(configKeyName(key), (revision += 1)) };
}

const ACME: ConfigKey = { kind: 'tenant', tenantId: 'acme' };

function setup(options: { available?: boolean; failWith?: AppError } = {}) {
  const store = fakeRows();
  const bucket = fakeBucket(options);
  const recorded: ChangeRecord[] = [];
  const tap = createChangeTap({ record: (change) => recorded.push(change) });
  const writes = createReplicatedWrites({
    rows: store.rows,
    bucket: bucket.bucket,
    tap,
    nodeId: 'n1',
    available: () => options.available ?? true,
    applied: () => undefined,
  });
  const change = (data: Record<string, unknown>): ChangeRecord => ({
    eventId: `e-${recorded.length + 1}`,
    occurredAt: 1,
    actor: 'admin',
    command: 'tenant.update',
    tenantId: 'acme',
    aggregateType: 'tenant',
    aggregateId: 'acme',
    eventType: 'tenant.updated',
    eventVersion: 1,
    data,
    correlationId: null,
  });
  /** A use-case as the services are: it writes its rows and records its change. */
  const rename = (name: string) => () => {
    store.put(ACME, [{ id: 'acme', name }]);
    tap.record(change({ name }));
    return { renamed: name };
  };
  return { store, bucket, recorded, writes, rename, tap };
}

describe('replicated configuration writes', () => {
  it('writes a new object to the bucket with create, then applies it here naming this node; answers what the use-case answered', async () => {
    const s = setup();
    await expect(s.writes.run(s.rename('Acme'))).resolves.toEqual({ renamed: 'Acme' });
    expect(s.bucket.writes).toEqual([
      {
        key: 'tenant.acme',
        expected: null,
        value: {
          rows: [{ id: 'acme', name: 'Acme' }],
          origin: 'n1',
          changes: [expect.objectContaining({ node: 'n1' })],
        },
      },
    ]);
    expect(s.store.applied.map((entry) => [configKeyName(entry.key), entry.revision])).toEqual([['tenant.acme', 1]]);
    expect(s.store.get(ACME)).toEqual([{ id: 'acme', name: 'Acme' }]);
    // The dry run's change is learned, not written: the store writes it as it applies the entry.
    expect(s.recorded).toEqual([]);
  });

  it('edits with compare-and-set on the revision this node last applied', async () => {
    const s = setup();
    await s.writes.run(s.rename('Acme'));
    await s.writes.run(s.rename('Acme Ltd'));
    expect(s.bucket.writes.map((write) => write.expected)).toEqual([null, 1]);
    expect(s.store.get(ACME)).toEqual([{ id: 'acme', name: 'Acme Ltd' }]);
  });

  it('answers CONFIG_CONFLICT and changes nothing here when another node wrote the object first', async () => {
    const s = setup();
    await s.writes.run(s.rename('Acme'));
    s.bucket.bumpElsewhere(ACME);
    await expect(s.writes.run(s.rename('Mine'))).rejects.toMatchObject({
      code: 'CONFIG_CONFLICT',
      details: { key: 'tenant.acme' },
    });
    expect(s.store.get(ACME)).toEqual([{ id: 'acme', name: 'Acme' }]);
  });

  it('never sends a refused request to the bucket, and leaves the store as it was', async () => {
    const s = setup();
    const invalid = () => {
      s.store.put(ACME, [{ id: 'acme', name: 'half written' }]);
      throw new AppError('VALIDATION_FAILED', 'bad');
    };
    await expect(s.writes.run(invalid)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(s.bucket.writes).toEqual([]);
    expect(s.store.get(ACME)).toBeUndefined();
  });

  it('refuses with FLEET_UNAVAILABLE, running nothing, while the cluster is away or when the bucket cannot be written', async () => {
    const away = setup({ available: false });
    let ran = false;
    await expect(away.writes.run(() => (ran = true))).rejects.toMatchObject({
      code: 'FLEET_UNAVAILABLE',
      transient: true,
    });
    expect(ran).toBe(false);

    const failing = setup({ failWith: unavailable(new Error('timeout')) });
    await expect(failing.writes.run(failing.rename('Acme'))).rejects.toMatchObject({ code: 'FLEET_UNAVAILABLE' });
    expect(failing.store.get(ACME)).toBeUndefined();
  });

  it('wraps only the named methods of a service', async () => {
    const s = setup();
    const service = { rename: s.rename('Wrapped'), read: () => 'plain' };
    const shared = replicateMethods(service, ['rename'], s.writes);
    expect(shared.read()).toBe('plain');
    await expect(shared.rename()).resolves.toEqual({ renamed: 'Wrapped' });
    expect(s.bucket.writes).toHaveLength(1);
  });
});

describe('configuration keys', () => {
  const base = { tenantId: 'acme' };
  it('names each object by a bucket key, identifiers as they are and anything else in hex', () => {
    expect(configKeyOf({ ...base, aggregateType: 'tenant', aggregateId: 'acme' })).toEqual({
      kind: 'tenant',
      tenantId: 'acme',
    });
    expect(configKeyName(configKeyOf({ ...base, aggregateType: 'account', aggregateId: 'acme/main' })!)).toBe(
      'account.acme.main',
    );
    expect(configKeyName(configKeyOf({ ...base, aggregateType: 'account', aggregateId: 'acme/a@b.c' })!)).toBe(
      'account.acme.=6140622e63',
    );
    // A suppression is named by its address's digest, never by the address.
    expect(configKeyOf({ ...base, aggregateType: 'suppression', aggregateId: 'acme/a3f09c1b27d4e6a5b8c90' })).toEqual({
      kind: 'suppression',
      tenantId: 'acme',
      digest: 'a3f09c1b27d4e6a5b8c90',
    });
    expect(
      configKeyName(configKeyOf({ ...base, aggregateType: 'suppression', aggregateId: 'acme/a3f09c1b27d4e6a5b8c90' })!),
    ).toBe('suppression.acme.a3f09c1b27d4e6a5b8c90');
    // A tenant's suspensions are one object: activating `*` clears them all at once.
    expect(configKeyName(configKeyOf({ ...base, aggregateType: 'suspension', aggregateId: 'acme' })!)).toBe(
      'suspension.acme',
    );
  });

  it('treats message commands as not configuration', () => {
    expect(configKeyOf({ ...base, aggregateType: 'message', aggregateId: 'acme' })).toBeNull();
  });

  it('reads a suppression key back, and tells the keys from before digests (the address itself) apart', () => {
    const name = configKeyName({ kind: 'suppression', tenantId: 'ac.me', digest: 'a3f09c1b27d4e6a5b8c90' });
    expect(suppressionKeys.parse(name)).toEqual({ tenantId: 'ac.me', digest: 'a3f09c1b27d4e6a5b8c90' });
    // As an earlier version named it: the address in hex.
    const legacy = `suppression.acme.${suppressionKeys.lastSegment('ann@example.net')}`;
    expect(legacy).toBe('suppression.acme.=616e6e406578616d706c652e6e6574');
    expect(suppressionKeys.parse(legacy)).toEqual({ tenantId: 'acme', digest: null });
    expect(suppressionKeys.parse('account.acme.main')).toBeNull();
    expect(suppressionKeys.parse('suppression.acme.=zz')).toBeNull();
    expect(suppressionKeys.filter('ac.me')).toBe('suppression.=61632e6d65.*');
    expect(suppressionKeys.filter(null, 'a3f09c1b27d4e6a5b8c90')).toBe('suppression.*.a3f09c1b27d4e6a5b8c90');
  });
});

describe('change tap', () => {
  it('passes changes on outside a capture and withholds them inside one', () => {
    const written: string[] = [];
    const tap = createChangeTap({ record: (change) => written.push(change.eventId) });
    tap.record({ eventId: 'outside' } as ChangeRecord);
    const { result, changes } = tap.capture(() => {
      tap.record({ eventId: 'inside' } as ChangeRecord);
      return 42;
    });
    expect(result).toBe(42);
    expect(changes.map((change) => change.eventId)).toEqual(['inside']);
    expect(written).toEqual(['outside']);
  });
});
