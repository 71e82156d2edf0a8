/**
 * A real store on a temp file for the mirror's tests: the mirror on, and
 * `count` admin events (tenant.updated, `data.index` their order) waiting to be
 * published, each of the tenant `tenantOf` names. `remove()` closes it and
 * deletes the file.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomIds } from '../../src/runtime/index.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite-store.js';

export function storeWithAdminEvents(
  name: string,
  count: number,
  tenantOf: (index: number) => string,
): { store: SqliteStore; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `mailproxy-${name}-`));
  const store = createSqliteStore({
    path: join(dir, 'db.sqlite'),
    secrets: createAesGcmSecretBox(randomBytes(32)),
    bodies: createBodySeal([keyEncryptionKey(randomBytes(32))]),
    blindIndex: () => createBlindIndex(randomBytes(32)),
    ids: randomIds,
    now: Date.now,
  });
  store.mirror.turnOn();
  store.transaction(() => {
    for (let index = 0; index < count; index += 1) {
      const tenantId = tenantOf(index);
      store.changes.record({
        eventId: randomIds.uuid(),
        occurredAt: Date.now(),
        actor: 'admin',
        command: 'test',
        tenantId,
        aggregateType: 'tenant',
        aggregateId: tenantId,
        eventType: 'tenant.updated',
        eventVersion: 1,
        data: { index },
        correlationId: null,
      });
    }
  });
  return {
    store,
    remove() {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
