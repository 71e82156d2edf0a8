/**
 * What the instance is and how its accounts stand: `mailproxy_build_info`
 * (always 1; the labels carry the version, for dashboards and for alerts on
 * mixed versions) and the paused accounts per tenant, read at scrape time.
 */
import { Gauge, type Registry } from 'prom-client';

export interface BuildInfo {
  /** package.json's version; `unknown` when the caller does not know it. */
  version: string;
  /** The Node.js version the daemon runs on (process.version). */
  node: string;
}

export function registerInstanceGauges(
  registers: Registry[],
  build: BuildInfo,
  paused: () => Array<{ tenantId: string; paused: number }>,
): void {
  new Gauge({
    name: 'mailproxy_build_info',
    help: 'Always 1; the labels say which mailproxy version runs on which Node.js',
    labelNames: ['version', 'node'],
    registers,
  }).set({ version: build.version, node: build.node }, 1);

  new Gauge({
    name: 'mailproxy_accounts_paused',
    help: 'Accounts paused after their relay refused the account itself (authentication, TLS), per tenant; saving the account resumes it',
    labelNames: ['tenant_id'],
    registers,
    collect() {
      this.reset();
      for (const row of paused()) this.set({ tenant_id: row.tenantId }, row.paused);
    },
  });
}
