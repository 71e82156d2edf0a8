/**
 * The store's size against its cap and whether it refuses writes, and the PEC
 * messages still waiting for their acceptance receipt, read at scrape time.
 */
import { Gauge, type Registry } from 'prom-client';

/** The store's writes (GET /status `store`): refused now or not, size against the cap. */
export interface StoreUsage {
  state: 'ok' | 'refusing';
  used_bytes: number;
  max_bytes: number | null;
}

/** The body store of large bodies (GET /status `body_store`); absent without one (fleet mode, backend `database`). */
export interface BodyStoreUsage {
  failing: boolean;
  objectsToRemove: number;
}

export function registerStoreGauges(
  registers: Registry[],
  store: () => StoreUsage | undefined,
  pecAwaiting: () => number | undefined,
  bodyStore: () => BodyStoreUsage | null | undefined,
): void {
  // A full database refuses intake: the alert is on its size against the cap, before it is.
  const storeGauge = (name: string, help: string, value: (status: StoreUsage) => number | null): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const status = store();
        const v = status === undefined ? null : value(status);
        if (v !== null) this.set(v);
      },
    });
  };
  storeGauge(
    'mailproxy_store_used_bytes',
    'Bytes of the database in use (its free pages excluded)',
    (s) => s.used_bytes,
  );
  storeGauge(
    'mailproxy_store_max_bytes',
    'The max_database_mb cap in bytes (absent when uncapped)',
    (s) => s.max_bytes,
  );
  storeGauge(
    'mailproxy_store_refusing_writes',
    '1 from a write the store refused (full, locked) until the next commit succeeds',
    (s) => (s.state === 'refusing' ? 1 : 0),
  );

  const bodyStoreGauge = (name: string, help: string, value: (usage: BodyStoreUsage) => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const usage = bodyStore();
        if (usage !== null && usage !== undefined) this.set(value(usage));
      },
    });
  };
  // Large mail is refused while the body store fails: the alert is on it.
  bodyStoreGauge(
    'mailproxy_body_store_failing',
    '1 from a failed operation of the body store of large bodies until one succeeds (large mail is refused meanwhile)',
    (usage) => (usage.failing ? 1 : 0),
  );
  bodyStoreGauge(
    'mailproxy_body_store_objects_to_remove',
    'Objects of the body store no message needs any more (their keys destroyed), waiting to be removed from it',
    (usage) => usage.objectsToRemove,
  );

  new Gauge({
    name: 'mailproxy_pec_awaiting_acceptance',
    help: 'Messages relayed through PEC accounts still waiting for their acceptance receipt',
    registers,
    collect() {
      const awaiting = pecAwaiting();
      if (awaiting !== undefined) this.set(awaiting);
    },
  });
}
