import type { KvEntry } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import { configEntryOf } from './config-bucket.js';

describe('bucket entries as a node applies them', () => {
  const marker = (key: string, operation: 'DEL' | 'PURGE'): KvEntry =>
    ({ key, operation, revision: 9, value: new Uint8Array(), bucket: 'b', created: new Date(), delta: 0 }) as KvEntry;

  it('applies a suppression key purged (an erasure) as its removal, so that every node drops its copy', () => {
    expect(configEntryOf(marker('suppression.acme.a3f09c1b27d4e6a5b8c90', 'PURGE'))).toEqual({
      key: { kind: 'suppression', tenantId: 'acme', digest: 'a3f09c1b27d4e6a5b8c90' },
      revision: 9,
      value: { rows: null, origin: '', changes: [] },
    });
    expect(configEntryOf(marker('suppression.acme.a3f09c1b27d4e6a5b8c90', 'DEL'))?.value.rows).toBeNull();
  });

  it('passes over other keys deleted, and suppression keys from before digests', () => {
    expect(configEntryOf(marker('tenant.acme', 'PURGE'))).toBeNull();
    expect(configEntryOf(marker('suppression.acme.=616e6e406578616d706c652e6e6574', 'PURGE'))).toBeNull();
  });
});
