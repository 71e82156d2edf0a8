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

export function registerStoreGauges(
  registers: Registry[],
  store: () => StoreUsage | undefined,
  pecAwaiting: () => number | undefined,
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
